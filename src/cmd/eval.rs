//! `ozcheck eval`: evaluates one CEL filter over one event file with the metered evaluator and
//! reports the value, the cost charged and the static estimate, or why the evaluation stopped.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::{Duration, Instant};

use clap::{Args, ValueEnum};
use ozcheck_analyzer::cost::group;
use ozcheck_analyzer::eval::{Event, Limits, Program, SystemClock};
use ozcheck_analyzer::syntax::{self, ParseOptions};
use ozcheck_analyzer::{CostRange, Diagnostic, EventBounds, Options, Verdict};

/// Arguments of `ozcheck eval`.
#[derive(Args)]
pub struct EvalArgs {
    /// The expression, CEL over `event`.
    pub expr: String,
    /// The event, a JSON file (`id`, `source`, `type`, `action`, `subject`, `text`, `attributes`).
    #[arg(long, value_name = "FILE")]
    pub event: std::path::PathBuf,
    /// Skip the static check and its estimate.
    #[arg(long)]
    pub no_static_check: bool,
    /// The cost limit in units; 0 disables it so only the deadline stops the evaluation.
    #[arg(long, value_name = "UNITS", default_value_t = ozcheck_analyzer::cost::table::DEFAULT_COST_LIMIT)]
    pub limit: u64,
    /// The wall-clock budget of the evaluation, in milliseconds.
    #[arg(long, value_name = "MS", default_value_t = 250)]
    pub deadline_ms: u64,
    /// Largest `event.text` of the source, in bytes: the event may be no larger, and the static
    /// check estimates for it (as `ozcheck filter --max-text`, so that a witness written at other
    /// bounds replays).
    #[arg(long, value_name = "BYTES", default_value_t = EventBounds::DEFAULT.text)]
    pub max_text: u64,
    /// Largest `event.attributes` of the source (compact JSON), in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = EventBounds::DEFAULT.attributes)]
    pub max_attributes: u64,
    /// Largest header field (`event.id`, `source`, `type`, `action`, `subject`), in bytes.
    #[arg(long, value_name = "BYTES", default_value_t = EventBounds::DEFAULT.header_field)]
    pub max_header: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Full)]
    pub format: Format,
}

/// How the result is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Human-readable lines; diagnostics with source snippets.
    Full,
    /// One JSON object.
    Json,
}

/// The static check run before evaluating: its estimate, or the errors that refuse the filter.
///
/// This is the one place the CLI wires the analyzer's save-time check into `eval`: a refused
/// filter is not evaluated, and an accepted one reports the estimator's range (none until the
/// estimator fills `Report::cost`).
pub fn static_check(
    source: &str,
    limit: u64,
    bounds: EventBounds,
) -> Result<Option<CostRange>, Vec<Diagnostic>> {
    let mut options = Options {
        limit: if limit == 0 { u64::MAX } else { limit },
        ..Options::default()
    };
    options.bounds = bounds;
    let report = ozcheck_analyzer::check_filter(source, &options);
    match report.verdict {
        Verdict::Accepted => Ok(report.cost),
        Verdict::Refused => Err(report
            .diagnostics
            .into_iter()
            .filter(Diagnostic::is_error)
            .collect()),
    }
}

/// Runs the subcommand.
pub fn run(args: &EvalArgs) -> ExitCode {
    let text = match std::fs::read_to_string(&args.event) {
        Ok(text) => text,
        Err(e) => {
            eprintln!("error: cannot read {}: {e}", args.event.display());
            return ExitCode::from(2);
        }
    };
    let bounds = EventBounds {
        text: args.max_text,
        attributes: args.max_attributes,
        header_field: args.max_header,
    };
    let event = match Event::from_json(&text, &bounds) {
        Ok(event) => event,
        Err(e) => {
            eprintln!("error: {}: {e}", args.event.display());
            return ExitCode::from(2);
        }
    };
    let estimate = if args.no_static_check {
        None
    } else {
        match static_check(&args.expr, args.limit, bounds) {
            Ok(estimate) => estimate,
            Err(diagnostics) => return refuse(&args.expr, &diagnostics, args.format),
        }
    };
    let program = match syntax::parse(&args.expr, &ParseOptions::default()).and_then(Program::new) {
        Ok(program) => program,
        Err(diagnostics) => return refuse(&args.expr, &diagnostics, args.format),
    };
    let limits = Limits::default()
        .with_cost((args.limit > 0).then_some(args.limit))
        .with_deadline(Duration::from_millis(args.deadline_ms))
        .with_clock(Arc::new(SystemClock::new()));
    let started = Instant::now();
    let result = program.eval_event(&event, &limits);
    let elapsed_us = started.elapsed().as_micros() as u64;
    match result {
        Ok(done) => {
            match args.format {
                Format::Json => crate::outln!(
                    "{}",
                    ozcheck_analyzer::json::evaluation(&done, estimate, elapsed_us)
                ),
                Format::Full => {
                    crate::outln!("value: {}", done.value);
                    match estimate {
                        Some(e) => crate::outln!(
                            "cost: {} (estimate {}..{})",
                            group(done.cost),
                            group(e.min),
                            group(e.max)
                        ),
                        None => crate::outln!("cost: {}", group(done.cost)),
                    }
                    crate::outln!("elapsed: {} µs", group(elapsed_us));
                }
            }
            ExitCode::SUCCESS
        }
        Err(error) => {
            let kind = ozcheck_analyzer::json::error_kind(&error);
            match args.format {
                Format::Json => crate::outln!("{}", ozcheck_analyzer::json::eval_error(&error)),
                Format::Full => {
                    eprintln!("error[{kind}]: {error}");
                    eprintln!("cost: {}", group(error.cost()));
                }
            }
            ExitCode::from(1)
        }
    }
}

/// Reports the diagnostics that keep the expression from running (a refused filter is not
/// evaluated): exit 1, and in JSON an error of kind `refused` with the diagnostics.
fn refuse(source: &str, diagnostics: &[Diagnostic], format: Format) -> ExitCode {
    match format {
        Format::Json => crate::outln!("{}", ozcheck_analyzer::json::refused(diagnostics)),
        Format::Full => {
            for diagnostic in diagnostics {
                eprint!("{}", crate::render::diagnostic(source, diagnostic));
            }
        }
    }
    ExitCode::from(1)
}
