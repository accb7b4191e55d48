//! The `ozcheck` command line: the only place that prints, installs miette's handler, or picks
//! exit codes.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

use ozcheck::cmd;

/// Verifies the policies and filters of agent-platform plugins.
#[derive(Parser)]
#[command(name = "ozcheck", version, about)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Checks a CEL filter: syntax, types, size and worst-case cost.
    Filter(cmd::filter::FilterArgs),
    /// Runs cel-spec conformance records (JSON lines) through the analyzer.
    CelSpec(cmd::cel_spec::CelSpecArgs),
    /// Evaluates a CEL filter over an event with the metered evaluator.
    Eval(cmd::eval::EvalArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Filter(args) => cmd::filter::run(&args),
        Command::CelSpec(args) => cmd::cel_spec::run(&args),
        Command::Eval(args) => cmd::eval::run(&args),
    }
}
