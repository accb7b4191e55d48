//! The reference runtime's side of the conformance protocol: one function per operation, over a
//! runtime on a `SQLite` file in a temporary directory and a manual clock. The in-process runner
//! and the `conformance-adapter` subcommand both go through [`ReferenceAdapter::handle_line`],
//! so the two paths cannot differ.
//!
//! New operations (e.g. the probe waits' `wait_for`) are added as one arm in
//! [`ReferenceAdapter::dispatch`] and one function.

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use tempfile::TempDir;

use crate::args::parse_duration;
use crate::clock::{ManualClock, Timestamp};
use crate::config::Config;
use crate::edge::Runtime;
use crate::error::RuntimeError;
use crate::jobs::JobStart;
use crate::model::{FireState, Wait, WaitState};
use crate::render;
use crate::source::Delivery;
use crate::store::{SqliteStore, Store, StoreError};
use crate::triggers::{KILL_SWITCH, paused_key};

/// The protocol's name and version.
pub const PROTOCOL: &str = "ozcheck-conformance/1";

/// The operations this adapter implements.
pub const OPS: &[&str] = &[
    "hello",
    "reset",
    "restart",
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
    "shutdown",
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
    fn new(kind: &'static str, message: impl Into<String>) -> Self {
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

type OpResult = Result<Value, OpError>;

struct Session {
    dir: Arc<TempDir>,
    config: Arc<Config>,
    clock: ManualClock,
    store: Arc<SqliteStore>,
    runtime: Arc<Runtime<SqliteStore>>,
}

/// The reference adapter: a session per `reset`.
#[derive(Default)]
pub struct ReferenceAdapter {
    session: Mutex<Option<Arc<Session>>>,
    /// The probe waits' operations and state (`crate::probe::conformance`).
    probe: crate::probe::conformance::ProbeSession,
}

fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, OpError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| OpError::new("invalid_args", format!("`{key}` (a string) is required")))
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
            "hello" => Ok(
                json!({"impl": "ozcheck-runtime", "version": env!("CARGO_PKG_VERSION"),
                                 "protocol": PROTOCOL,
                                 "ops": OPS.iter().chain(crate::probe::conformance::PROBE_OPS).collect::<Vec<_>>()}),
            ),
            "reset" => {
                self.probe.reset();
                self.reset(args).await
            }
            "restart" => self.restart(args).await,
            "shutdown" => {
                let old = self.take();
                if let Some(s) = old {
                    s.store.close().await;
                }
                Ok(json!({}))
            }
            _ => {
                if let Some(answer) = self.probe.dispatch(op, args).await {
                    return answer;
                }
                let session = self.current()?;
                match op {
                    "advance" => advance(&session, args).await,
                    "start_job" => start_job(&session, args).await,
                    "wait_for_event" => wait_for_event(&session, args).await,
                    "poll" => poll(&session, args).await,
                    "job" => job(&session, args).await,
                    "waits" => Ok(json!({"lines": session.runtime.waiting_lines().await?})),
                    "deliver" => deliver(&session, args).await,
                    "fires" => fires(&session).await,
                    "routine_control" => {
                        let routine = str_arg(args, "routine")?;
                        let paused = args.get("paused").and_then(Value::as_bool).unwrap_or(false);
                        session.store.set_flag(&paused_key(routine), paused).await?;
                        Ok(json!({}))
                    }
                    "kill_switch" => {
                        let on = args.get("on").and_then(Value::as_bool).unwrap_or(false);
                        session.store.set_flag(KILL_SWITCH, on).await?;
                        Ok(json!({}))
                    }
                    "audit" => audit(&session, args).await,
                    "log" => Ok(json!({"lines": session.runtime.log_lines()})),
                    "output" => {
                        let apply_now = match args.get("apply").and_then(Value::as_str) {
                            None | Some("end") => false,
                            Some("now") => true,
                            Some(other) => {
                                return Err(OpError::new(
                                    "invalid_args",
                                    format!("`apply` is `{other}`: it must be `now` or `end`"),
                                ));
                            }
                        };
                        let job = str_arg(args, "job")?;
                        session
                            .runtime
                            .call_output(job, str_arg(args, "name")?, apply_now)
                            .await?;
                        Ok(json!({}))
                    }
                    "end_job" => {
                        session.runtime.end_job(str_arg(args, "job")?).await?;
                        Ok(json!({}))
                    }
                    "outputs" => outputs(&session, args).await,
                    _ => Err(OpError::new(
                        "unknown_op",
                        format!("the reference adapter has no operation `{op}`"),
                    )),
                }
            }
        }
    }

    fn take(&self) -> Option<Arc<Session>> {
        self.session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .take()
    }

    fn put(&self, session: Session) {
        *self
            .session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner) = Some(Arc::new(session));
    }

    fn current(&self) -> Result<Arc<Session>, OpError> {
        self.session
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .clone()
            .ok_or_else(|| OpError::new("runtime", "no session: send `reset` first"))
    }

    async fn reset(&self, args: &Value) -> OpResult {
        if let Some(old) = self.take() {
            old.store.close().await;
        }
        let config: Config = serde_json::from_value(args.clone())
            .map_err(|e| OpError::new("invalid_args", format!("setup: {e}")))?;
        let start = match &config.clock {
            None => Timestamp::parse_rfc3339("2026-01-01T00:00:00Z"),
            Some(text) => Timestamp::parse_rfc3339(text),
        }
        .ok_or_else(|| OpError::new("invalid_args", "setup.clock is not RFC 3339 UTC"))?;
        let dir = tempfile::tempdir().map_err(|e| OpError::new("runtime", e.to_string()))?;
        let store = Arc::new(SqliteStore::open(&dir.path().join("waits.db")).await?);
        let clock = ManualClock::new(start);
        let config = Arc::new(config);
        let runtime =
            Runtime::start(store.clone(), Arc::new(clock.clone()), config.clone()).await?;
        self.put(Session {
            dir: Arc::new(dir),
            config,
            clock,
            store,
            runtime,
        });
        Ok(json!({}))
    }

    async fn restart(&self, args: &Value) -> OpResult {
        let old = self
            .take()
            .ok_or_else(|| OpError::new("runtime", "no session"))?;
        let graceful = args.get("mode").and_then(Value::as_str) == Some("graceful");
        let (dir, config, clock) = (old.dir.clone(), old.config.clone(), old.clock.clone());
        if graceful {
            old.store.close().await;
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
        let store = Arc::new(SqliteStore::open(&dir.path().join("waits.db")).await?);
        let runtime =
            Runtime::start(store.clone(), Arc::new(clock.clone()), config.clone()).await?;
        self.put(Session {
            dir,
            config,
            clock,
            store,
            runtime,
        });
        Ok(json!({}))
    }
}

async fn advance(s: &Session, args: &Value) -> OpResult {
    let by = str_arg(args, "by")?;
    let by = parse_duration(by)
        .ok_or_else(|| OpError::new("invalid_args", format!("`{by}` is not a duration")))?;
    let target = s.clock.now_ts().plus(by);
    // Deadlines inside the interval fire at their own instants, in order.
    while let Some(next) = s.runtime.next_deadline().await?.filter(|t| *t <= target) {
        s.clock.set(next);
        s.runtime.fire_due().await?;
    }
    s.clock.set(target);
    s.runtime.fire_due().await?;
    s.runtime.purge().await?;
    Ok(json!({"now": target.to_rfc3339()}))
}

async fn start_job(s: &Session, args: &Value) -> OpResult {
    let timeout = match args.get("timeout").and_then(Value::as_str) {
        None => None,
        Some(t) => Some(
            parse_duration(t)
                .ok_or_else(|| OpError::new("invalid_args", format!("`{t}` is not a duration")))?,
        ),
    };
    let start = JobStart {
        id: str_arg(args, "job")?.to_owned(),
        runtime: args
            .get("runtime")
            .and_then(Value::as_str)
            .map(str::to_owned),
        timeout,
        shadow: args.get("shadow").and_then(Value::as_bool).unwrap_or(false),
        sandbox_tier: args
            .get("sandbox_tier")
            .and_then(Value::as_u64)
            .map(|t| t.min(255) as u8),
        has_secrets: args
            .get("has_secrets")
            .and_then(Value::as_bool)
            .unwrap_or(false),
    };
    let job = s.runtime.start_job(&start).await?;
    Ok(
        json!({"job": job.id, "started_at": job.started_at.to_rfc3339(),
              "deadline": job.deadline.map(Timestamp::to_rfc3339)}),
    )
}

async fn wait_for_event(s: &Session, args: &Value) -> OpResult {
    let job = str_arg(args, "job")?;
    let name = str_arg(args, "wait")?;
    let mut wait_args = args.clone();
    if let Some(map) = wait_args.as_object_mut() {
        map.remove("job");
        map.remove("wait");
    }
    let wait = s.runtime.wait_for_event(job, name, &wait_args).await?;
    wait_json(s, &wait).await
}

async fn poll(s: &Session, args: &Value) -> OpResult {
    let name = str_arg(args, "wait")?;
    let wait = s
        .store
        .wait(name)
        .await?
        .ok_or_else(|| OpError::new("not_found", format!("no wait `{name}`")))?;
    wait_json(s, &wait).await
}

async fn wait_json(s: &Session, wait: &Wait) -> OpResult {
    let event = match &wait.event {
        Some((source, id)) => s.store.event(source, id).await?.map(|e| e.event),
        None => None,
    };
    let now = s.clock.now_ts();
    let output = render::step_output(wait, event.as_ref());
    let answer = render::wait_answer(wait, event.as_ref());
    Ok(json!({
        "wait": wait.name,
        "job": wait.job,
        "state": wait.state.as_str(),
        "source": wait.spec.source,
        "types": wait.spec.types,
        "subject": wait.spec.subject,
        "filter": wait.spec.filter,
        "since": wait.spec.since.as_str(),
        "timeout_ms": wait.spec.timeout.as_millis() as u64,
        "deadline": wait.deadline.to_rfc3339(),
        "remaining_ms": if wait.state == WaitState::Open { json!(now.until(wait.deadline).as_millis() as u64) } else { Value::Null },
        "reason": wait.reason,
        "event": event.map(|e| e.to_json()),
        "output": output,
        "answer": answer,
    }))
}

async fn job(s: &Session, args: &Value) -> OpResult {
    let id = str_arg(args, "job")?;
    let job = s
        .store
        .job(id)
        .await?
        .ok_or_else(|| OpError::new("not_found", format!("no job `{id}`")))?;
    let now = s.clock.now_ts();
    let waits = s.store.waits_of_job(id).await?;
    let open: Vec<Value> = waits
        .iter()
        .filter(|w| w.state == WaitState::Open)
        .map(|w| {
            json!({"wait": w.name, "source": w.spec.source, "types": w.spec.types,
                   "subject": w.spec.subject, "filter": w.spec.filter,
                   "deadline": w.deadline.to_rfc3339(),
                   "description": render::waiting_line(&w.spec, now.until(w.deadline))})
        })
        .collect();
    let all: Vec<Value> = waits
        .iter()
        .map(|w| json!({"wait": w.name, "state": w.state.as_str()}))
        .collect();
    Ok(
        json!({"job": job.id, "runtime": job.runtime, "outside_started": job.outside_started,
              "eventWaits": open, "waits": all}),
    )
}

async fn deliver(s: &Session, args: &Value) -> OpResult {
    let source = str_arg(args, "source")?;
    let body = match args.get("body") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::String(text)) => text.clone().into_bytes(),
        Some(other) => other.to_string().into_bytes(),
    };
    let mut headers = Vec::new();
    if let Some(map) = args.get("headers").and_then(Value::as_object) {
        for (name, value) in map {
            let value = match value {
                Value::String(v) => v.clone(),
                other => other.to_string(),
            };
            headers.push((name.to_ascii_lowercase(), value));
        }
    }
    let delivered = s
        .runtime
        .deliver(source, &Delivery { headers, body })
        .await?;
    Ok(json!({
        "status": delivered.status,
        "duplicate": delivered.duplicate,
        "error": delivered.error,
        "event": delivered.event.map(|e| e.to_json()),
    }))
}

async fn fires(s: &Session) -> OpResult {
    let mut out = Vec::new();
    for fire in s.store.fires().await? {
        let prefix = match fire.kind.as_str() {
            "routine" => format!("rt.{}.{}.", fire.name, fire.trigger),
            _ => format!("event-{}-", fire.name),
        };
        let source = trigger_source(&s.config, &fire.kind, &fire.name, &fire.trigger);
        let event = match (fire.job.strip_prefix(&prefix), source) {
            (Some(id), Some(source)) => s.store.event(&source, id).await?,
            _ => None,
        };
        let trigger_data = match (&event, fire.kind.as_str()) {
            (Some(e), "routine") => Value::String(render::trigger_data(&fire.trigger, &e.event)),
            _ => Value::Null,
        };
        let input = match (&event, fire.kind.as_str()) {
            (Some(e), "flow") => {
                json!({"input": e.event.to_json(), "trigger": {"event": e.event.to_json()}})
            }
            _ => Value::Null,
        };
        out.push(json!({
            "job": fire.job, "kind": fire.kind, "name": fire.name, "trigger": fire.trigger,
            "state": match fire.state { FireState::Started => "started", FireState::Refused => "refused" },
            "reason": fire.reason, "trigger_data": trigger_data, "flow_input": input,
            "charged_to": if fire.kind == "flow" { json!(format!("service:webhook/{}", fire.name)) } else { Value::Null },
        }));
    }
    Ok(json!({"fires": out}))
}

fn trigger_source(config: &Config, kind: &str, name: &str, trigger: &str) -> Option<String> {
    if kind == "routine" {
        let routine = config.routines.iter().find(|r| r.name == name)?;
        let t = routine.triggers.iter().find(|t| t.name == trigger)?;
        Some(t.event.source.clone())
    } else {
        let flow = config.flows.iter().find(|f| f.name == name)?;
        Some(flow.trigger.event.source.clone())
    }
}

async fn outputs(s: &Session, args: &Value) -> OpResult {
    let job = str_arg(args, "job")?;
    let outputs: Vec<Value> = s
        .store
        .outputs(job)
        .await?
        .into_iter()
        .map(|o| {
            json!({"name": o.name, "apply": if o.apply_now { "now" } else { "end" },
                   "called_at": o.called_at.to_rfc3339(),
                   "applied": o.applied_at.is_some(),
                   "applied_at": o.applied_at.map(Timestamp::to_rfc3339)})
        })
        .collect();
    Ok(json!({"outputs": outputs}))
}

async fn audit(s: &Session, args: &Value) -> OpResult {
    let prefix = args.get("action").and_then(Value::as_str).unwrap_or("");
    let records: Vec<Value> = s
        .store
        .audit()
        .await?
        .into_iter()
        .filter(|r| r.action.starts_with(prefix))
        .map(|r| json!({"action": r.action, "at": r.at.to_rfc3339(), "data": r.data}))
        .collect();
    Ok(json!({"records": records}))
}

trait NowTs {
    fn now_ts(&self) -> Timestamp;
}

impl NowTs for ManualClock {
    fn now_ts(&self) -> Timestamp {
        crate::clock::Clock::now(self)
    }
}
