//! `ozcheck cel-spec`: runs cel-spec conformance records (the JSON-lines format of
//! `corpus/cel-spec`) through the analyzer, prints one line per failure and a summary last.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use ozcheck_analyzer::conformance::{self, Mode, Outcome};

/// Arguments of `ozcheck cel-spec`.
#[derive(Args)]
pub struct CelSpecArgs {
    /// Check parsing only (no type check, no evaluation).
    #[arg(long)]
    pub parse_only: bool,
    /// Print every skipped record with the reason it is out of scope.
    #[arg(long)]
    pub skipped: bool,
    /// JSON-lines files of conformance records.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<PathBuf>,
}

/// Runs the subcommand.
pub fn run(args: &CelSpecArgs) -> ExitCode {
    let mode = if args.parse_only {
        Mode::ParseOnly
    } else {
        Mode::Evaluate
    };
    let (mut passed, mut failed, mut skipped) = (0u64, 0u64, 0u64);
    for path in &args.files {
        let text = match std::fs::read_to_string(path) {
            Ok(text) => text,
            Err(e) => {
                eprintln!("error: cannot read {}: {e}", path.display());
                return ExitCode::from(2);
            }
        };
        for (line_no, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let record: serde_json::Value = match serde_json::from_str(line) {
                Ok(record) => record,
                Err(e) => {
                    crate::outln!(
                        "FAIL {}:{}: not a JSON record: {e}",
                        path.display(),
                        line_no + 1
                    );
                    failed += 1;
                    continue;
                }
            };
            let id = record
                .get("id")
                .and_then(serde_json::Value::as_str)
                .map_or_else(
                    || format!("{}:{}", path.display(), line_no + 1),
                    str::to_owned,
                );
            // A panic is a defect to report, not a reason to lose the rest of the run.
            let outcome = catch_unwind(AssertUnwindSafe(|| conformance::run(&record, mode)))
                .unwrap_or_else(|_| Outcome::Fail("panicked".to_owned()));
            match outcome {
                Outcome::Pass => passed += 1,
                Outcome::Skip(reason) => {
                    if args.skipped {
                        println!("SKIP {id}: {reason}");
                    }
                    skipped += 1;
                }
                Outcome::Fail(reason) => {
                    crate::outln!("FAIL {id}: {reason}");
                    failed += 1;
                }
            }
        }
    }
    // The summary line is the contract on standard output; which mode produced it goes beside.
    eprintln!(
        "mode: {}",
        if args.parse_only {
            "parse only (--parse-only: each record's expression parsed, nothing checked or evaluated)"
        } else {
            "evaluate (each record parsed, checked and evaluated against its expected value)"
        }
    );
    crate::outln!("{passed} passed, {failed} failed, {skipped} skipped");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}
