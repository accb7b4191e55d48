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
    /// Runs wait-conformance scenarios in process or through an adapter.
    Conformance(cmd::conformance::ConformanceArgs),
    /// The reference runtime's conformance adapter (JSON lines on stdin/stdout).
    #[command(hide = true)]
    ConformanceAdapter(cmd::conformance::AdapterArgs),
    /// Runs the reference wait runtime with its embedded store.
    Serve(cmd::serve::ServeArgs),
    /// Lints agent, flow and routine YAML files of a plugin.
    Lint(cmd::lint::LintArgs),
    /// Runs the language server (LSP over standard input and output) for editors.
    Server(cmd::server::ServerArgs),
    /// Lists the lint rules, or documents one.
    Rules(cmd::rules::RulesArgs),
    /// Prints the JSON Schema of a plugin file kind, for editors.
    Schema(cmd::schema::SchemaArgs),
    /// Polls an MCP tool of a server until a condition holds or the bound elapses.
    WaitFor(cmd::wait_for::WaitForArgs),
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Filter(args) => cmd::filter::run(&args),
        Command::CelSpec(args) => cmd::cel_spec::run(&args),
        Command::Eval(args) => cmd::eval::run(&args),
        Command::Conformance(args) => cmd::conformance::run(&args),
        Command::ConformanceAdapter(args) => cmd::conformance::run_adapter(&args),
        Command::Serve(args) => cmd::serve::run(&args),
        Command::Lint(args) => cmd::lint::run(&args),
        Command::Server(args) => cmd::server::run(&args),
        Command::Rules(args) => cmd::rules::run(&args),
        Command::Schema(args) => cmd::schema::run(&args),
        Command::WaitFor(args) => cmd::wait_for::run(&args),
    }
}
