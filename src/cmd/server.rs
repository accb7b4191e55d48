//! `ozcheck server`: the language server over standard input and output (see
//! `crate::server`). Exit 0 when the client ends the session, 2 when the connection fails.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;

/// Arguments of `ozcheck server` (none: editors start it and talk LSP on its stdio).
#[derive(Args)]
pub struct ServerArgs {}

/// Runs the subcommand.
pub fn run(_args: &ServerArgs) -> ExitCode {
    match crate::server::run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "ozcheck server: {e}");
            ExitCode::from(2)
        }
    }
}
