//! `ozcheck serve`: the reference wait runtime over HTTP, on an embedded `SQLite` file (one edge)
//! or on a `PostgreSQL` database that any number of edges share (`--db`).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use ozcheck_runtime::clock::SystemClock;
use ozcheck_runtime::config::Config;
use ozcheck_runtime::serve::{router, timer_loop};
use ozcheck_runtime::store::{PostgresStore, SqliteStore, Store, StoreLocation};
use ozcheck_runtime::{Routing, Runtime};

/// Arguments of `ozcheck serve`.
#[derive(Args)]
pub struct ServeArgs {
    /// The store: an `SQLite` file (`waits.db`, `sqlite://waits.db`; created if missing) for one
    /// edge, or a `PostgreSQL` URL (`postgres://USER@HOST/DATABASE`) that several edges share.
    #[arg(long, default_value = "ozcheck.db")]
    pub db: StoreLocation,
    /// This edge's name among the edges on one `PostgreSQL` database (unique among the live
    /// edges; default: the host name and the listen port).
    #[arg(long)]
    pub edge: Option<String>,
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
    match &args.db {
        StoreLocation::Sqlite(path) => {
            let store = SqliteStore::open(path).await.map_err(|e| e.to_string())?;
            serve_on(Arc::new(store), &Routing::Local, args, config).await
        }
        StoreLocation::Postgres(url) => {
            let store = PostgresStore::connect(url)
                .await
                .map_err(|e| format!("{}: {e}", args.db))?;
            let edge = args
                .edge
                .clone()
                .unwrap_or_else(|| default_edge(&args.listen));
            serve_on(Arc::new(store), &Routing::Shared { edge }, args, config).await
        }
    }
}

async fn serve_on<S: Store>(
    store: Arc<S>,
    routing: &Routing,
    args: &ServeArgs,
    config: Config,
) -> Result<(), String> {
    let rt = Runtime::start_with(store, Arc::new(SystemClock), Arc::new(config), routing)
        .await
        .map_err(|e| e.to_string())?;
    let listener = tokio::net::TcpListener::bind(&args.listen)
        .await
        .map_err(|e| format!("{}: {e}", args.listen))?;
    match routing {
        Routing::Local => eprintln!("ozcheck serve: listening on {}", args.listen),
        Routing::Shared { edge } => eprintln!(
            "ozcheck serve: edge {edge} on {}, listening on {}",
            args.db, args.listen
        ),
    }
    tokio::spawn(timer_loop(rt.clone()));
    axum::serve(listener, router(rt))
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| e.to_string())
}

/// `host:port`: the machine's name (Linux) and the port this edge listens on.
fn default_edge(listen: &str) -> String {
    let host = std::fs::read_to_string("/proc/sys/kernel/hostname")
        .ok()
        .map(|h| h.trim().to_owned())
        .filter(|h| !h.is_empty())
        .or_else(|| std::env::var("HOSTNAME").ok())
        .unwrap_or_else(|| "edge".to_owned());
    let port = listen.rsplit_once(':').map_or(listen, |(_, p)| p);
    format!("{host}:{port}")
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
