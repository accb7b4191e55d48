//! One file with many findings rendered in every output format, timed: the figure behind
//! "every format is linear in the findings" (BENCHMARKS.md). `full` used to recount the file's
//! lines for every finding.
//!
//! `cargo run --release -p ozcheck-lint --example render_many -- 5000 [FORMAT]` (one format
//! only when named, for an instruction count under callgrind).

use std::fmt::Write as _;
use std::time::Instant;

use ozcheck_lint::render::{Format, render};
use ozcheck_lint::{FileReport, Finding, SourceFile};

fn main() {
    let count: usize = std::env::args()
        .nth(1)
        .and_then(|n| n.parse().ok())
        .unwrap_or(5000);
    let only = std::env::args().nth(2);
    let mut text = String::from("name: many\n");
    let mut findings = Vec::with_capacity(count);
    for i in 0..count {
        let start = text.len();
        let _ = writeln!(text, "unknown_{i}: value");
        findings.push(
            Finding::new(
                "unknown-key",
                start..start + 9,
                format!("unknown key `unknown_{i}`"),
            )
            .label("not a key of a flow")
            .help("remove it"),
        );
    }
    let report = FileReport {
        source: SourceFile::new("flows/many.yaml", text),
        findings,
    };
    let reports = [report];
    for (name, format) in [
        ("full", Format::Full),
        ("concise", Format::Concise),
        ("json", Format::Json),
        ("sarif", Format::Sarif),
        ("github", Format::Github),
    ] {
        if only.as_deref().is_some_and(|o| o != name) {
            continue;
        }
        let start = Instant::now();
        let out = render(&reports, format, false);
        println!(
            "{name:<8} {count} findings: {:>8.3} s ({} bytes)",
            start.elapsed().as_secs_f64(),
            out.len()
        );
    }
}
