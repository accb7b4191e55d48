//! `ozcheck filter`: checks one CEL expression and prints a verdict.

use std::process::ExitCode;

use clap::Args;

/// Arguments of `ozcheck filter`.
#[derive(Args)]
pub struct FilterArgs {
    /// The expression (or use --file).
    pub expr: Option<String>,
}

/// Runs the subcommand.
pub fn run(args: &FilterArgs) -> ExitCode {
    let Some(expr) = &args.expr else {
        return ExitCode::from(2);
    };
    let report = ozcheck_analyzer::check_filter(expr, &ozcheck_analyzer::Options::default());
    println!("{:?}", report.verdict);
    ExitCode::SUCCESS
}
