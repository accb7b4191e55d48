//! The reference runtime's side of the conformance protocol: a session per `reset`
//! (`session.rs`: one or more edges on a store — a `SQLite` file in a temporary directory, or a
//! fresh schema of a `PostgreSQL` database — each behind a crash switch, on a manual clock), the
//! session's lifecycle (`reset`, `restart`, `configure`, `crash_point`, `shutdown`) and the
//! dispatch of every other operation to `ops.rs`. The in-process runner and the
//! `conformance-adapter` subcommand both go through [`ReferenceAdapter::handle_line`], so the
//! two paths cannot differ.
//!
//! New operations are added as one arm in `ops::dispatch` and one function.

mod ops;
mod session;

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::args::parse_duration;
use crate::clock::{ManualClock, Timestamp};
use crate::config::Config;
use crate::error::RuntimeError;
use crate::faults::Plan;
use crate::store::{PostgresStore, SqliteStore, StoreError};
use session::{Place, Session, SessionStore};

pub use session::{DEFAULT_NODE, MAX_NODES, release_schemas};

/// The protocol's name and version. Version 1 grows only by operations and optional fields
/// (an adapter lists its operations in `hello`), so every version-1 adapter keeps working.
pub const PROTOCOL: &str = "ozcheck-conformance/1";

/// The operations this adapter implements.
pub const OPS: &[&str] = &[
    "hello",
    "reset",
    "restart",
    "configure",
    "crash_point",
    "advance",
    "start_job",
    "wait_for_event",
    "poll",
    "job",
    "waits",
    "deliver",
    "fires",
    "routine_control",
    "kill_switch",
    "audit",
    "log",
    "output",
    "end_job",
    "outputs",
    "approve",
    "shutdown",
];

/// The named crash points of `crash_point` (docs/conformance.md): each is the row steps to see
/// first, and the step to crash at (any step when `None`).
pub const CRASH_POINTS: &[(&str, &[&str], Option<&str>)] = &[
    ("inside-receive", &["insert_event"], None),
    ("after-receive", &["insert_event", "commit"], None),
    ("inside-claim", &["insert_ledger"], None),
    ("after-claim", &["insert_ledger", "commit"], None),
    ("inside-fire", &["insert_fire"], None),
    ("after-fire", &["insert_fire", "commit"], None),
    ("at-routed-mark", &[], Some("set_routed")),
    ("inside-step", &["insert_wait"], None),
    ("after-register", &["insert_wait", "commit"], None),
];

/// An operation's failure, as the protocol reports it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OpError {
    /// `invalid_args`, `refused`, `not_found`, `unknown_op`, `crashed` or `runtime`.
    pub kind: &'static str,
    /// A stable code when the runtime has one (the lint's or analyzer's code of the same
    /// refusal).
    pub code: Option<&'static str>,
    /// What went wrong.
    pub message: String,
}

impl OpError {
    pub(super) fn new(kind: &'static str, message: impl Into<String>) -> Self {
        Self {
            kind,
            code: None,
            message: message.into(),
        }
    }
}

impl From<RuntimeError> for OpError {
    fn from(e: RuntimeError) -> Self {
        Self {
            kind: e.kind(),
            code: Some(e.code()),
            message: e.to_string(),
        }
    }
}

impl From<StoreError> for OpError {
    fn from(e: StoreError) -> Self {
        OpError::new("runtime", e.to_string())
    }
}

pub(super) type OpResult = Result<Value, OpError>;

/// Where the adapter keeps each session's store.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum SessionStores {
    /// A `SQLite` file in a new temporary directory per session.
    #[default]
    Sqlite,
    /// A new schema per session in the `PostgreSQL` database at this URL.
    Postgres(String),
}

impl std::str::FromStr for SessionStores {
    type Err = String;

    fn from_str(value: &str) -> Result<Self, String> {
        if value == "sqlite" {
            return Ok(SessionStores::Sqlite);
        }
        match value.parse::<crate::store::StoreLocation>() {
            Ok(crate::store::StoreLocation::Postgres(url)) => Ok(SessionStores::Postgres(url)),
            Ok(crate::store::StoreLocation::Sqlite(_)) => Err(format!(
                "`{value}`: each scenario runs on a fresh store: give `sqlite` (a temporary \
                 file per scenario) or a PostgreSQL URL (a new schema per scenario)"
            )),
            Err(e) => Err(e.to_string()),
        }
    }
}

/// A session on either store.
#[derive(Clone)]
enum AnySession {
    Sqlite(Arc<Session<SqliteStore>>),
    Postgres(Arc<Session<PostgresStore>>),
}

/// The reference adapter: a session per `reset`.
#[derive(Default)]
pub struct ReferenceAdapter {
    stores: SessionStores,
    session: Mutex<Option<AnySession>>,
    /// The probe waits' operations and state (`crate::probe::conformance`).
    probe: crate::probe::conformance::ProbeSession,
}

pub(super) fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, OpError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| OpError::new("invalid_args", format!("`{key}` (a string) is required")))
}

impl ReferenceAdapter {
    /// A fresh adapter with no session, keeping stores in temporary `SQLite` files.
    pub fn new() -> Arc<Self> {
        Self::with_stores(SessionStores::Sqlite)
    }

    /// A fresh adapter with no session, keeping stores where `stores` says.
    pub fn with_stores(stores: SessionStores) -> Arc<Self> {
        Arc::new(Self {
            stores,
            ..Self::default()
        })
    }

    /// Handles one request line and returns one response line (without the newline).
    pub async fn handle_line(self: &Arc<Self>, line: &str) -> String {
        let request: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(e) => {
                return json!({"seq": null, "ok": false,
                              "error": {"kind": "invalid_args", "message": format!("not JSON: {e}")}})
                .to_string();
            }
        };
        let seq = request.get("seq").cloned().unwrap_or(Value::Null);
        let op = request.get("op").and_then(Value::as_str).unwrap_or("");
        let args = request.get("args").cloned().unwrap_or_else(|| json!({}));
        match self.dispatch(op, &args).await {
            Ok(result) => json!({"seq": seq, "ok": true, "result": result}).to_string(),
            Err(e) => json!({"seq": seq, "ok": false,
                             "error": {"kind": e.kind, "code": e.code, "message": e.message}})
            .to_string(),
        }
    }

    /// Runs one operation.
    pub async fn dispatch(self: &Arc<Self>, op: &str, args: &Value) -> OpResult {
        match op {
            "hello" => Ok(json!({
                "impl": "ozcheck-runtime", "version": env!("CARGO_PKG_VERSION"),
                "protocol": PROTOCOL, "nodes": session::MAX_NODES,
                "ops": OPS.iter().chain(crate::probe::conformance::PROBE_OPS).collect::<Vec<_>>(),
                "crash_points": CRASH_POINTS.iter().map(|p| p.0).collect::<Vec<_>>(),
            })),
            "reset" => {
                self.probe.reset();
                self.reset(args).await
            }
            "shutdown" => {
                if let Some(old) = self.take() {
                    old.shutdown().await;
                }
                Ok(json!({}))
            }
            _ => {
                if let Some(answer) = self.probe.dispatch(op, args).await {
                    return answer;
                }
                match self.current()? {
                    AnySession::Sqlite(s) => on_session(&s, op, args).await,
                    AnySession::Postgres(s) => on_session(&s, op, args).await,
                }
            }
        }
    }

    fn take(&self) -> Option<AnySession> {
        self.session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    fn current(&self) -> Result<AnySession, OpError> {
        self.session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .ok_or_else(|| OpError::new("runtime", "no session: send `reset` first"))
    }

    async fn reset(&self, args: &Value) -> OpResult {
        if let Some(old) = self.take() {
            old.shutdown().await;
        }
        let (nodes, setup) = session::split_nodes(args)?;
        let config: Config = serde_json::from_value(setup)
            .map_err(|e| OpError::new("invalid_args", format!("setup: {e}")))?;
        let start = match &config.clock {
            None => Timestamp::parse_rfc3339("2026-01-01T00:00:00Z"),
            Some(text) => Timestamp::parse_rfc3339(text),
        }
        .ok_or_else(|| OpError::new("invalid_args", "setup.clock is not RFC 3339 UTC"))?;
        let clock = ManualClock::new(start);
        let session = match &self.stores {
            SessionStores::Sqlite => {
                let dir =
                    tempfile::tempdir().map_err(|e| OpError::new("runtime", e.to_string()))?;
                let place = Place::Sqlite(Arc::new(dir));
                AnySession::Sqlite(Arc::new(Session::start(place, config, clock, nodes).await?))
            }
            SessionStores::Postgres(url) => {
                let schema = session::take_schema(url).await?;
                let place = Place::Postgres {
                    url: url.clone(),
                    schema,
                };
                AnySession::Postgres(Arc::new(Session::start(place, config, clock, nodes).await?))
            }
        };
        *self
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(session);
        Ok(json!({}))
    }
}

impl AnySession {
    async fn shutdown(&self) {
        match self {
            AnySession::Sqlite(s) => s.shutdown().await,
            AnySession::Postgres(s) => s.shutdown().await,
        }
    }
}

/// Runs an operation of a session. An operation that hit an armed crash point answers
/// `crashed`, whatever error the dead store made of it.
async fn on_session<S: SessionStore>(s: &Session<S>, op: &str, args: &Value) -> OpResult {
    let result = match op {
        "restart" => restart(s, args).await,
        "configure" => configure(s, args),
        "crash_point" => crash_point(s, args),
        "log" => Ok(json!({"lines": log_lines(s, args)?})),
        _ => ops::dispatch(s, op, args).await,
    };
    match (result, s.crashed()) {
        (Err(_), Some(at)) => Err(OpError::new(
            "crashed",
            format!("the runtime crashed at {at}"),
        )),
        (result, _) => result,
    }
}

/// `configure {sources?, routines?, flows?}`: a plugin is saved; each list given replaces the
/// one in force on every edge. Refused (and nothing changes) with the code of the first problem.
fn configure<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let Some(changes) = args.as_object() else {
        return Err(OpError::new("invalid_args", "`configure` takes a mapping"));
    };
    let mut config =
        serde_json::to_value(&*s.config()).map_err(|e| OpError::new("runtime", e.to_string()))?;
    for (key, value) in changes {
        if !["sources", "routines", "flows"].contains(&key.as_str()) {
            return Err(OpError::new(
                "invalid_args",
                format!("`configure` changes sources, routines or flows, not `{key}`"),
            ));
        }
        config[key] = value.clone();
    }
    let config: Config = serde_json::from_value(config)
        .map_err(|e| OpError::new("invalid_args", format!("configure: {e}")))?;
    crate::configure::check(&config)?;
    s.reconfigure(config);
    Ok(json!({}))
}

/// `crash_point {point, node?}` (a named point), or `{after: [steps], at?: step}` / `{step: N}`
/// (the reference runtime's own row steps): the next operations of the edge crash there.
fn crash_point<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let plan = if let Some(name) = args.get("point").and_then(Value::as_str) {
        let (_, after, at) = CRASH_POINTS.iter().find(|p| p.0 == name).ok_or_else(|| {
            let names: Vec<&str> = CRASH_POINTS.iter().map(|p| p.0).collect();
            OpError::new(
                "invalid_args",
                format!(
                    "no crash point `{name}`; the points are {}",
                    names.join(", ")
                ),
            )
        })?;
        Plan::After {
            after: after.iter().map(|s| (*s).to_owned()).collect(),
            at: at.map(str::to_owned),
        }
    } else if let Some(step) = args.get("step").and_then(Value::as_u64) {
        Plan::AtStep(step)
    } else {
        let after = args
            .get("after")
            .and_then(Value::as_array)
            .ok_or_else(|| OpError::new("invalid_args", "`point`, `step` or `after` is required"))?
            .iter()
            .map(|v| v.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or_else(|| OpError::new("invalid_args", "`after` is a list of step names"))?;
        let at = args.get("at").and_then(Value::as_str).map(str::to_owned);
        Plan::After { after, at }
    };
    s.edge(args)?.faults.arm(plan);
    Ok(json!({}))
}

/// `restart {mode, down_for?, node?}`: one edge, or all of them.
async fn restart<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let graceful = args.get("mode").and_then(Value::as_str) == Some("graceful");
    let down =
        match args.get("down_for").and_then(Value::as_str) {
            None => None,
            Some(down) => Some(parse_duration(down).ok_or_else(|| {
                OpError::new("invalid_args", format!("`{down}` is not a duration"))
            })?),
        };
    let node = args.get("node").and_then(Value::as_str);
    s.restart(node, graceful, down).await?;
    Ok(json!({}))
}

/// The log lines of the named edge, or of every edge in order.
fn log_lines<S: SessionStore>(s: &Session<S>, args: &Value) -> Result<Vec<String>, OpError> {
    if args.get("node").is_some_and(|n| !n.is_null()) {
        return Ok(s.edge(args)?.runtime.log_lines());
    }
    Ok(s.all().iter().flat_map(|e| e.runtime.log_lines()).collect())
}

trait NowTs {
    fn now_ts(&self) -> Timestamp;
}

impl NowTs for ManualClock {
    fn now_ts(&self) -> Timestamp {
        crate::clock::Clock::now(self)
    }
}
