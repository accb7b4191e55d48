//! Batches of deliveries on `PostgreSQL` (decision 0010, `group.rs`), as an attacker would try
//! them: callers that hang up at the wrong moment, a delivery no store keeps in a batch of good
//! ones, arrival order within a batch, many edges given the same events at once, look-back and
//! ended jobs racing batches. Written by a reviewer who did not write the batches; the first
//! four failed on the first version.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;

use ozcheck_runtime::clock::{ManualClock, Timestamp};
use ozcheck_runtime::model::{Event, WaitState};
use ozcheck_runtime::store::{MemoryStore, PostgresStore, Store};
use ozcheck_runtime::{JobStart, Routing, Runtime};
use serde_json::json;
use sqlx::Connection;

mod fixtures;
mod pg;

use fixtures::{config, event};

type Rt = Arc<Runtime<PostgresStore>>;

async fn edges(url: &str, n: usize, clock: &ManualClock) -> Vec<Rt> {
    let mut out = Vec::new();
    for i in 0..n {
        let store = Arc::new(PostgresStore::connect(url).await.unwrap());
        let routing = Routing::Shared {
            edge: format!("edge-{i}"),
        };
        out.push(
            Runtime::start_with(store, Arc::new(clock.clone()), config(), &routing)
                .await
                .unwrap(),
        );
    }
    out
}

async fn job(rt: &Rt, id: &str) {
    rt.start_job(&JobStart {
        id: id.into(),
        ..JobStart::default()
    })
    .await
    .unwrap();
}

async fn actions<S: Store>(store: &S, action: &str) -> usize {
    let audit = store.audit().await.unwrap();
    audit.iter().filter(|r| r.action == action).count()
}

/// The promises after a burst on the jobs `j0`, `j1`, …: each wait open or matched with an
/// event, no job given one event twice, one `event.received` per event and one `event.match`
/// per matched wait, nothing left unrouted.
async fn ledger_and_audit_are_exact(store: &PostgresStore, jobs: usize, events: usize) {
    let mut matched = 0;
    for j in 0..jobs {
        let waits = store.waits_of_job(&format!("j{j}")).await.unwrap();
        let mut got = Vec::new();
        for w in &waits {
            if w.state == WaitState::Matched {
                matched += 1;
                got.push(w.event.clone().expect("a matched wait keeps its event"));
            } else {
                assert_eq!(w.state, WaitState::Open);
            }
        }
        let n = got.len();
        got.sort();
        got.dedup();
        assert_eq!(got.len(), n, "j{j} got one event twice: {waits:?}");
    }
    assert_eq!(actions(store, "event.received").await, events);
    assert_eq!(actions(store, "event.match").await, matched);
    assert!(
        store
            .unrouted(Timestamp(i64::MAX), 10)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Polls `f` once.
async fn poll_once<F: Future + ?Sized>(f: &mut Pin<Box<F>>) -> Poll<F::Output> {
    std::future::poll_fn(|cx| Poll::Ready(f.as_mut().poll(cx))).await
}

/// A connection holding the row lock of wait `seq` in an open transaction.
async fn lock_wait(url: &str, seq: i64) -> sqlx::PgConnection {
    let mut conn = sqlx::PgConnection::connect(url).await.unwrap();
    sqlx::raw_sql("BEGIN").execute(&mut conn).await.unwrap();
    sqlx::query("SELECT 1 FROM waits WHERE seq = $1 FOR UPDATE")
        .bind(seq)
        .execute(&mut conn)
        .await
        .unwrap();
    conn
}

async fn release(mut conn: sqlx::PgConnection) {
    sqlx::raw_sql("COMMIT").execute(&mut conn).await.unwrap();
}

/// Makes `rt`'s batch task busy: a job `blk` waits on subject `blk`, its wait row is locked
/// from outside, and a delivery for it is started; its batch is stuck routing until
/// the returned connection is released. Returns the lock and the stuck delivery.
async fn stuck_leader(
    rt: &Rt,
    url: &str,
) -> (
    sqlx::PgConnection,
    tokio::task::JoinHandle<Result<Option<ozcheck_runtime::model::StoredEvent>, String>>,
) {
    job(rt, "blk").await;
    let w = rt
        .wait_for_event("blk", "blk", &json!({"source": "ci", "subject": "blk"}))
        .await
        .unwrap();
    let lock = lock_wait(url, w.seq).await;
    let task = {
        let rt = rt.clone();
        tokio::spawn(async move { rt.ingest(&event("blk-e", "blk")).await.map_err(|e| e.0) })
    };
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(
        !task.is_finished(),
        "the leader is stuck on the locked wait"
    );
    (lock, task)
}

fn spawn_ingest(
    rt: &Rt,
    ev: Event,
) -> tokio::task::JoinHandle<Result<Option<ozcheck_runtime::model::StoredEvent>, String>> {
    let rt = rt.clone();
    tokio::spawn(async move { rt.ingest(&ev).await.map_err(|e| e.0) })
}

/// A caller queued behind a batch whose future is dropped when that batch ends, before it is
/// polled again (a client that hung up, a timeout, an aborted task): a later delivery to the
/// edge is still answered. (The first version handed the lead of the next batch to that caller,
/// and it took the lead with it.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_caller_that_hangs_up_while_queued_strands_no_later_delivery() {
    let Some(pg) = pg::server("a_caller_that_hangs_up_while_queued") else {
        return;
    };
    let url = pg.fresh_url().await;
    let clock = ManualClock::new(Timestamp(1_000_000));
    let rt = edges(&url, 1, &clock).await.remove(0);
    let (e1, e2) = (event("d1", "s"), event("d2", "s"));
    let mut leader = Box::pin(rt.ingest(&e1));
    let mut follower = Box::pin(rt.ingest(&e2));
    assert!(
        poll_once(&mut leader).await.is_pending(),
        "leads, in the store"
    );
    assert!(
        poll_once(&mut follower).await.is_pending(),
        "waits behind it"
    );
    // The leader finishes and hands the lead to the follower...
    assert!(leader.await.unwrap().is_some());
    // ...whose sender hangs up before it runs.
    drop(follower);
    let later = tokio::time::timeout(Duration::from_secs(10), rt.ingest(&event("d3", "s"))).await;
    assert!(
        later.is_ok(),
        "a delivery after the dropped caller was never answered (the lead was lost)"
    );
}

/// The same, with ordinary tokio timeouts around `ingest` instead of hand polling: callers
/// that give up at random moments. Expected: a later delivery is still answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_that_time_out_at_random_never_strand_the_edge() {
    let Some(pg) = pg::server("callers_that_time_out_at_random") else {
        return;
    };
    let url = pg.fresh_url().await;
    let clock = ManualClock::new(Timestamp(1_000_000));
    let rt = edges(&url, 1, &clock).await.remove(0);
    for round in 0..20 {
        let mut tasks = Vec::new();
        for i in 0..40u64 {
            let rt = rt.clone();
            let ev = event(&format!("t{round}-{i}"), "s");
            // Deadlines spread over the time a batch takes.
            let after = Duration::from_micros(200 + (i * 7919 + round * 104_729) % 6000);
            tasks.push(tokio::spawn(async move {
                let _ = tokio::time::timeout(after, rt.ingest(&ev)).await;
            }));
        }
        for t in tasks {
            t.await.unwrap();
        }
        let probe = tokio::time::timeout(
            Duration::from_secs(10),
            rt.ingest(&event(&format!("probe{round}"), "s")),
        )
        .await;
        assert!(
            probe.is_ok(),
            "round {round}: a delivery after callers timed out was never answered"
        );
    }
}

/// The caller whose delivery started a batch hangs up after the batch's receive transaction
/// committed and before its route transaction did. The batch goes on and every other caller of
/// it is answered as new (202), as without batching. (The first version ran batches in the
/// starting caller's future: the others then ran their events alone, found them retained, and
/// were answered as duplicates.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_first_delivery_stays_new_when_the_caller_that_started_its_batch_hangs_up() {
    let Some(pg) = pg::server("a_first_delivery_stays_new") else {
        return;
    };
    let url = pg.fresh_url().await;
    let clock = ManualClock::new(Timestamp(1_000_000));
    let rt = edges(&url, 1, &clock).await.remove(0);
    job(&rt, "j").await;
    let wl = rt
        .wait_for_event("j", "wl", &json!({"source": "ci", "subject": "sl"}))
        .await
        .unwrap();
    let (lock0, first) = stuck_leader(&rt, &url).await;
    // The next batch [el, ef] will be stuck routing on wl.
    let lock1 = lock_wait(&url, wl.seq).await;
    let l = spawn_ingest(&rt, event("el", "sl"));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let f = spawn_ingest(&rt, event("ef", "nobody-waits"));
    tokio::time::sleep(Duration::from_millis(100)).await;
    release(lock0).await;
    assert!(first.await.unwrap().unwrap().is_some());
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(
        !l.is_finished() && !f.is_finished(),
        "the batch [el, ef] is stuck routing"
    );
    // The leader's sender hangs up.
    l.abort();
    let _ = l.await;
    release(lock1).await;
    let answer = tokio::time::timeout(Duration::from_secs(10), f)
        .await
        .expect("answered")
        .unwrap()
        .unwrap();
    assert_eq!(
        actions(&**rt.store(), "event.received").await,
        3,
        "blk-e, el, ef each received once"
    );
    assert!(
        answer.is_some(),
        "ef was delivered once, but it was answered as a duplicate (200)"
    );
}

/// A delivery with a NUL character in a text field, which `PostgreSQL` cannot store, is refused
/// at the door (422) on every store, and the good deliveries that arrive with it are accepted.
/// (The first version took it into a batch, and the batch's insert failed every delivery in
/// it.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_delivery_with_a_nul_character_is_refused_and_fails_nothing_else() {
    let Some(pg) = pg::server("a_delivery_with_a_nul_character_is_refused") else {
        return;
    };
    let url = pg.fresh_url().await;
    let clock = ManualClock::new(Timestamp(1_000_000));
    let rt = edges(&url, 1, &clock).await.remove(0);
    let bad = ozcheck_runtime::source::Delivery {
        headers: Vec::new(),
        body: br#"{"id":"bad","type":"t","subject":"a\u0000b"}"#.to_vec(),
    };
    let alone = rt.deliver("ci", &bad).await.unwrap();
    assert_eq!(alone.status, 422, "{alone:?}");
    // Together with good ones, queued behind a stuck batch.
    let (lock, first) = stuck_leader(&rt, &url).await;
    let bad_task = {
        let rt = rt.clone();
        tokio::spawn(async move { rt.deliver("ci", &bad).await.map_err(|e| e.0) })
    };
    let goods: Vec<_> = (1..=5)
        .map(|i| {
            let rt = rt.clone();
            let good = ozcheck_runtime::source::Delivery {
                headers: Vec::new(),
                body: format!(r#"{{"id":"good{i}","type":"t","subject":"s"}}"#).into_bytes(),
            };
            tokio::spawn(async move { rt.deliver("ci", &good).await.map_err(|e| e.0) })
        })
        .collect();
    tokio::time::sleep(Duration::from_millis(100)).await;
    release(lock).await;
    first.await.unwrap().unwrap();
    assert_eq!(bad_task.await.unwrap().unwrap().status, 422);
    for (i, g) in goods.into_iter().enumerate() {
        let answer = g.await.unwrap().unwrap();
        assert_eq!(answer.status, 202, "good{}: {answer:?}", i + 1);
    }
    assert_eq!(actions(&**rt.store(), "event.received").await, 6);
}

/// A batch routes its events in the order the store numbered them (its arrival sequence), as
/// one after another would: of two deliveries in one batch that match one wait, the wait gets
/// the one numbered first. (The receive transaction numbers a batch's events in identity order,
/// to take its locks in one order; the first version routed them in the order the callers came,
/// so a wait could get an event numbered after another that matched it.) On the memory store,
/// one after another, the wait gets the event numbered first too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_batch_routes_its_events_in_the_order_it_numbers_them() {
    let Some(pg) = pg::server("a_batch_routes_its_events_in_the_order") else {
        return;
    };
    // Reference: memory store, one after another.
    let mem = Runtime::start(
        Arc::new(MemoryStore::default()),
        Arc::new(ManualClock::new(Timestamp(1_000_000))),
        config(),
    )
    .await
    .unwrap();
    mem.start_job(&JobStart {
        id: "j".into(),
        ..JobStart::default()
    })
    .await
    .unwrap();
    mem.wait_for_event("j", "w", &json!({"source": "ci", "subject": "s"}))
        .await
        .unwrap();
    let mb = mem.ingest(&event("zb", "s")).await.unwrap().unwrap();
    let ma = mem.ingest(&event("ya", "s")).await.unwrap().unwrap();
    let mw = mem.store().wait("j", "w").await.unwrap().unwrap();
    assert_eq!(mw.event, Some(("ci".into(), "zb".into())));
    assert!(
        mb.seq < ma.seq,
        "memory: the wait's event is the first by sequence"
    );

    let url = pg.fresh_url().await;
    let clock = ManualClock::new(Timestamp(1_000_000));
    let rt = edges(&url, 1, &clock).await.remove(0);
    job(&rt, "j").await;
    rt.wait_for_event("j", "w", &json!({"source": "ci", "subject": "s"}))
        .await
        .unwrap();
    let (lock, first) = stuck_leader(&rt, &url).await;
    let b = spawn_ingest(&rt, event("zb", "s"));
    tokio::time::sleep(Duration::from_millis(100)).await;
    let a = spawn_ingest(&rt, event("ya", "s"));
    tokio::time::sleep(Duration::from_millis(100)).await;
    release(lock).await;
    first.await.unwrap().unwrap();
    let sb = b.await.unwrap().unwrap().unwrap();
    let sa = a.await.unwrap().unwrap().unwrap();
    let w = rt.store().wait("j", "w").await.unwrap().unwrap();
    let earlier = if sb.seq < sa.seq { "zb" } else { "ya" };
    assert_eq!(
        w.event,
        Some(("ci".into(), earlier.into())),
        "zb is {}, ya is {}: the wait must get the one numbered first",
        sb.seq,
        sa.seq
    );
}

/// Many edges, more than a batch of concurrent deliveries each, every event delivered to every
/// edge at once, jobs with a subject wait and an any-subject wait, some events matching
/// several jobs. The promises: no error, each event new to exactly one edge, each wait one
/// event, a job never one event twice, audit counts exact, everything routed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn many_edges_big_batches_same_events_keep_every_promise() {
    const JOBS: usize = 40;
    const EVENTS: usize = 160;
    let Some(pg) = pg::server("many_edges_big_batches") else {
        return;
    };
    let url = pg.fresh_url().await;
    let clock = ManualClock::new(Timestamp(1_000_000));
    let edges = edges(&url, 3, &clock).await;
    for j in 0..JOBS {
        let via = &edges[j % edges.len()];
        let id = format!("j{j}");
        job(via, &id).await;
        via.wait_for_event(&id, "any", &json!({"source": "ci"}))
            .await
            .unwrap();
        via.wait_for_event(
            &id,
            "sub",
            &json!({"source": "ci", "subject": format!("s{}", j % 7)}),
        )
        .await
        .unwrap();
        via.wait_for_event(
            &id,
            "sub2",
            &json!({"source": "ci", "subject": format!("s{}", j % 5)}),
        )
        .await
        .unwrap();
    }
    let mut tasks = Vec::new();
    for e in 0..EVENTS {
        for (k, edge) in edges.iter().enumerate() {
            // Same event twice on edge 0 for some.
            let reps = if k == 0 && e % 9 == 0 { 2 } else { 1 };
            for _ in 0..reps {
                tasks.push(spawn_ingest(
                    edge,
                    event(&format!("e{e}"), &format!("s{}", e % 11)),
                ));
            }
        }
    }
    let mut new = 0;
    let mut errors = Vec::new();
    for t in tasks {
        match tokio::time::timeout(Duration::from_secs(60), t).await {
            Ok(Ok(Ok(Some(_)))) => new += 1,
            Ok(Ok(Ok(None))) => {}
            Ok(Ok(Err(e))) => errors.push(e),
            Ok(Err(e)) => panic!("panicked: {e}"),
            Err(elapsed) => panic!("a delivery hung: {elapsed}"),
        }
    }
    assert!(
        errors.is_empty(),
        "{} errors: {:?}",
        errors.len(),
        &errors[..errors.len().min(3)]
    );
    assert_eq!(new, EVENTS, "each event new to exactly one delivery");
    ledger_and_audit_are_exact(edges[0].store(), JOBS, EVENTS).await;
}

/// Jobs end while batches route events to them. Ending a job locks its open waits before its
/// row, the order routing takes them in, so neither fails: no deadlock fails a delivery, an
/// unrelated delivery of the same batch, or an `end_job`. (Before, ending a job took its row
/// first; under load the database's deadlock detector ended some of each, and a batch's
/// unrelated deliveries with them.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ending_jobs_and_batches_routing_to_them_do_not_deadlock() {
    let Some(pg) = pg::server("ending_jobs_and_batches_do_not_deadlock") else {
        return;
    };
    let url = pg.fresh_url().await;
    let clock = ManualClock::new(Timestamp(1_000_000));
    let edges = edges(&url, 2, &clock).await;
    let mut unrelated_failed = Vec::new();
    let mut related_failed = 0;
    let mut end_failed = 0;
    for round in 0..15 {
        for j in 0..8 {
            let id = format!("r{round}j{j}");
            job(&edges[0], &id).await;
            edges[0]
                .wait_for_event(
                    &id,
                    "w",
                    &json!({"source": "ci", "subject": format!("r{round}s{j}")}),
                )
                .await
                .unwrap();
            edges[0]
                .wait_for_event(
                    &id,
                    "w2",
                    &json!({"source": "ci", "subject": format!("r{round}s{j}")}),
                )
                .await
                .unwrap();
        }
        let mut tasks = Vec::new();
        for j in 0..8 {
            for (k, edge) in edges.iter().enumerate() {
                tasks.push((
                    true,
                    spawn_ingest(
                        edge,
                        event(&format!("r{round}e{j}"), &format!("r{round}s{j}")),
                    ),
                ));
                for u in 0..3 {
                    tasks.push((
                        false,
                        spawn_ingest(edge, event(&format!("r{round}u{j}-{k}-{u}"), "none")),
                    ));
                }
            }
        }
        let mut ends = Vec::new();
        for j in 0..8 {
            let rt = edges[j % 2].clone();
            let id = format!("r{round}j{j}");
            ends.push(tokio::spawn(async move { rt.end_job(&id).await.is_err() }));
        }
        for (related, t) in tasks {
            if let Err(e) = t.await.unwrap() {
                if related {
                    related_failed += 1;
                } else {
                    unrelated_failed.push(e);
                }
            }
        }
        for e in ends {
            end_failed += usize::from(e.await.unwrap());
        }
    }
    assert_eq!(
        (related_failed, end_failed),
        (0, 0),
        "deliveries, ends that failed"
    );
    assert!(
        unrelated_failed.is_empty(),
        "{} unrelated deliveries failed: {:?}",
        unrelated_failed.len(),
        &unrelated_failed[..unrelated_failed.len().min(2)]
    );
}

/// Look-back registrations race with batches on two edges: each job has an any-subject wait
/// registered early, and registers more waits with `since: job` while its events are being
/// delivered (so look-back claims and batch claims race on the job's ledger). Expected: no
/// error, a job never gets one event twice, audit counts exact, everything routed.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn look_back_registrations_racing_with_batches_keep_the_ledger() {
    const JOBS: usize = 12;
    let Some(pg) = pg::server("look_back_registrations_racing_with_batches") else {
        return;
    };
    let url = pg.fresh_url().await;
    let clock = ManualClock::new(Timestamp(1_000_000));
    let edges = edges(&url, 2, &clock).await;
    for j in 0..JOBS {
        job(&edges[0], &format!("j{j}")).await;
        edges[0]
            .wait_for_event(
                &format!("j{j}"),
                "w0",
                &json!({"source": "ci", "subject": format!("s{}", j % 3)}),
            )
            .await
            .unwrap();
    }
    let mut tasks = Vec::new();
    for e in 0..90 {
        for edge in &edges {
            tasks.push(spawn_ingest(
                edge,
                event(&format!("e{e}"), &format!("s{}", e % 3)),
            ));
        }
    }
    let mut regs = Vec::new();
    for j in 0..JOBS {
        for (k, edge) in edges.iter().enumerate() {
            let rt = edge.clone();
            let id = format!("j{j}");
            regs.push(tokio::spawn(async move {
                for n in 0..3 {
                    rt.wait_for_event(
                        &id,
                        &format!("w{k}{n}x"),
                        &json!({"source": "ci", "since": "job"}),
                    )
                    .await
                    .map_err(|e| format!("{e:?}"))?;
                }
                Ok::<_, String>(())
            }));
        }
    }
    let mut errors = Vec::new();
    for t in tasks {
        if let Err(e) = tokio::time::timeout(Duration::from_secs(60), t)
            .await
            .expect("hung")
            .unwrap()
        {
            errors.push(e);
        }
    }
    for r in regs {
        if let Err(e) = tokio::time::timeout(Duration::from_secs(60), r)
            .await
            .expect("hung")
            .unwrap()
        {
            errors.push(e);
        }
    }
    assert!(errors.is_empty(), "{errors:?}");
    ledger_and_audit_are_exact(edges[0].store(), JOBS, 90).await;
}

/// Like `callers_that_time_out_at_random_never_strand_the_edge`, but the callers' tasks are
/// aborted (as a server drops a request's future when its client hangs up) at spread moments.
/// Expected: a later delivery is still answered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_aborted_at_random_never_strand_the_edge() {
    let Some(pg) = pg::server("callers_aborted_at_random") else {
        return;
    };
    let url = pg.fresh_url().await;
    let clock = ManualClock::new(Timestamp(1_000_000));
    let rt = edges(&url, 1, &clock).await.remove(0);
    for round in 0..30u64 {
        let mut tasks = Vec::new();
        for i in 0..40u64 {
            tasks.push(spawn_ingest(&rt, event(&format!("a{round}-{i}"), "s")));
        }
        for (i, t) in tasks.iter().enumerate() {
            if (i as u64 + round) % 3 == 0 {
                tokio::time::sleep(Duration::from_micros(
                    100 + (i as u64 * 7919 + round * 31) % 700,
                ))
                .await;
                t.abort();
            }
        }
        for t in tasks {
            let _ = t.await;
        }
        let probe = tokio::time::timeout(
            Duration::from_secs(10),
            rt.ingest(&event(&format!("probe{round}"), "s")),
        )
        .await;
        assert!(
            probe.is_ok(),
            "round {round}: a delivery after aborted callers was never answered"
        );
    }
}
