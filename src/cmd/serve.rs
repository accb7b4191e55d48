//! `ozcheck serve`: the reference wait runtime over HTTP, on an embedded `SQLite` file (one edge)
//! or on a `PostgreSQL` database that any number of edges share (`--db`). The configuration's
//! `secret_env` are read from the environment; the runtime's log lines go to stderr through
//! `tracing`; SIGTERM or Ctrl-C stop it gracefully (readiness turns 503, the requests in flight
//! finish, the store is closed so no `-wal` file is left behind).

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use ozcheck_runtime::clock::SystemClock;
use ozcheck_runtime::config::Config;
use ozcheck_runtime::serve::{Api, api_router, timer_loop};
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
    /// A YAML file with `sources`, `routines` and `flows` (corpus/serve/example.yaml is one).
    #[arg(long)]
    pub config: Option<PathBuf>,
}

fn load_config(path: Option<&PathBuf>) -> Result<Config, String> {
    let Some(path) = path else {
        return Ok(Config::default());
    };
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut config: Config =
        yaml_serde::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    config
        .resolve_secrets(|var| std::env::var(var).ok())
        .map_err(|e| format!("{}: {e}", path.display()))?;
    ozcheck_runtime::configure::check(&config)
        .map_err(|e| format!("{}: [{}] {e}", path.display(), e.code()))?;
    Ok(config)
}

/// Resolves when the process gets SIGTERM or Ctrl-C.
async fn stop_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let term = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {}
        () = term => {}
    }
}

async fn serve(args: &ServeArgs, config: Config) -> Result<(), String> {
    for warning in config.warnings() {
        tracing::warn!(target: "ozcheck_runtime", "{warning}");
    }
    match &args.db {
        StoreLocation::Sqlite(path) => {
            let store = Arc::new(SqliteStore::open(path).await.map_err(|e| e.to_string())?);
            let served = serve_on(store.clone(), &Routing::Local, args, config).await;
            store.close().await;
            tracing::info!(target: "ozcheck_runtime", "stopped; the store is closed");
            served
        }
        StoreLocation::Postgres(url) => {
            // A database that is down (or starting) is waited for, so an edge restarted
            // during an outage comes up with the database instead of exiting; a stop signal
            // meanwhile ends the wait.
            let db = args.db.to_string();
            let connect = PostgresStore::connect_patiently(url, |error, delay| {
                tracing::warn!(
                    target: "ozcheck_runtime",
                    "{db}: the database is unreachable ({error}); trying again in {} ms",
                    delay.as_millis()
                );
            });
            let store = tokio::select! {
                store = connect => Arc::new(store.map_err(|e| format!("{}: {e}", args.db))?),
                () = stop_signal() => {
                    tracing::info!(target: "ozcheck_runtime", "stopped before the database was reached");
                    return Ok(());
                }
            };
            let edge = args
                .edge
                .clone()
                .unwrap_or_else(|| default_edge(&args.listen));
            let served = serve_on(store.clone(), &Routing::Shared { edge }, args, config).await;
            store.close().await;
            tracing::info!(target: "ozcheck_runtime", "stopped; the connections are closed");
            served
        }
    }
}

/// Serves until SIGTERM or Ctrl-C, then lets the requests in flight finish and stops the timer
/// task; the caller closes the store.
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
    let address = listener.local_addr().map_err(|e| e.to_string())?;
    match routing {
        Routing::Local => tracing::info!(target: "ozcheck_runtime", "listening on {address}"),
        Routing::Shared { edge } => tracing::info!(
            target: "ozcheck_runtime",
            "edge {edge} on {}, listening on {address}",
            args.db
        ),
    }
    let timer = tokio::spawn(timer_loop(rt.clone()));
    let api = Api::new(rt.clone());
    let draining = api.clone();
    let served = axum::serve(listener, api_router(api))
        .with_graceful_shutdown(async move {
            stop_signal().await;
            tracing::info!(target: "ozcheck_runtime", "stopping: finishing requests in flight");
            draining.drain();
        })
        .await
        .map_err(|e| e.to_string());
    timer.abort();
    let _ = timer.await;
    drop(rt);
    served
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

/// Runs the server until SIGTERM or Ctrl-C; exit 2 on a usage or I/O error.
pub fn run(args: &ServeArgs) -> ExitCode {
    super::stderr_log::install();
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
