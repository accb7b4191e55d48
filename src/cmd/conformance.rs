//! `ozcheck conformance`: runs wait-conformance scenario files against the reference runtime in
//! process or against any implementation through its JSON-lines adapter; and the hidden
//! `ozcheck conformance-adapter`, the reference runtime's own adapter.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use ozcheck_runtime::conformance::{
    RunOptions, SessionStores, collect, release_schemas, run_file, serve_stdio,
};

/// Arguments of `ozcheck conformance`.
#[derive(Args)]
pub struct ConformanceArgs {
    /// Scenario files or directories (default: corpus/conformance).
    pub paths: Vec<PathBuf>,
    /// An adapter command speaking the JSON-lines protocol (split on whitespace).
    #[arg(long)]
    pub adapter: Option<String>,
    /// Insert a crash-restart between every two steps and expect the same outcome.
    #[arg(long)]
    pub restart_every_step: bool,
    /// The store of the in-process reference runtime: `sqlite` (a temporary file per scenario)
    /// or a `PostgreSQL` URL (a new schema per scenario, dropped after it).
    #[arg(long, default_value = "sqlite")]
    pub db: SessionStores,
}

/// Arguments of `ozcheck conformance-adapter`.
#[derive(Args)]
pub struct AdapterArgs {
    /// The store of each session, as for `ozcheck conformance --db`.
    #[arg(long, default_value = "sqlite")]
    pub db: SessionStores,
}

fn tokio_runtime() -> Option<tokio::runtime::Runtime> {
    match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => Some(rt),
        Err(e) => {
            eprintln!("error: cannot start the async runtime: {e}");
            None
        }
    }
}

/// Runs the scenarios; exit 0 when all passed, 1 when one failed, 2 on a usage or I/O error.
pub fn run(args: &ConformanceArgs) -> ExitCode {
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from("corpus/conformance")]
    } else {
        args.paths.clone()
    };
    let files = match collect(&paths) {
        Ok(files) => files,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let Some(rt) = tokio_runtime() else {
        return ExitCode::from(2);
    };
    let options = RunOptions {
        adapter: args.adapter.clone(),
        restart_every_step: args.restart_every_step,
        stores: args.db.clone(),
    };
    let (mut passed, mut failed) = (0usize, 0usize);
    for file in &files {
        let result = rt.block_on(run_file(file, &options));
        match result.failure {
            None => passed += 1,
            Some(message) => {
                failed += 1;
                crate::outln!("FAIL {} ({}): {message}", result.id, file.display());
            }
        }
    }
    rt.block_on(release_schemas());
    crate::outln!("{passed} passed, {failed} failed");
    if failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    }
}

/// Serves the adapter protocol on stdin/stdout.
pub fn run_adapter(args: &AdapterArgs) -> ExitCode {
    let Some(rt) = tokio_runtime() else {
        return ExitCode::from(2);
    };
    match rt.block_on(serve_stdio(args.db.clone())) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
