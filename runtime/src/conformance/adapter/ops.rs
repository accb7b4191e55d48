//! The operations of the event-wait protocol (`docs/conformance.md`), one function each, on the
//! edge a step names (`node`) of a [`Session`]: jobs and waits, deliveries, fires, audit,
//! outputs, approvals, time.

use serde_json::{Value, json};

use super::session::{Edge, Session, SessionStore};
use super::{NowTs, OpError, OpResult, str_arg};
use crate::args::parse_duration;
use crate::clock::Timestamp;
use crate::jobs::JobStart;
use crate::model::Wait;
use crate::source::Delivery;
use crate::store::Store;
use crate::triggers::{KILL_SWITCH, paused_key};
use crate::views;

/// Runs an operation on a session; `unknown_op` for one this adapter does not have.
pub(super) async fn dispatch<S: SessionStore>(s: &Session<S>, op: &str, args: &Value) -> OpResult {
    match op {
        "advance" => advance(s, args).await,
        "start_job" => start_job(s, args).await,
        "wait_for_event" => wait_for_event(s, args).await,
        "poll" => poll(s, args).await,
        "job" => job(s, args).await,
        "waits" => Ok(json!({"lines": s.edge(args)?.runtime.waiting_lines().await?})),
        "deliver" => deliver(s, args).await,
        "fires" => fires(s, args).await,
        "routine_control" => {
            let routine = str_arg(args, "routine")?;
            let paused = args.get("paused").and_then(Value::as_bool).unwrap_or(false);
            s.edge(args)?
                .store
                .set_flag(&paused_key(routine), paused)
                .await?;
            Ok(json!({}))
        }
        "kill_switch" => {
            let on = args.get("on").and_then(Value::as_bool).unwrap_or(false);
            s.edge(args)?.store.set_flag(KILL_SWITCH, on).await?;
            Ok(json!({}))
        }
        "audit" => audit(s, args).await,
        "output" => output(s, args).await,
        "end_job" => {
            s.edge(args)?.runtime.end_job(str_arg(args, "job")?).await?;
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
            s.edge(args)?
                .runtime
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

async fn output<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
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
    s.edge(args)?
        .runtime
        .call_output(job, str_arg(args, "name")?, apply_now)
        .await?;
    Ok(json!({}))
}

async fn advance<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
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

async fn start_job<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
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

async fn wait_for_event<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
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

async fn poll<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let e = s.edge(args)?;
    let name = str_arg(args, "wait")?;
    let job = args.get("job").and_then(Value::as_str);
    let wait = e.runtime.find_wait(job, name).await?;
    wait_json(s, &e, &wait).await
}

async fn wait_json<S: SessionStore>(s: &Session<S>, e: &Edge<S>, wait: &Wait) -> OpResult {
    let event = e.runtime.wait_event(wait).await?;
    Ok(views::wait(wait, event.as_ref(), s.clock.now_ts()))
}

async fn job<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let e = s.edge(args)?;
    let id = str_arg(args, "job")?;
    let job = e.runtime.job(id).await?;
    let waits = e.store.waits_of_job(id).await?;
    let steps = e.store.steps_of_job(id).await?;
    Ok(views::job(&job, &waits, &steps, s.clock.now_ts()))
}

async fn deliver<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
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

async fn fires<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let e = s.edge(args)?;
    let mut out = Vec::new();
    for fire in e.store.fires().await? {
        let event = e.runtime.fire_event(&fire).await?;
        out.push(views::fire(&fire, event.as_ref()));
    }
    Ok(json!({"fires": out}))
}

async fn outputs<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let e = s.edge(args)?;
    let job = str_arg(args, "job")?;
    let outputs: Vec<Value> = e
        .store
        .outputs(job)
        .await?
        .iter()
        .map(views::output)
        .collect();
    Ok(json!({"outputs": outputs}))
}

async fn audit<S: SessionStore>(s: &Session<S>, args: &Value) -> OpResult {
    let e = s.edge(args)?;
    let prefix = args.get("action").and_then(Value::as_str).unwrap_or("");
    let records: Vec<Value> = e
        .store
        .audit()
        .await?
        .iter()
        .filter(|r| r.action.starts_with(prefix))
        .map(views::audit)
        .collect();
    Ok(json!({"records": records}))
}
