//! The `ozcheck` command line as a library: one module per subcommand, plus rendering. The
//! binary (`src/main.rs`) only parses arguments and dispatches; keeping the commands here lets
//! integration tests and benches call them directly.
#![deny(missing_docs)]

pub mod cmd;
pub mod output;
pub mod render;
pub mod server;
