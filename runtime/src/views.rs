//! The JSON shapes that the HTTP API (`serve`) and the conformance adapter both answer with: a
//! wait (with the agent's answer and the step output), a job with its `eventWaits`, a fire
//! with its trigger data, an audit record, an output call. One function each, so the two faces
//! of the runtime cannot drift apart.

use serde_json::{Value, json};

use crate::clock::Timestamp;
use crate::model::{AuditRecord, Event, Fire, FireState, Job, Output, StepRecord, Wait, WaitState};
use crate::render;

/// A wait as `poll` and `GET /jobs/{job}/waits/{wait}` show it. `event` is the event it got.
pub fn wait(wait: &Wait, event: Option<&Event>, now: Timestamp) -> Value {
    let remaining = if wait.state == WaitState::Open {
        json!(now.until(wait.deadline).as_millis() as u64)
    } else {
        Value::Null
    };
    json!({
        "id": wait.seq,
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
        "remaining_ms": remaining,
        "reason": wait.reason,
        "event": event.map(Event::to_json),
        "output": render::step_output(wait, event),
        "answer": render::wait_answer(wait, event),
    })
}

/// An open wait as a job's `eventWaits` and `GET /waits` list it (E5).
pub fn event_wait(wait: &Wait, now: Timestamp) -> Value {
    json!({"id": wait.seq, "job": wait.job, "wait": wait.name, "source": wait.spec.source,
           "types": wait.spec.types, "subject": wait.spec.subject, "filter": wait.spec.filter,
           "deadline": wait.deadline.to_rfc3339(),
           "remaining_ms": now.until(wait.deadline).as_millis() as u64,
           "description": render::waiting_line(&wait.spec, now.until(wait.deadline))})
}

/// A job with what it waits for (`eventWaits`), every wait's state, and a flow's step records.
pub fn job(job: &Job, waits: &[Wait], steps: &[StepRecord], now: Timestamp) -> Value {
    let open: Vec<Value> = waits
        .iter()
        .filter(|w| w.state == WaitState::Open)
        .map(|w| event_wait(w, now))
        .collect();
    let all: Vec<Value> = waits
        .iter()
        .map(|w| json!({"id": w.seq, "wait": w.name, "state": w.state.as_str()}))
        .collect();
    let steps: Vec<Value> = steps
        .iter()
        .map(|s| {
            json!({"step": s.step, "state": s.state.as_str(), "output": s.output,
                   "details": s.details})
        })
        .collect();
    json!({"job": job.id, "runtime": job.runtime, "outside_started": job.outside_started,
           "started_at": job.started_at.to_rfc3339(),
           "deadline": job.deadline.map(Timestamp::to_rfc3339),
           "ended": job.ended_at.is_some(),
           "eventWaits": open, "waits": all, "steps": steps})
}

/// A fire with its trigger data (routines) or input (flows). `event` is the event it fired on.
pub fn fire(fire: &Fire, event: Option<&Event>) -> Value {
    let trigger_data = match (event, fire.kind.as_str()) {
        (Some(e), "routine") => Value::String(render::trigger_data(&fire.trigger, e)),
        _ => Value::Null,
    };
    let input = match (event, fire.kind.as_str()) {
        (Some(e), "flow") => json!({"input": e.to_json(), "trigger": {"event": e.to_json()}}),
        _ => Value::Null,
    };
    let charged_to = if fire.kind == "flow" {
        json!(format!("service:webhook/{}", fire.name))
    } else {
        Value::Null
    };
    let state = match fire.state {
        FireState::Started => "started",
        FireState::Refused => "refused",
    };
    json!({"job": fire.job, "kind": fire.kind, "name": fire.name, "trigger": fire.trigger,
           "state": state, "reason": fire.reason, "at": fire.at.to_rfc3339(),
           "trigger_data": trigger_data, "flow_input": input, "charged_to": charged_to})
}

/// An audit record.
pub fn audit(record: &AuditRecord) -> Value {
    json!({"action": record.action, "at": record.at.to_rfc3339(), "data": record.data})
}

/// A call of a safe output.
pub fn output(output: &Output) -> Value {
    json!({"name": output.name, "apply": if output.apply_now { "now" } else { "end" },
           "called_at": output.called_at.to_rfc3339(),
           "applied": output.applied_at.is_some(),
           "applied_at": output.applied_at.map(Timestamp::to_rfc3339)})
}
