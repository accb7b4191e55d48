//! The reference runtime's commands in a build without it (the default build: the feature
//! `runtime` adds them). They stay in `--help` and say how to get them instead of clap's
//! "unrecognized subcommand". Exit 2.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;

/// Whatever arguments were given; none are read.
#[derive(Args)]
pub struct RuntimeArgs {
    /// Ignored: this build has no reference runtime.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, hide = true)]
    pub args: Vec<String>,
}

/// Says that the command needs the `runtime` feature.
pub fn run(command: &str, _args: &RuntimeArgs) -> ExitCode {
    let _ = writeln!(
        std::io::stderr(),
        "ozcheck {command}: this ozcheck was built without the reference runtime; \
build it with `--features runtime` (cargo install --features runtime, or \
cargo run --release --features runtime -- {command} ...): see docs/cli.md"
    );
    ExitCode::from(2)
}
