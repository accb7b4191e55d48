//! The reference runtime's side of the conformance protocol: a session per `reset` (a runtime on
//! a `SQLite` file in a temporary directory, behind the crash switch of [`crate::faults`], and
//! a manual clock), the session's lifecycle (`reset`, `restart`, `configure`, `crash_point`,
//! `shutdown`) and the dispatch of every other operation to [`super::ops`]. The in-process
//! runner and the `conformance-adapter` subcommand both go through
//! [`ReferenceAdapter::handle_line`], so the two paths cannot differ.
//!
//! New operations are added as one arm in [`ReferenceAdapter::dispatch`] and one function.

use std::sync::{Arc, Mutex, PoisonError};

use serde_json::{Value, json};
use tempfile::TempDir;

use super::ops;
use crate::args::parse_duration;
use crate::clock::{ManualClock, Timestamp};
use crate::config::Config;
use crate::edge::Runtime;
use crate::error::RuntimeError;
use crate::faults::{Faults, Faulty, Plan};
use crate::store::{SqliteStore, StoreError};

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

/// The store of a session: `SQLite` behind the crash switch.
pub(super) type SessionStore = Faulty<SqliteStore>;

/// One scenario's runtime and what outlives its restarts.
pub(super) struct Session {
    pub(super) dir: Arc<TempDir>,
    pub(super) config: Mutex<Arc<Config>>,
    pub(super) clock: ManualClock,
    pub(super) faults: Arc<Faults>,
    pub(super) store: Arc<SessionStore>,
    pub(super) runtime: Arc<Runtime<SessionStore>>,
}

impl Session {
    async fn open(
        dir: Arc<TempDir>,
        config: Arc<Config>,
        clock: ManualClock,
    ) -> Result<Session, OpError> {
        let faults = Faults::new();
        let sqlite = SqliteStore::open(&dir.path().join("waits.db")).await?;
        let store = Arc::new(Faulty::new(sqlite, faults.clone()));
        let runtime =
            Runtime::start(store.clone(), Arc::new(clock.clone()), config.clone()).await?;
        Ok(Session {
            dir,
            config: Mutex::new(config),
            clock,
            faults,
            store,
            runtime,
        })
    }

    fn config(&self) -> Arc<Config> {
        self.config
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

/// The reference adapter: a session per `reset`.
#[derive(Default)]
pub struct ReferenceAdapter {
    session: Mutex<Option<Arc<Session>>>,
    /// The probe waits' operations and state (`crate::probe::conformance`).
    probe: crate::probe::conformance::ProbeSession,
}

impl ReferenceAdapter {
    /// A fresh adapter with no session.
    pub fn new() -> Arc<Self> {
        Arc::new(Self::default())
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
                "protocol": PROTOCOL,
                "ops": OPS.iter().chain(crate::probe::conformance::PROBE_OPS).collect::<Vec<_>>(),
                "crash_points": CRASH_POINTS.iter().map(|p| p.0).collect::<Vec<_>>(),
            })),
            "reset" => {
                self.probe.reset();
                self.reset(args).await
            }
            "restart" => self.restart(args).await,
            "shutdown" => {
                if let Some(s) = self.take() {
                    s.store.inner().close().await;
                }
                Ok(json!({}))
            }
            _ => {
                if let Some(answer) = self.probe.dispatch(op, args).await {
                    return answer;
                }
                let session = self.current()?;
                let result = match op {
                    "configure" => configure(&session, args),
                    "crash_point" => crash_point(&session, args),
                    _ => ops::dispatch(&session, op, args).await,
                };
                // An operation that hit an armed crash point answers `crashed`, whatever error
                // the dead store made of it.
                match (result, session.faults.crashed()) {
                    (Err(_), Some(at)) => Err(OpError::new(
                        "crashed",
                        format!("the runtime crashed at {at}"),
                    )),
                    (result, _) => result,
                }
            }
        }
    }

    fn take(&self) -> Option<Arc<Session>> {
        self.session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take()
    }

    fn put(&self, session: Session) {
        *self.session.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(session));
    }

    fn current(&self) -> Result<Arc<Session>, OpError> {
        self.session
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(|| OpError::new("runtime", "no session: send `reset` first"))
    }

    async fn reset(&self, args: &Value) -> OpResult {
        if let Some(old) = self.take() {
            old.store.inner().close().await;
        }
        let config: Config = serde_json::from_value(args.clone())
            .map_err(|e| OpError::new("invalid_args", format!("setup: {e}")))?;
        let start = match &config.clock {
            None => Timestamp::parse_rfc3339("2026-01-01T00:00:00Z"),
            Some(text) => Timestamp::parse_rfc3339(text),
        }
        .ok_or_else(|| OpError::new("invalid_args", "setup.clock is not RFC 3339 UTC"))?;
        let dir = tempfile::tempdir().map_err(|e| OpError::new("runtime", e.to_string()))?;
        let session =
            Session::open(Arc::new(dir), Arc::new(config), ManualClock::new(start)).await?;
        self.put(session);
        Ok(json!({}))
    }

    async fn restart(&self, args: &Value) -> OpResult {
        let old = self
            .take()
            .ok_or_else(|| OpError::new("runtime", "no session"))?;
        let graceful = args.get("mode").and_then(Value::as_str) == Some("graceful");
        let (dir, config, clock) = (old.dir.clone(), old.config(), old.clock.clone());
        let pending = old.faults.pending();
        if graceful {
            old.store.inner().close().await;
        }
        // A crash: the runtime and its pool are dropped without any shutdown step.
        drop(old);
        // Time that passes while no runtime runs: deadlines in it fire when the next one starts.
        if let Some(down) = args.get("down_for").and_then(Value::as_str) {
            let down = parse_duration(down).ok_or_else(|| {
                OpError::new("invalid_args", format!("`{down}` is not a duration"))
            })?;
            clock.advance(down);
        }
        let session = Session::open(dir, config, clock).await?;
        // A crash point armed and not reached yet still waits for its operation.
        if let Some(plan) = pending {
            session.faults.arm(plan);
        }
        self.put(session);
        Ok(json!({}))
    }
}

/// `configure {sources?, routines?, flows?}`: a plugin is saved; each list given replaces the
/// one in force. Refused (and nothing changes) with the code of the first problem.
fn configure(s: &Session, args: &Value) -> OpResult {
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
    let config = Arc::new(config);
    *s.config.lock().unwrap_or_else(PoisonError::into_inner) = config.clone();
    s.runtime.reconfigure(config);
    Ok(json!({}))
}

/// `crash_point {point}` (a named point), or `{after: [steps], at?: step}` / `{step: N}` (the
/// reference runtime's own row steps): the next operations crash there.
fn crash_point(s: &Session, args: &Value) -> OpResult {
    let plan = if let Some(name) = args.get("point").and_then(Value::as_str) {
        let (_, after, at) = CRASH_POINTS.iter().find(|p| p.0 == name).ok_or_else(|| {
            OpError::new(
                "invalid_args",
                format!(
                    "no crash point `{name}`; the points are {}",
                    CRASH_POINTS
                        .iter()
                        .map(|p| p.0)
                        .collect::<Vec<_>>()
                        .join(", ")
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
    s.faults.arm(plan);
    Ok(json!({}))
}
