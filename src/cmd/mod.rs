//! One module per subcommand, each with its clap arguments and a `run` that returns the exit code.

pub mod filter;
pub mod wait_for;
