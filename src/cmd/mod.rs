//! One module per subcommand, each with its clap arguments and a `run` that returns the exit code.

pub mod cel_spec;
pub mod conformance;
pub mod eval;
pub mod filter;
pub mod lint;
pub mod rules;
pub mod schema;
pub mod serve;
pub mod server;
pub mod wait_for;
