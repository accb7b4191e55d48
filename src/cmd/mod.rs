//! One module per subcommand, each with its clap arguments and a `run` that returns the exit code.

pub mod cel_spec;
#[cfg(feature = "runtime")]
pub mod conformance;
pub mod eval;
pub mod filter;
pub mod lint;
pub mod rules;
#[cfg(not(feature = "runtime"))]
pub mod runtime_missing;
pub mod schema;
#[cfg(feature = "runtime")]
pub mod serve;
pub mod server;
#[cfg(feature = "runtime")]
pub mod wait_for;
