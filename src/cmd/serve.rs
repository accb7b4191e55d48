//! `ozcheck serve`: the reference wait runtime over HTTP with its embedded `SQLite` store.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use ozcheck_runtime::Runtime;
use ozcheck_runtime::clock::SystemClock;
use ozcheck_runtime::config::Config;
use ozcheck_runtime::serve::{router, timer_loop};
use ozcheck_runtime::store::SqliteStore;

/// Arguments of `ozcheck serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// The `SQLite` database file (created if missing).
    #[arg(long, default_value = "ozcheck.db")]
    pub db: PathBuf,
    /// The address to listen on.
    #[arg(long, default_value = "127.0.0.1:8080")]
    pub listen: String,
    /// A YAML file with `sources`, `routines` and `flows`.
    #[arg(long)]
    pub config: Option<PathBuf>,
}

fn load_config(path: Option<&PathBuf>) -> Result<Config, String> {
    let Some(path) = path else {
        return Ok(Config::default());
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    yaml_serde::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
}

async fn serve(args: &ServeArgs, config: Config) -> Result<(), String> {
    let store = Arc::new(
        SqliteStore::open(&args.db)
            .await
            .map_err(|e| e.to_string())?,
    );
    let rt = Runtime::start(store, Arc::new(SystemClock), Arc::new(config))
        .await
        .map_err(|e| e.to_string())?;
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .map_err(|e| format!("{}: {e}", args.listen))?;
    eprintln!("ozcheck serve: listening on {}", args.listen);
    tokio::spawn(timer_loop(rt.clone()));
    axum::serve(listener, router(rt))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| e.to_string())
}

/// Runs the server until interrupted; exit 2 on a usage or I/O error.
pub fn run(args: &ServeArgs) -> ExitCode {
    let config = match load_config(args.config.as_ref()) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    let rt = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::from(2);
        }
    };
    match rt.block_on(serve(args, config)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::from(2)
        }
    }
}
