//! The reference adapter's operations on a session's runtime (`docs/conformance.md`), one
//! function each: jobs and waits, deliveries, fires, audit, outputs, approvals, time.

use serde_json::{Value, json};

use super::adapter::{OpError, OpResult, Session};
use crate::args::parse_duration;
use crate::clock::{ManualClock, Timestamp};
use crate::jobs::JobStart;
use crate::model::Wait;
use crate::source::Delivery;
use crate::store::Store;
use crate::triggers::{KILL_SWITCH, paused_key};
use crate::views;

fn str_arg<'a>(args: &'a Value, key: &str) -> Result<&'a str, OpError> {
    args.get(key)
        .and_then(Value::as_str)
        .ok_or_else(|| OpError::new("invalid_args", format!("`{key}` (a string) is required")))
}

/// Runs an operation of a session's runtime; `unknown_op` for one this adapter does not have.
pub(super) async fn dispatch(s: &Session, op: &str, args: &Value) -> OpResult {
    match op {
        "advance" => advance(s, args).await,
        "start_job" => start_job(s, args).await,
        "wait_for_event" => wait_for_event(s, args).await,
        "poll" => poll(s, args).await,
        "job" => job(s, args).await,
        "waits" => Ok(json!({"lines": s.runtime.waiting_lines().await?})),
        "deliver" => deliver(s, args).await,
        "fires" => fires(s).await,
        "routine_control" => {
            let routine = str_arg(args, "routine")?;
            let paused = args.get("paused").and_then(Value::as_bool).unwrap_or(false);
            s.store.set_flag(&paused_key(routine), paused).await?;
            Ok(json!({}))
        }
        "kill_switch" => {
            let on = args.get("on").and_then(Value::as_bool).unwrap_or(false);
            s.store.set_flag(KILL_SWITCH, on).await?;
            Ok(json!({}))
        }
        "audit" => audit(s, args).await,
        "log" => Ok(json!({"lines": s.runtime.log_lines()})),
        "output" => output(s, args).await,
        "end_job" => {
            s.runtime.end_job(str_arg(args, "job")?).await?;
            Ok(json!({}))
        }
        "outputs" => outputs(s, args).await,
        "approve" => {
            let approved = args
                .get("approved")
                .and_then(Value::as_bool)
                .ok_or_else(|| {
                    OpError::new("invalid_args", "`approved` (a boolean) is required")
                })?;
            s.runtime
                .approve(str_arg(args, "job")?, str_arg(args, "step")?, approved)
                .await?;
            Ok(json!({}))
        }
        _ => Err(OpError::new(
            "unknown_op",
            format!("the reference adapter has no operation `{op}`"),
        )),
    }
}

async fn output(s: &Session, args: &Value) -> OpResult {
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
    s.runtime
        .call_output(job, str_arg(args, "name")?, apply_now)
        .await?;
    Ok(json!({}))
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
    let job = args.get("job").and_then(Value::as_str);
    let wait = s.runtime.find_wait(job, name).await?;
    wait_json(s, &wait).await
}

async fn wait_json(s: &Session, wait: &Wait) -> OpResult {
    let event = s.runtime.wait_event(wait).await?;
    Ok(views::wait(wait, event.as_ref(), s.clock.now_ts()))
}

async fn job(s: &Session, args: &Value) -> OpResult {
    let id = str_arg(args, "job")?;
    let job = s.runtime.job(id).await?;
    let waits = s.store.waits_of_job(id).await?;
    let steps = s.store.steps_of_job(id).await?;
    Ok(views::job(&job, &waits, &steps, s.clock.now_ts()))
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
        let event = s.runtime.fire_event(&fire).await?;
        out.push(views::fire(&fire, event.as_ref()));
    }
    Ok(json!({"fires": out}))
}

async fn outputs(s: &Session, args: &Value) -> OpResult {
    let job = str_arg(args, "job")?;
    let outputs: Vec<Value> = s
        .store
        .outputs(job)
        .await?
        .iter()
        .map(views::output)
        .collect();
    Ok(json!({"outputs": outputs}))
}

async fn audit(s: &Session, args: &Value) -> OpResult {
    let prefix = args.get("action").and_then(Value::as_str).unwrap_or("");
    let records: Vec<Value> = s
        .store
        .audit()
        .await?
        .iter()
        .filter(|r| r.action.starts_with(prefix))
        .map(views::audit)
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
