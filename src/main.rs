//! The `ozcheck` command line: the only place that prints, installs miette's handler, or picks
//! exit codes.

use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod cmd;

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
    /// Polls an MCP tool of a server until a condition holds or the bound elapses.
    WaitFor(cmd::wait_for::WaitForArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Filter(args) => cmd::filter::run(&args),
        Command::WaitFor(args) => cmd::wait_for::run(&args),
    }
}
