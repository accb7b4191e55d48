//! A conformance session: one store and the edges on it, on one manual clock.
//!
//! The store is a `SQLite` file in a temporary directory, or a fresh schema of a `PostgreSQL`
//! database (`--db postgres://…`), dropped at `shutdown`. A scenario names its edges in
//! `setup.nodes` (default: one, `edge-a`). Each edge is its own runtime with its own store
//! handle (connection pool), as a separate process would be. One edge alone on `SQLite` routes
//! through its own index, as `ozcheck serve` on a file does; several edges, and every edge on
//! `PostgreSQL`, route through the store's index and share the sweeper lease, as `ozcheck serve`
//! on `PostgreSQL` does. Each edge's store is behind its own crash switch ([`crate::faults`]):
//! `crash_point` arms the switch of the edge it names.

use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex, PoisonError, RwLock};

use serde_json::Value;
use tempfile::TempDir;

use super::{OpError, str_arg};
use crate::clock::ManualClock;
use crate::config::Config;
use crate::edge::Runtime;
use crate::faults::{Faults, Faulty};
use crate::routes::Routing;
use crate::store::{PostgresStore, SqliteStore, Store, StoreError};

/// The edge a scenario talks to when a step names none.
pub const DEFAULT_NODE: &str = "edge-a";
/// Most edges in one session.
pub const MAX_NODES: usize = 16;

/// Where a session's store lives.
pub(super) enum Place {
    /// A `SQLite` file in this directory.
    Sqlite(Arc<TempDir>),
    /// A schema of the `PostgreSQL` database at `url`.
    Postgres { url: String, schema: String },
}

/// A store the adapter can open (again) at its place.
pub(super) trait SessionStore: Sized + Send + Sync + 'static {
    /// The handle behind a crash switch.
    type Faulty: Store;
    /// Puts the handle behind `faults`.
    fn behind(self, faults: Arc<Faults>) -> Self::Faulty;
    /// The handle behind a crash switch.
    fn handle(faulty: &Self::Faulty) -> &Self;
    /// Opens a handle on the store at `place`.
    fn open_at(place: &Place) -> impl Future<Output = Result<Self, StoreError>> + Send;
    /// Closes the handle (a graceful stop).
    fn close_handle(&self) -> impl Future<Output = ()> + Send;
}

impl SessionStore for SqliteStore {
    type Faulty = Faulty<Self>;

    fn behind(self, faults: Arc<Faults>) -> Self::Faulty {
        Faulty::new(self, faults)
    }

    fn handle(faulty: &Self::Faulty) -> &Self {
        faulty.inner()
    }

    async fn open_at(place: &Place) -> Result<Self, StoreError> {
        match place {
            Place::Sqlite(dir) => SqliteStore::open(&dir.path().join("waits.db")).await,
            Place::Postgres { .. } => Err(StoreError("not a SQLite place".into())),
        }
    }

    async fn close_handle(&self) {
        self.close().await;
    }
}

impl SessionStore for PostgresStore {
    type Faulty = Faulty<Self>;

    fn behind(self, faults: Arc<Faults>) -> Self::Faulty {
        Faulty::new(self, faults)
    }

    fn handle(faulty: &Self::Faulty) -> &Self {
        faulty.inner()
    }

    async fn open_at(place: &Place) -> Result<Self, StoreError> {
        match place {
            Place::Postgres { url, schema } => PostgresStore::connect_in_schema(url, schema).await,
            Place::Sqlite(_) => Err(StoreError("not a PostgreSQL place".into())),
        }
    }

    async fn close_handle(&self) {
        self.close().await;
    }
}

/// One edge: its store handle behind its crash switch, and its runtime.
pub(super) struct Edge<S: SessionStore> {
    pub store: Arc<S::Faulty>,
    pub runtime: Arc<Runtime<S::Faulty>>,
    pub faults: Arc<Faults>,
}

/// The session's store, its edges and its clock.
pub(super) struct Session<S: SessionStore> {
    pub place: Place,
    /// The configuration in force (`configure` replaces it).
    config: Mutex<Arc<Config>>,
    pub clock: ManualClock,
    /// The edges' names, in the order the scenario gave them.
    pub nodes: Vec<String>,
    routing_shared: bool,
    edges: RwLock<BTreeMap<String, Arc<Edge<S>>>>,
}

fn read<T>(lock: &RwLock<T>) -> std::sync::RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> std::sync::RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

impl<S: SessionStore> Session<S> {
    /// Starts every edge on a fresh store at `place`.
    pub async fn start(
        place: Place,
        config: Config,
        clock: ManualClock,
        nodes: Vec<String>,
    ) -> Result<Self, OpError> {
        let routing_shared = nodes.len() > 1 || matches!(place, Place::Postgres { .. });
        let session = Self {
            place,
            config: Mutex::new(Arc::new(config)),
            clock,
            nodes,
            routing_shared,
            edges: RwLock::new(BTreeMap::new()),
        };
        for node in session.nodes.clone() {
            let edge = session.start_edge(&node).await?;
            write(&session.edges).insert(node, Arc::new(edge));
        }
        Ok(session)
    }

    /// The configuration in force.
    pub fn config(&self) -> Arc<Config> {
        self.config
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Puts `config` in force on every edge (a plugin saved).
    pub fn reconfigure(&self, config: Config) {
        let config = Arc::new(config);
        *self.config.lock().unwrap_or_else(PoisonError::into_inner) = config.clone();
        for edge in self.all() {
            edge.runtime.reconfigure(config.clone());
        }
    }

    /// Where an edge crashed at an armed crash point.
    pub fn crashed(&self) -> Option<String> {
        self.all().iter().find_map(|e| e.faults.crashed())
    }

    async fn start_edge(&self, node: &str) -> Result<Edge<S>, StoreError> {
        let faults = Faults::new();
        let store = Arc::new(S::open_at(&self.place).await?.behind(faults.clone()));
        let routing = if self.routing_shared {
            Routing::Shared {
                edge: node.to_owned(),
            }
        } else {
            Routing::Local
        };
        let clock = Arc::new(self.clock.clone());
        let runtime = Runtime::start_with(store.clone(), clock, self.config(), &routing).await?;
        Ok(Edge {
            store,
            runtime,
            faults,
        })
    }

    /// The edge a step names in `node` (the first edge when it names none). A session with one
    /// edge takes every name as that edge, as scenarios written before several edges did.
    pub fn edge(&self, args: &Value) -> Result<Arc<Edge<S>>, OpError> {
        let edges = read(&self.edges);
        let name = match args.get("node") {
            None | Some(Value::Null) => None,
            Some(_) => Some(str_arg(args, "node")?),
        };
        let name = match name {
            Some(name) if self.nodes.len() > 1 => name,
            _ => &self.nodes[0],
        };
        edges.get(name).cloned().ok_or_else(|| {
            OpError::new(
                "not_found",
                format!("no node `{name}`: setup.nodes are {:?}", self.nodes),
            )
        })
    }

    /// Every edge, in the scenario's order.
    pub fn all(&self) -> Vec<Arc<Edge<S>>> {
        let edges = read(&self.edges);
        self.nodes
            .iter()
            .filter_map(|n| edges.get(n).cloned())
            .collect()
    }

    /// Stops the named edge (all of them when `node` is `None`), gracefully or as in a crash,
    /// lets `down` pass on the clock, and starts it again on the same store.
    pub async fn restart(
        &self,
        node: Option<&str>,
        graceful: bool,
        down: Option<std::time::Duration>,
    ) -> Result<(), OpError> {
        let names: Vec<String> = match node {
            Some(name) if self.nodes.len() > 1 => {
                if !self.nodes.iter().any(|n| n == name) {
                    return Err(OpError::new("not_found", format!("no node `{name}`")));
                }
                vec![name.to_owned()]
            }
            _ => self.nodes.clone(),
        };
        let mut pending = BTreeMap::new();
        for name in &names {
            let old = write(&self.edges).remove(name);
            if let Some(old) = old {
                if let Some(plan) = old.faults.pending() {
                    pending.insert(name.clone(), plan);
                }
                if graceful {
                    S::handle(&old.store).close_handle().await;
                }
                // A crash: the runtime and its connections go without any shutdown step.
                drop(old);
            }
        }
        if let Some(down) = down {
            self.clock.advance(down);
        }
        for name in names {
            let edge = self.start_edge(&name).await?;
            // A crash point armed and not reached yet still waits for its operation.
            if let Some(plan) = pending.remove(&name) {
                edge.faults.arm(plan);
            }
            write(&self.edges).insert(name, Arc::new(edge));
        }
        Ok(())
    }

    /// Closes every edge and removes the store.
    pub async fn shutdown(&self) {
        let edges: Vec<Arc<Edge<S>>> = std::mem::take(&mut *write(&self.edges))
            .into_values()
            .collect();
        for edge in edges {
            S::handle(&edge.store).close_handle().await;
        }
        if let Place::Postgres { url, schema } = &self.place {
            give_schema(url, schema);
        }
    }
}

/// Schemas of ended sessions, kept for the next session of this process: emptying one is
/// much cheaper than creating the tables of a new one.
static SPARE_SCHEMAS: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());

fn spare() -> std::sync::MutexGuard<'static, Vec<(String, String)>> {
    SPARE_SCHEMAS.lock().unwrap_or_else(PoisonError::into_inner)
}

/// A schema for a new session in the database at `url`: a spare one emptied, or a new one.
pub(super) async fn take_schema(url: &str) -> Result<String, StoreError> {
    let found = {
        let mut spare = spare();
        let at = spare.iter().position(|(u, _)| u == url);
        at.map(|i| spare.swap_remove(i).1)
    };
    match found {
        Some(schema) => match PostgresStore::empty_schema(url, &schema).await {
            Ok(()) => Ok(schema),
            Err(_) => PostgresStore::create_schema(url).await,
        },
        None => PostgresStore::create_schema(url).await,
    }
}

fn give_schema(url: &str, schema: &str) {
    spare().push((url.to_owned(), schema.to_owned()));
}

/// Drops the spare schemas of this process (when its last session ended).
pub async fn release_schemas() {
    let spare: Vec<(String, String)> = std::mem::take(&mut *spare());
    for (url, schema) in spare {
        // A schema left behind only costs space; there is nobody to tell.
        let _ = PostgresStore::drop_schema(&url, &schema).await;
    }
}

/// The edges a scenario's setup names (`nodes`), and the setup without them.
pub(super) fn split_nodes(setup: &Value) -> Result<(Vec<String>, Value), OpError> {
    let mut setup = setup.clone();
    let nodes = match setup.as_object_mut().and_then(|m| m.remove("nodes")) {
        None | Some(Value::Null) => vec![DEFAULT_NODE.to_owned()],
        Some(Value::Array(items)) => {
            if items.is_empty() || items.len() > MAX_NODES {
                return Err(OpError::new(
                    "invalid_args",
                    format!("setup.nodes names 1 to {MAX_NODES} edges"),
                ));
            }
            let mut nodes = Vec::with_capacity(items.len());
            for item in items {
                let Value::String(name) = item else {
                    return Err(OpError::new(
                        "invalid_args",
                        "setup.nodes is a list of edge names",
                    ));
                };
                if name.is_empty() || nodes.contains(&name) {
                    return Err(OpError::new(
                        "invalid_args",
                        format!("setup.nodes: `{name}` is empty or repeated"),
                    ));
                }
                nodes.push(name);
            }
            nodes
        }
        Some(_) => {
            return Err(OpError::new(
                "invalid_args",
                "setup.nodes is a list of edge names",
            ));
        }
    };
    Ok((nodes, setup))
}
