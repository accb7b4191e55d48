//! The `ozcheck` command line as a library: its arguments and dispatch (`cli`), one module per
//! subcommand, plus rendering. The binary (`src/main.rs`) only calls `cli::run`; keeping the commands here lets
//! integration tests and benches call them directly.
#![deny(missing_docs)]

pub mod cli;
pub mod cmd;
pub mod output;
pub mod render;
pub mod server;
