//! The operations of the event-wait protocol, one function each, on the edge a step names
//! (`node`) of a [`Session`].

use serde_json::{Value, json};

use super::session::{Edge, Session, SessionStore};
use super::{NowTs, OpError, OpResult, str_arg};
use crate::args::parse_duration;
use crate::clock::Timestamp;
use crate::config::Config;
use crate::jobs::JobStart;
use crate::model::{FireState, Wait, WaitState};
use crate::render;
use crate::source::Delivery;

pub(super) async fn advance<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let by = str_arg(args, "by")?;
    let by = parse_duration(by)
        .ok_or_else(|| OpError::new("invalid_args", format!("`{by}` is not a duration")))?;
    let target = s.clock.now_ts().plus(by);
    // The edges that sweep: the one the step names, or all of them at once (the holder of the
    // sweeper lease fires; the others find nothing to do).
    let sweepers = match args.get("node") {
        None | Some(Value::Null) => s.all(),
        Some(_) => vec![s.edge(args)?],
    };
    // Deadlines inside the interval fire at their own instants, in order.
    loop {
        let Some(next) = sweepers[0].runtime.next_deadline().await? else {
            break;
        };
        if next > target {
            break;
        }
        s.clock.set(next);
        let fired = fire_due(&sweepers).await?;
        if fired == 0 && sweepers[0].runtime.next_deadline().await? == Some(next) {
            // Nobody sweeping holds the lease (its holder is not among them): the deadline
            // waits for the holder, or for its lease to expire within the interval.
            break;
        }
    }
    s.clock.set(target);
    fire_due(&sweepers).await?;
    for edge in &sweepers {
        edge.runtime.purge().await?;
    }
    Ok(json!({"now": target.to_rfc3339()}))
}

/// Every sweeper fires what is due, at once; returns how many waits timed out.
async fn fire_due<S: SessionStore>(sweepers: &[std::sync::Arc<Edge<S>>]) -> Result<usize, OpError> {
    let tasks: Vec<_> = sweepers
        .iter()
        .map(|e| {
            let runtime = e.runtime.clone();
            tokio::spawn(async move { runtime.fire_due().await })
        })
        .collect();
    let mut fired = 0;
    for task in tasks {
        fired += task
            .await
            .map_err(|e| OpError::new("runtime", e.to_string()))??;
    }
    Ok(fired)
}

pub(super) async fn start_job<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let e = s.edge(args)?;
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
    let job = e.runtime.start_job(&start).await?;
    Ok(
        json!({"job": job.id, "started_at": job.started_at.to_rfc3339(),
              "deadline": job.deadline.map(Timestamp::to_rfc3339)}),
    )
}

pub(super) async fn wait_for_event<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let e = s.edge(args)?;
    let job = str_arg(args, "job")?;
    let name = str_arg(args, "wait")?;
    let mut wait_args = args.clone();
    if let Some(map) = wait_args.as_object_mut() {
        map.remove("job");
        map.remove("wait");
        map.remove("node");
    }
    let wait = e.runtime.wait_for_event(job, name, &wait_args).await?;
    wait_json(s, &e, &wait).await
}

pub(super) async fn poll<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let e = s.edge(args)?;
    let name = str_arg(args, "wait")?;
    let wait = e
        .store
        .wait(name)
        .await?
        .ok_or_else(|| OpError::new("not_found", format!("no wait `{name}`")))?;
    wait_json(s, &e, &wait).await
}

async fn wait_json<S: SessionStore>(s: &Session<S>, e: &Edge<S>, wait: &Wait) -> OpResult {
    let event = match &wait.event {
        Some((source, id)) => e.store.event(source, id).await?.map(|e| e.event),
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

pub(super) async fn job<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let e = s.edge(args)?;
    let id = str_arg(args, "job")?;
    let job = e
        .store
        .job(id)
        .await?
        .ok_or_else(|| OpError::new("not_found", format!("no job `{id}`")))?;
    let now = s.clock.now_ts();
    let waits = e.store.waits_of_job(id).await?;
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

pub(super) async fn deliver<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let e = s.edge(args)?;
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
    let delivered = e
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

pub(super) async fn fires<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let e = s.edge(args)?;
    let mut out = Vec::new();
    for fire in e.store.fires().await? {
        let prefix = match fire.kind.as_str() {
            "routine" => format!("rt.{}.{}.", fire.name, fire.trigger),
            _ => format!("event-{}-", fire.name),
        };
        let source = trigger_source(&s.config, &fire.kind, &fire.name, &fire.trigger);
        let event = match (fire.job.strip_prefix(&prefix), source) {
            (Some(id), Some(source)) => e.store.event(&source, id).await?,
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

pub(super) async fn outputs<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let e = s.edge(args)?;
    let job = str_arg(args, "job")?;
    let outputs: Vec<Value> = e
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

pub(super) async fn audit<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let e = s.edge(args)?;
    let prefix = args.get("action").and_then(Value::as_str).unwrap_or("");
    let records: Vec<Value> = e
        .store
        .audit()
        .await?
        .into_iter()
        .filter(|r| r.action.starts_with(prefix))
        .map(|r| json!({"action": r.action, "at": r.at.to_rfc3339(), "data": r.data}))
        .collect();
    Ok(json!({"records": records}))
}
