//! The command line's arguments and dispatch, as a library call: the cargo binary
//! (`src/main.rs`) and the Python package's `ozcheck` command (`python/`) both call [`run`], so
//! the two print the same bytes and exit with the same status.

use std::ffi::OsString;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::cmd;

/// Verifies the policies and filters of agent-platform plugins.
///
/// The flags, exit codes and JSON fields scripts rely on are in docs/cli.md.
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
    #[cfg(feature = "runtime")]
    Conformance(cmd::conformance::ConformanceArgs),
    /// Runs wait-conformance scenarios in process or through an adapter (needs the `runtime` feature).
    #[cfg(not(feature = "runtime"))]
    Conformance(cmd::runtime_missing::RuntimeArgs),
    /// The reference runtime's conformance adapter (JSON lines on stdin/stdout).
    #[cfg(feature = "runtime")]
    ConformanceAdapter(cmd::conformance::AdapterArgs),
    /// The reference runtime's conformance adapter (JSON lines on stdin/stdout) (needs the `runtime` feature).
    #[cfg(not(feature = "runtime"))]
    ConformanceAdapter(cmd::runtime_missing::RuntimeArgs),
    /// Runs the reference wait runtime with its embedded store.
    #[cfg(feature = "runtime")]
    Serve(cmd::serve::ServeArgs),
    /// Runs the reference wait runtime with its embedded store (needs the `runtime` feature).
    #[cfg(not(feature = "runtime"))]
    Serve(cmd::runtime_missing::RuntimeArgs),
    /// Lints agent, flow and routine YAML files of a plugin.
    Lint(cmd::lint::LintArgs),
    /// Runs the language server (LSP over standard input and output) for editors.
    Server(cmd::server::ServerArgs),
    /// Lists the lint rules, or documents one.
    Rules(cmd::rules::RulesArgs),
    /// Prints the JSON Schema of a plugin file kind, for editors.
    Schema(cmd::schema::SchemaArgs),
    /// Polls an MCP tool of a server until a condition holds or the bound elapses.
    #[cfg(feature = "runtime")]
    WaitFor(cmd::wait_for::WaitForArgs),
    /// Polls an MCP tool of a server until a condition holds or the bound elapses (needs the `runtime` feature).
    #[cfg(not(feature = "runtime"))]
    WaitFor(cmd::runtime_missing::RuntimeArgs),
}

/// Parses `args` (the first is the program's name, as in `std::env::args_os`) and runs the
/// command. Argument errors, `--help` and `--version` print and end the process as clap does.
pub fn run<I, T>(args: I) -> ExitCode
where
    I: IntoIterator<Item = T>,
    T: Into<OsString> + Clone,
{
    let cli = Cli::parse_from(args);
    match cli.command {
        Command::Filter(args) => cmd::filter::run(&args),
        Command::CelSpec(args) => cmd::cel_spec::run(&args),
        Command::Eval(args) => cmd::eval::run(&args),
        #[cfg(feature = "runtime")]
        Command::Conformance(args) => cmd::conformance::run(&args),
        #[cfg(not(feature = "runtime"))]
        Command::Conformance(args) => cmd::runtime_missing::run("conformance", &args),
        #[cfg(feature = "runtime")]
        Command::ConformanceAdapter(args) => cmd::conformance::run_adapter(&args),
        #[cfg(not(feature = "runtime"))]
        Command::ConformanceAdapter(args) => {
            cmd::runtime_missing::run("conformance-adapter", &args)
        }
        #[cfg(feature = "runtime")]
        Command::Serve(args) => cmd::serve::run(&args),
        #[cfg(not(feature = "runtime"))]
        Command::Serve(args) => cmd::runtime_missing::run("serve", &args),
        Command::Lint(args) => cmd::lint::run(&args),
        Command::Server(args) => cmd::server::run(&args),
        Command::Rules(args) => cmd::rules::run(&args),
        Command::Schema(args) => cmd::schema::run(&args),
        #[cfg(feature = "runtime")]
        Command::WaitFor(args) => cmd::wait_for::run(&args),
        #[cfg(not(feature = "runtime"))]
        Command::WaitFor(args) => cmd::runtime_missing::run("wait-for", &args),
    }
}

/// The number an [`ExitCode`] carries. `ExitCode` keeps it private (and `exit_process` is not
/// stable), but it compares by value: a host that must hand the status on as a number (the
/// Python package's console script) finds it among the 256 a process can exit with.
pub fn status(code: ExitCode) -> u8 {
    (0..=u8::MAX)
        .find(|n| ExitCode::from(*n) == code)
        .unwrap_or(1)
}
