//! The operations of the event-wait protocol (`docs/conformance.md`), one function each, on the
//! edge a step names (`node`) of a [`Session`]: jobs and waits, deliveries, fires, audit,
//! outputs, approvals, time.

use std::time::Duration;

use serde_json::{Value, json};

use super::session::{Edge, Session, SessionStore};
use super::{NowTs, OpError, OpResult, str_arg};
use crate::args::parse_duration;
use crate::clock::Timestamp;
use crate::edge::REROUTE_AFTER;
use crate::jobs::JobStart;
use crate::model::Wait;
use crate::routes::LEASE_TERM;
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
    // sweeper lease does the work; the others find nothing to do).
    let sweepers = match args.get("node") {
        None | Some(Value::Null) => s.all(),
        Some(_) => vec![s.edge(args)?],
    };
    // A live edge sweeps on every tick of its clock; here the clock stops at each instant where
    // a tick would do something (a deadline, an event left unrouted or a registration left
    // without its look-back for `REROUTE_AFTER`), in order, so that the work happens in the
    // order a live edge would do it (an event its router left is routed to a wait before that
    // wait's later deadline).
    loop {
        let Some(next) = next_work(&sweepers[0]).await? else {
            break;
        };
        if next > target {
            break;
        }
        s.clock.set(next.max(s.clock.now_ts()));
        sweep(&sweepers).await?;
        if next_work(&sweepers[0]).await? == Some(next) {
            // Nobody sweeping holds the lease: its holder is not among them (it crashed, or is
            // not the edge named), so it renews it no more, and the lease is free one term
            // later at most, as for live edges; a sweeper takes it then. Still stuck after that
            // (the work itself fails), the work waits for the sweep at the end.
            s.clock
                .set(next.plus(LEASE_TERM).min(target).max(s.clock.now_ts()));
            sweep(&sweepers).await?;
            if next_work(&sweepers[0]).await? == Some(next) {
                break;
            }
        }
    }
    s.clock.set(target);
    sweep(&sweepers).await?;
    Ok(json!({"now": target.to_rfc3339()}))
}

/// The earliest instant at which an edge's sweep has work: the next deadline, the instant the
/// oldest unrouted event is left to the sweeper, the instant the oldest registration without its
/// look-back is.
async fn next_work<S: SessionStore>(edge: &Edge<S>) -> Result<Option<Timestamp>, OpError> {
    let store = &edge.store;
    let deadline = edge.runtime.next_deadline().await?;
    let unrouted = store
        .unrouted(Timestamp(i64::MAX), 1)
        .await?
        .first()
        // `unrouted` takes events received strictly before its bound.
        .map(|e| {
            e.received_at
                .plus(REROUTE_AFTER)
                .plus(Duration::from_millis(1))
        });
    let unlooked = store
        .waits_to_look_back(Timestamp(i64::MAX), 1)
        .await?
        .first()
        .map(|w| w.created_at.plus(REROUTE_AFTER));
    Ok([deadline, unrouted, unlooked].into_iter().flatten().min())
}

/// Every sweeper runs a clock tick's work at once ([`crate::Runtime::sweep`]: deadlines, then,
/// on the holder of the sweeper lease, what crashed edges left, and retention).
async fn sweep<S: SessionStore>(sweepers: &[std::sync::Arc<Edge<S>>]) -> Result<(), OpError> {
    let tasks: Vec<_> = sweepers
        .iter()
        .map(|e| {
            let runtime = e.runtime.clone();
            tokio::spawn(async move { runtime.sweep().await })
        })
        .collect();
    for task in tasks {
        task.await
            .map_err(|e| OpError::new("runtime", e.to_string()))??;
    }
    Ok(())
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
