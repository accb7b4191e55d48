//! The two-stage pipeline of grouped deliveries on `PostgreSQL` (`Runtime::ingest`: stage 1
//! retains a batch and queues the events still to route, stage 2 routes batches of them) as an
//! attacker would try it: duplicates answered before their event is routed, batches of the two
//! stages that do not line up, redeliveries while the first delivery is routing, callers that
//! hang up between the stages, waits registered while events are in flight, an edge that dies
//! with batches in flight, connections terminated and rows the database refuses in the middle;
//! and the order routing takes its locks in.
//!
//! The stages are held still from outside, so that what is asserted does not depend on timing:
//! a wait row locked `FOR UPDATE` holds stage 2 (routing locks its candidate waits), and an
//! uncommitted insert of an event's identity holds stage 1 (retention's insert waits for it).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use std::time::Duration;

use ozcheck_runtime::clock::{ManualClock, Timestamp};
use ozcheck_runtime::model::{Event, WaitState};
use ozcheck_runtime::store::{PostgresStore, Store};
use serde_json::json;
use sqlx::Connection;
use tokio::task::JoinHandle;

mod fixtures;
mod pg;
mod pg_edges;

use fixtures::{config, event};
use pg_edges::{Answer, Rt, connect, job, schema, spawn_ingest};

/// The longest any one delivery may take before it counts as hung.
const HANG: Duration = Duration::from_secs(15);

async fn edge_named(url: &str, name: &str, app: &str, clock: &ManualClock) -> Rt {
    pg_edges::edge_named(url, name, app, clock, config()).await
}

async fn edge(url: &str, clock: &ManualClock) -> Rt {
    edge_named(url, "edge-0", "ozcheck_pipeline_attack", clock).await
}

/// A job `job` with a wait `w` on `subject`; returns the wait's sequence.
async fn job_waiting_on(rt: &Rt, job_id: &str, subject: &str) -> i64 {
    job(rt, job_id).await;
    rt.wait_for_event(job_id, "w", &json!({"source": "ci", "subject": subject}))
        .await
        .unwrap()
        .seq
}

async fn actions<S: Store>(store: &S, action: &str) -> usize {
    let audit = store.audit().await.unwrap();
    audit.iter().filter(|r| r.action == action).count()
}

/// A delivery's answer, or a failure if it hung.
async fn answer(task: JoinHandle<Answer>, what: &str) -> Answer {
    pg_edges::answer(task, what, HANG).await
}

/// `rt.ingest(ev)`, bounded.
async fn ingest(rt: &Rt, ev: &Event) -> Answer {
    match tokio::time::timeout(HANG, rt.ingest(ev)).await {
        Ok(answer) => answer.map_err(|e| e.0),
        Err(elapsed) => panic!("{}: the delivery hung ({elapsed} after {HANG:?})", ev.id),
    }
}

/// The identities of the events still to route.
async fn unrouted(rt: &Rt) -> HashSet<String> {
    rt.store()
        .unrouted(Timestamp(i64::MAX), 100_000)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.event.id.clone())
        .collect()
}

/// A delivery to the edge after everything given to it so far: both stages take their work in
/// arrival order, so once it is answered every event retained before it has been routed (or
/// its routing failed).
async fn drain(rt: &Rt, id: &str) {
    let answer = ingest(rt, &event(id, "drain")).await;
    assert!(
        matches!(answer, Ok(Some(_))),
        "the draining delivery {id}: {answer:?}"
    );
}

/// A connection holding the row lock of wait `seq` in an open transaction: stage 2 stops on
/// any routing that has that wait for a candidate.
async fn lock_wait(url: &str, seq: i64) -> sqlx::PgConnection {
    let mut conn = connect(url).await;
    sqlx::raw_sql("BEGIN").execute(&mut conn).await.unwrap();
    sqlx::query("SELECT 1 FROM waits WHERE seq = $1 FOR UPDATE")
        .bind(seq)
        .execute(&mut conn)
        .await
        .unwrap();
    conn
}

async fn end_tx(mut conn: sqlx::PgConnection, how: &str) {
    sqlx::raw_sql(sqlx::AssertSqlSafe(how.to_owned()))
        .execute(&mut conn)
        .await
        .unwrap();
}

async fn release(conn: sqlx::PgConnection) {
    end_tx(conn, "COMMIT").await;
}

/// A connection holding an uncommitted insert of the event `ci/<id>`: a retention that inserts
/// the same identity waits for it. Rolled back ([`open_gate`]), the retention's own insert
/// goes ahead (the event is new).
async fn gate(url: &str, id: &str) -> sqlx::PgConnection {
    let mut conn = connect(url).await;
    sqlx::raw_sql("BEGIN").execute(&mut conn).await.unwrap();
    sqlx::query(
        "INSERT INTO events (source, event_id, type, action, subject, text, attributes, \
         received_at) VALUES ('ci', $1, 't', '', 'nobody', '', '{}', 0)",
    )
    .bind(id)
    .execute(&mut conn)
    .await
    .unwrap();
    conn
}

async fn open_gate(conn: sqlx::PgConnection) {
    end_tx(conn, "ROLLBACK").await;
}

/// Holds stage 1 of `rt`: a delivery of `id` is retained behind [`gate`]; what arrives next
/// waits to be retained together in the batch after it. Returns the gate and that delivery.
async fn hold_stage_1(rt: &Rt, url: &str, id: &str) -> (sqlx::PgConnection, JoinHandle<Answer>) {
    let gate = gate(url, id).await;
    let task = spawn_ingest(rt, event(id, "nobody"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!task.is_finished(), "the gated delivery {id} is retaining");
    (gate, task)
}

/// Holds stage 2 of `rt`: a job `blk` waits on subject `blk`, its wait row is locked from
/// outside, and a delivery for it is retained and stuck routing; events retained next wait for
/// stage 2 behind it. Returns the lock and that delivery.
async fn hold_stage_2(rt: &Rt, url: &str) -> (sqlx::PgConnection, JoinHandle<Answer>) {
    let seq = job_waiting_on(rt, "blk", "blk").await;
    let lock = lock_wait(url, seq).await;
    let task = spawn_ingest(rt, event("blk-e", "blk"));
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert!(!task.is_finished(), "blk-e is stuck routing");
    (lock, task)
}

/// Both stages of `rt` held with deliveries behind each: jobs `j0…` wait on subjects `s0…`
/// (`n` of them); stage 2 is held ([`hold_stage_2`]) with `e0…` of the first half retained
/// behind it, and stage 1 ([`hold_stage_1`], on `g`) with the second half waiting to be
/// retained. Returns the wait's lock, the gate and every delivery by id.
async fn both_stages_held(
    rt: &Rt,
    url: &str,
    n: usize,
) -> (
    sqlx::PgConnection,
    sqlx::PgConnection,
    Vec<(String, JoinHandle<Answer>)>,
) {
    for i in 0..n {
        job_waiting_on(rt, &format!("j{i}"), &format!("s{i}")).await;
    }
    let (lock, stuck) = hold_stage_2(rt, url).await;
    let mut tasks = vec![("blk-e".to_owned(), stuck)];
    for i in 0..n / 2 {
        let id = format!("e{i}");
        tasks.push((id.clone(), spawn_ingest(rt, event(&id, &format!("s{i}")))));
    }
    until_retained(url, 1 + (n / 2) as i64).await;
    let (gate, gated) = hold_stage_1(rt, url, "g").await;
    tasks.push(("g".to_owned(), gated));
    for i in n / 2..n {
        let id = format!("e{i}");
        tasks.push((id.clone(), spawn_ingest(rt, event(&id, &format!("s{i}")))));
    }
    (lock, gate, tasks)
}

/// How many events are retained (committed).
async fn retained_count(url: &str) -> i64 {
    let mut conn = connect(url).await;
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM events")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    conn.close().await.unwrap();
    n
}

/// Waits (bounded) until `n` events are retained, then a little longer, so that the batch
/// that retained the last of them has queued them for stage 2.
async fn until_retained(url: &str, n: i64) {
    for _ in 0..200 {
        if retained_count(url).await >= n {
            tokio::time::sleep(Duration::from_millis(200)).await;
            return;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!(
        "{n} events were never retained ({} are)",
        retained_count(url).await
    );
}

/// Terminates the server processes of every connection named `app`, or of those waiting for
/// the locks of the connection `holder`; returns how many.
async fn terminate(url: &str, app: Option<&str>, holder: Option<i32>) -> i64 {
    let mut conn = connect(url).await;
    let n: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT pg_terminate_backend(pid) FROM pg_stat_activity \
         WHERE pid <> pg_backend_pid() AND (application_name = $1 \
         OR $2::int = ANY(pg_blocking_pids(pid)))) AS t",
    )
    .bind(app)
    .bind(holder)
    .fetch_one(&mut conn)
    .await
    .unwrap();
    conn.close().await.unwrap();
    n
}

async fn backend_pid(conn: &mut sqlx::PgConnection) -> i32 {
    sqlx::query_scalar("SELECT pg_backend_pid()")
        .fetch_one(conn)
        .await
        .unwrap()
}

/// A small deterministic generator (no dependency, the same run every time).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self, below: u64) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        (self.0 >> 33) % below.max(1)
    }

    fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.next(i as u64 + 1) as usize;
            items.swap(i, j);
        }
    }
}

/// Two deliveries of one event that are retained in the same batch: the second is a duplicate
/// (200), and it must not be answered before the event is routed. Stage 2 is held on the
/// event's wait, so the event cannot be routed; neither delivery may be answered Ok meanwhile.
/// (Before the pipeline, a batch answered its callers after its routing transaction.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_in_one_batch_is_not_answered_before_its_event_is_routed() {
    let Some((url, clock)) = schema("a_duplicate_in_one_batch_is_not_answered_before").await else {
        return;
    };
    let rt = edge(&url, &clock).await;
    let w = job_waiting_on(&rt, "j", "s").await;
    let lock = lock_wait(&url, w).await;
    let (gate, gated) = hold_stage_1(&rt, &url, "g").await;
    // Both queued behind the gated batch: the next batch is [e, e].
    let first = spawn_ingest(&rt, event("e", "s"));
    let second = spawn_ingest(&rt, event("e", "s"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    open_gate(gate).await;
    assert!(matches!(answer(gated, "g").await, Ok(Some(_))));
    until_retained(&url, 2).await;
    tokio::time::sleep(Duration::from_millis(700)).await;
    // The wait row is locked: e's routing cannot have committed.
    let still_unrouted = unrouted(&rt).await.contains("e");
    let wait_state = rt.store().wait("j", "w").await.unwrap().unwrap().state;
    let mut early = Vec::new();
    for (name, task) in [("first", &first), ("second", &second)] {
        if task.is_finished() {
            early.push(name);
        }
    }
    // Let everything finish before asserting, so a failure leaves no stuck task behind.
    release(lock).await;
    let answers = [answer(first, "first").await, answer(second, "second").await];
    assert!(
        early.is_empty(),
        "the {early:?} delivery of e was answered while e was still to route (unrouted: \
         {still_unrouted}, its wait {wait_state:?}); answers: {answers:?}"
    );
    let new = answers.iter().filter(|a| matches!(a, Ok(Some(_)))).count();
    let dup = answers.iter().filter(|a| matches!(a, Ok(None))).count();
    assert_eq!((new, dup), (1, 1), "{answers:?}");
    let wait = rt.store().wait("j", "w").await.unwrap().unwrap();
    assert_eq!(wait.event, Some(("ci".into(), "e".into())));
    assert!(unrouted(&rt).await.is_empty());
}

/// The same two deliveries in one batch, and then the routing of their event fails (its
/// connection is terminated). The first delivery is answered with the error, as it should be;
/// the duplicate must not have been answered Ok: an event one of whose deliveries was answered
/// Ok is routed. (A sender told 200 does not retry; the event is left to route.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_duplicate_answered_ok_never_leaves_its_event_unrouted_when_routing_fails() {
    let Some((url, clock)) =
        schema("a_duplicate_answered_ok_never_leaves_its_event_unrouted").await
    else {
        return;
    };
    let rt = edge(&url, &clock).await;
    let w = job_waiting_on(&rt, "j", "s").await;
    let mut lock = lock_wait(&url, w).await;
    let holder = backend_pid(&mut lock).await;
    let (gate, gated) = hold_stage_1(&rt, &url, "g").await;
    let first = spawn_ingest(&rt, event("e", "s"));
    let second = spawn_ingest(&rt, event("e", "s"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    open_gate(gate).await;
    assert!(matches!(answer(gated, "g").await, Ok(Some(_))));
    until_retained(&url, 2).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The routing transaction waiting for the wait's lock fails.
    let killed = terminate(&url, None, Some(holder)).await;
    assert!(killed >= 1, "no routing was waiting for the wait's lock");
    let answers = [answer(first, "first").await, answer(second, "second").await];
    release(lock).await;
    let ok = answers.iter().any(Result::is_ok);
    let left = unrouted(&rt).await;
    assert!(
        !ok || !left.contains("e"),
        "a delivery of e was answered Ok, but e was left unrouted; answers: {answers:?}"
    );
}

/// Stage 1 retains a batch in identity order ([ya, zb] numbered ya first) and queues it for
/// stage 2 in the order the callers came (zb, then ya). When stage 2's queue holds other
/// events before them, its batch of at most a group may end between the two: zb is then
/// routed in one batch and ya in the next. Both match one wait: the wait must get ya,
/// numbered first, as one delivery after another (and the batches before the pipeline) would
/// give it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_retained_batch_split_by_stage_2_is_still_routed_in_sequence_order() {
    let Some((url, clock)) = schema("a_retained_batch_split_by_stage_2").await else {
        return;
    };
    let rt = edge(&url, &clock).await;
    let group = rt.store().group_size();
    assert!(group > 2, "the PostgreSQL store groups deliveries: {group}");
    job_waiting_on(&rt, "j", "s").await;
    // Stage 2 busy with [blk-e].
    let (lock, stuck) = hold_stage_2(&rt, &url).await;
    // Stage 1 busy with [g]; g will be new, and queued for stage 2 first.
    let (gate, gated) = hold_stage_1(&rt, &url, "g").await;
    // The next retained batch: a group less two others and zb, then ya last (a group in all).
    let mut tasks = Vec::new();
    for i in 0..group - 2 {
        tasks.push(spawn_ingest(&rt, event(&format!("f{i:03}"), "none")));
    }
    let zb = spawn_ingest(&rt, event("zb", "s"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    let ya = spawn_ingest(&rt, event("ya", "s"));
    tokio::time::sleep(Duration::from_millis(300)).await;
    open_gate(gate).await;
    // blk-e, g and the group.
    until_retained(&url, 2 + group as i64).await;
    release(lock).await;
    assert!(matches!(answer(stuck, "blk-e").await, Ok(Some(_))));
    assert!(matches!(answer(gated, "g").await, Ok(Some(_))));
    for (i, t) in tasks.into_iter().enumerate() {
        assert!(matches!(answer(t, &format!("f{i:03}")).await, Ok(Some(_))));
    }
    let zb = answer(zb, "zb").await.unwrap().expect("zb is new");
    let ya = answer(ya, "ya").await.unwrap().expect("ya is new");
    assert!(
        ya.seq < zb.seq,
        "retention numbers a batch in identity order: ya {}, zb {}",
        ya.seq,
        zb.seq
    );
    let wait = rt.store().wait("j", "w").await.unwrap().unwrap();
    assert_eq!(
        wait.event,
        Some(("ci".into(), "ya".into())),
        "ya is {}, zb is {}: the wait must get the one numbered first",
        ya.seq,
        zb.seq
    );
    assert!(unrouted(&rt).await.is_empty());
}

/// Two edges on one database under a load that keeps stage 2 behind stage 1 (each round
/// starts with a slow routing on each edge, a wait row locked for a moment, as a busy row
/// would): pairs of events for one wait each, every pair delivered to one edge (each event
/// twice, at once, in shuffled order among the other pairs), and noise on both. The promises:
/// every delivery answered, each event new once, and every wait got the first by sequence of
/// its pair (both are retained, by the same edge).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pairs_under_load_on_two_edges_give_each_wait_the_first_of_its_pair() {
    const PAIRS: usize = 200;
    const ROUNDS: usize = 3;
    let Some((url, clock)) = schema("pairs_under_load_on_two_edges").await else {
        return;
    };
    let edges = [
        edge_named(&url, "edge-0", "ozcheck_pairs_0", &clock).await,
        edge_named(&url, "edge-1", "ozcheck_pairs_1", &clock).await,
    ];
    let mut rng = Lcg(7);
    let mut wrong = Vec::new();
    let mut distinct = 0;
    let mut retained = 0;
    for round in 0..ROUNDS {
        for p in 0..PAIRS {
            job_waiting_on(
                &edges[p % 2],
                &format!("r{round}p{p}"),
                &format!("r{round}s{p}"),
            )
            .await;
        }
        let slow =
            job_waiting_on(&edges[0], &format!("r{round}blk"), &format!("r{round}blk")).await;
        let lock = lock_wait(&url, slow).await;
        let slow: Vec<_> = edges
            .iter()
            .enumerate()
            .map(|(e, edge)| {
                spawn_ingest(
                    edge,
                    event(&format!("r{round}blk{e}"), &format!("r{round}blk")),
                )
            })
            .collect();
        retained += 2;
        until_retained(&url, retained).await;
        let mut deliveries: Vec<(usize, Event)> = Vec::new();
        for p in 0..PAIRS {
            for (k, id) in ["a", "b"].into_iter().enumerate() {
                // Identity order is not the pair's order: the name says which comes first.
                let name = if (p + k) % 2 == 0 { "x" } else { "y" };
                let ev = event(&format!("r{round}{name}{p}{id}"), &format!("r{round}s{p}"));
                deliveries.push((p % 2, ev.clone()));
                deliveries.push((p % 2, ev));
            }
        }
        for n in 0..PAIRS {
            deliveries.push((n % 2, event(&format!("r{round}n{n}"), "none")));
        }
        distinct += 3 * PAIRS + 2;
        rng.shuffle(&mut deliveries);
        let tasks: Vec<(String, JoinHandle<Answer>)> = deliveries
            .into_iter()
            .map(|(e, ev)| (ev.id.clone(), spawn_ingest(&edges[e], ev)))
            .collect();
        retained += 3 * PAIRS as i64;
        until_retained(&url, retained).await;
        release(lock).await;
        for (e, t) in slow.into_iter().enumerate() {
            assert!(answer(t, &format!("r{round}blk{e}")).await.is_ok());
        }
        let mut new: HashMap<String, usize> = HashMap::new();
        for (id, t) in tasks {
            match answer(t, &id).await {
                Ok(Some(_)) => *new.entry(id).or_default() += 1,
                Ok(None) => {}
                Err(e) => panic!("{id}: {e}"),
            }
        }
        assert_eq!(new.len(), 3 * PAIRS, "round {round}: each event new once");
        assert!(new.values().all(|&n| n == 1), "round {round}: {new:?}");
        let store = edges[0].store();
        for p in 0..PAIRS {
            let mut seqs = Vec::new();
            for (k, id) in ["a", "b"].into_iter().enumerate() {
                let name = if (p + k) % 2 == 0 { "x" } else { "y" };
                let id = format!("r{round}{name}{p}{id}");
                let stored = store.event("ci", &id).await.unwrap().unwrap();
                seqs.push((stored.seq, id));
            }
            seqs.sort();
            let wait = store
                .wait(&format!("r{round}p{p}"), "w")
                .await
                .unwrap()
                .unwrap();
            let got = wait.event.map(|e| e.1);
            if got.as_deref() != Some(seqs[0].1.as_str()) {
                wrong.push(format!("pair r{round}p{p} {seqs:?}: the wait got {got:?}"));
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "{} waits got the later event of their pair, e.g. {:?}",
        wrong.len(),
        &wrong[..wrong.len().min(5)]
    );
    let store = edges[0].store();
    assert_eq!(actions(&**store, "event.received").await, distinct);
    assert_eq!(actions(&**store, "event.match").await, ROUNDS * (PAIRS + 1));
    assert!(unrouted(&edges[0]).await.is_empty());
}

/// Redeliveries of an event, each retained in a batch of its own, while its first delivery is
/// stuck in stage 2: each finds it retained and not routed, and is answered only once it is
/// routed. Then one is new, the others duplicates, the wait got it, nothing is left to route.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn redeliveries_while_the_first_delivery_routes_wait_for_the_routing() {
    let Some((url, clock)) = schema("redeliveries_while_the_first_delivery_routes").await else {
        return;
    };
    let rt = edge(&url, &clock).await;
    let w = job_waiting_on(&rt, "j", "s").await;
    let lock = lock_wait(&url, w).await;
    let mut tasks = Vec::new();
    for _ in 0..6 {
        tasks.push(spawn_ingest(&rt, event("e", "s")));
        tokio::time::sleep(Duration::from_millis(150)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    let early = tasks.iter().filter(|t| t.is_finished()).count();
    release(lock).await;
    let mut answers = Vec::new();
    for (i, t) in tasks.into_iter().enumerate() {
        answers.push(answer(t, &format!("delivery {i}")).await);
    }
    assert_eq!(
        early, 0,
        "{early} deliveries were answered while e was still to route: {answers:?}"
    );
    assert!(matches!(answers[0], Ok(Some(_))), "{answers:?}");
    assert!(
        answers[1..].iter().all(|a| matches!(a, Ok(None))),
        "{answers:?}"
    );
    let wait = rt.store().wait("j", "w").await.unwrap().unwrap();
    assert_eq!(wait.event, Some(("ci".into(), "e".into())));
    assert_eq!(actions(&**rt.store(), "event.received").await, 1);
    assert_eq!(actions(&**rt.store(), "event.match").await, 1);
    assert!(unrouted(&rt).await.is_empty());
}

/// Many identities, each delivered many times at once to one edge, so that each is given again
/// in the same batch and in the batches after while it is routing. Every delivery answered Ok
/// must find its event routed (not still to route, its wait not open) the moment it returns.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_identity_given_many_times_is_routed_before_any_delivery_is_answered() {
    const IDS: usize = 40;
    const TIMES: usize = 12;
    let Some((url, clock)) = schema("an_identity_given_many_times_is_routed").await else {
        return;
    };
    let rt = edge(&url, &clock).await;
    for i in 0..IDS {
        job_waiting_on(&rt, &format!("j{i}"), &format!("s{i}")).await;
    }
    let mut rng = Lcg(11);
    let mut order: Vec<usize> = (0..IDS * TIMES).map(|n| n % IDS).collect();
    rng.shuffle(&mut order);
    let mut tasks = Vec::new();
    for i in order {
        let rt = rt.clone();
        tasks.push(tokio::spawn(async move {
            let answer = rt.ingest(&event(&format!("e{i}"), &format!("s{i}"))).await;
            // Checked at once, before anything else can route it.
            let mut early = None;
            if answer.is_ok() {
                let left = unrouted(&rt).await.contains(&format!("e{i}"));
                let wait = rt
                    .store()
                    .wait(&format!("j{i}"), "w")
                    .await
                    .unwrap()
                    .unwrap();
                if left || wait.state == WaitState::Open {
                    early = Some(format!(
                        "e{i} answered {answer:?} while still to route ({left}), its wait {:?}",
                        wait.state
                    ));
                }
            }
            (i, answer.map_err(|e| e.0), early)
        }));
    }
    let mut new = vec![0; IDS];
    let mut early = Vec::new();
    for t in tasks {
        let (i, answer, too_early) = tokio::time::timeout(HANG, t)
            .await
            .expect("a delivery hung")
            .unwrap();
        match answer {
            Ok(Some(_)) => new[i] += 1,
            Ok(None) => {}
            Err(e) => panic!("e{i}: {e}"),
        }
        early.extend(too_early);
    }
    assert!(
        early.is_empty(),
        "{} deliveries answered before their event was routed, e.g. {:?}",
        early.len(),
        &early[..early.len().min(3)]
    );
    assert!(
        new.iter().all(|&n| n == 1),
        "new answers by identity: {new:?}"
    );
    assert_eq!(actions(&**rt.store(), "event.received").await, IDS);
    assert_eq!(actions(&**rt.store(), "event.match").await, IDS);
    assert!(unrouted(&rt).await.is_empty());
}

/// Callers that hang up while their events wait between the stages (retained, queued behind a
/// stuck routing) and while they wait to be retained (queued behind a stuck retention): the
/// events are still retained and routed once the stages move again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_that_hang_up_between_the_stages_stop_nothing() {
    const N: usize = 10;
    let Some((url, clock)) = schema("callers_that_hang_up_between_the_stages").await else {
        return;
    };
    let rt = edge(&url, &clock).await;
    for i in 0..2 * N {
        job_waiting_on(&rt, &format!("j{i}"), &format!("s{i}")).await;
    }
    let (lock, stuck) = hold_stage_2(&rt, &url).await;
    let mut between = Vec::new();
    for i in 0..N {
        between.push(spawn_ingest(&rt, event(&format!("e{i}"), &format!("s{i}"))));
    }
    // blk-e and the N.
    until_retained(&url, 1 + N as i64).await;
    let (gate, gated) = hold_stage_1(&rt, &url, "g").await;
    let mut queued = Vec::new();
    for i in N..2 * N {
        queued.push(spawn_ingest(&rt, event(&format!("e{i}"), &format!("s{i}"))));
    }
    tokio::time::sleep(Duration::from_millis(300)).await;
    for t in between.iter().chain(&queued) {
        t.abort();
    }
    for t in between.into_iter().chain(queued) {
        let _ = tokio::time::timeout(HANG, t)
            .await
            .expect("an aborted caller hung");
    }
    open_gate(gate).await;
    release(lock).await;
    assert!(matches!(answer(stuck, "blk-e").await, Ok(Some(_))));
    assert!(matches!(answer(gated, "g").await, Ok(Some(_))));
    drain(&rt, "drain").await;
    assert!(unrouted(&rt).await.is_empty(), "{:?}", unrouted(&rt).await);
    for i in 0..2 * N {
        let wait = rt
            .store()
            .wait(&format!("j{i}"), "w")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(
            wait.event,
            Some(("ci".into(), format!("e{i}"))),
            "e{i}, whose caller hung up, was not routed to its wait"
        );
    }
    assert_eq!(actions(&**rt.store(), "event.received").await, 2 * N + 3);
    assert_eq!(actions(&**rt.store(), "event.match").await, 2 * N + 1);
}

/// Callers aborted at spread moments of both stages, round after round: whatever was retained
/// is routed to its wait, whatever was not is not, the audit is exact, nothing is left to
/// route, and the edge still answers.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn callers_aborted_at_random_leave_nothing_unrouted() {
    const ROUNDS: usize = 12;
    const PER: usize = 50;
    let Some((url, clock)) = schema("callers_aborted_at_random_leave_nothing_unrouted").await
    else {
        return;
    };
    let rt = edge(&url, &clock).await;
    let mut rng = Lcg(3);
    let mut ids = Vec::new();
    for round in 0..ROUNDS {
        for i in 0..PER {
            job_waiting_on(&rt, &format!("r{round}j{i}"), &format!("r{round}s{i}")).await;
        }
        let mut tasks = Vec::new();
        for i in 0..PER {
            // Some given twice.
            let times = if i % 7 == 0 { 2 } else { 1 };
            for _ in 0..times {
                tasks.push(spawn_ingest(
                    &rt,
                    event(&format!("r{round}e{i}"), &format!("r{round}s{i}")),
                ));
            }
            ids.push((format!("r{round}j{i}"), format!("r{round}e{i}")));
        }
        for t in &tasks {
            if rng.next(3) == 0 {
                tokio::time::sleep(Duration::from_micros(rng.next(3000))).await;
                t.abort();
            }
        }
        for t in tasks {
            match tokio::time::timeout(HANG, t).await {
                Ok(Ok(Err(e))) => panic!("round {round}: {e}"),
                Ok(_) => {}
                Err(elapsed) => panic!("round {round}: a delivery hung ({elapsed})"),
            }
        }
    }
    drain(&rt, "drain").await;
    assert!(unrouted(&rt).await.is_empty(), "{:?}", unrouted(&rt).await);
    let mut retained = 0;
    for (j, e) in &ids {
        let stored = rt.store().event("ci", e).await.unwrap();
        let wait = rt.store().wait(j, "w").await.unwrap().unwrap();
        if stored.is_some() {
            retained += 1;
            assert_eq!(wait.event, Some(("ci".into(), e.clone())), "{e} retained");
        } else {
            assert_eq!(wait.state, WaitState::Open, "{e} not retained");
        }
    }
    assert!(retained > 0);
    assert_eq!(actions(&**rt.store(), "event.received").await, retained + 1);
    assert_eq!(actions(&**rt.store(), "event.match").await, retained);
}

/// Waits registered while their events are retained and waiting for stage 2: a `since: job`
/// wait looks back and gets the first of the two by sequence; a `since: now` wait gets neither
/// when stage 2 routes them later; a wait registered before them gets the first.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waits_registered_while_events_wait_for_stage_2_get_the_right_one() {
    let Some((url, clock)) = schema("waits_registered_while_events_wait_for_stage_2").await else {
        return;
    };
    let rt = edge(&url, &clock).await;
    for j in ["early", "back", "now"] {
        job(&rt, j).await;
    }
    rt.wait_for_event("early", "w", &json!({"source": "ci", "subject": "s"}))
        .await
        .unwrap();
    let (lock, stuck) = hold_stage_2(&rt, &url).await;
    let a1 = spawn_ingest(&rt, event("zz-first", "s"));
    until_retained(&url, 2).await;
    let a2 = spawn_ingest(&rt, event("aa-second", "s"));
    until_retained(&url, 3).await;
    let back = tokio::time::timeout(
        HANG,
        rt.wait_for_event(
            "back",
            "w",
            &json!({"source": "ci", "subject": "s", "since": "job"}),
        ),
    )
    .await
    .expect("registering hung")
    .unwrap();
    let now = tokio::time::timeout(
        HANG,
        rt.wait_for_event(
            "now",
            "w",
            &json!({"source": "ci", "subject": "s", "since": "now"}),
        ),
    )
    .await
    .expect("registering hung")
    .unwrap();
    assert_eq!(now.state, WaitState::Open);
    release(lock).await;
    assert!(matches!(answer(stuck, "blk-e").await, Ok(Some(_))));
    let s1 = answer(a1, "zz-first").await.unwrap().expect("new");
    let s2 = answer(a2, "aa-second").await.unwrap().expect("new");
    assert!(s1.seq < s2.seq);
    assert_eq!(back.event, Some(("ci".into(), "zz-first".into())));
    let store = rt.store();
    for j in ["early", "back"] {
        let w = store.wait(j, "w").await.unwrap().unwrap();
        assert_eq!(w.event, Some(("ci".into(), "zz-first".into())), "{j}");
    }
    let w = store.wait("now", "w").await.unwrap().unwrap();
    assert_eq!(w.state, WaitState::Open, "since: now got {:?}", w.event);
    assert!(unrouted(&rt).await.is_empty());
}

/// An edge dies (its whole tokio runtime shut down) with a batch stuck in stage 2 and more
/// events queued behind it. Another edge on the database is not held up: its own deliveries
/// are answered, and redeliveries of the dead edge's events route them.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_edge_that_dies_mid_pipeline_strands_no_caller_of_another() {
    const N: usize = 8;
    let Some((url, clock)) = schema("an_edge_that_dies_mid_pipeline").await else {
        return;
    };
    let b = edge_named(&url, "edge-b", "ozcheck_die_b", &clock).await;
    for i in 0..N {
        job_waiting_on(&b, &format!("j{i}"), &format!("s{i}")).await;
    }
    let blk = job_waiting_on(&b, "blk", "blk").await;
    let lock = lock_wait(&url, blk).await;
    let other = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .unwrap();
    let (ready_tx, ready_rx) = tokio::sync::oneshot::channel();
    {
        let (url, clock) = (url.clone(), clock.clone());
        // Edge a lives only in `other`: its tasks hold it.
        other.spawn(async move {
            let a = edge_named(&url, "edge-a", "ozcheck_die_a", &clock).await;
            let mut held = vec![spawn_ingest(&a, event("blk-e", "blk"))];
            tokio::time::sleep(Duration::from_millis(300)).await;
            for i in 0..N {
                held.push(spawn_ingest(&a, event(&format!("e{i}"), &format!("s{i}"))));
            }
            let _ = ready_tx.send(());
            tokio::time::sleep(Duration::from_secs(3600)).await;
            drop((a, held));
        });
    }
    tokio::time::timeout(HANG, ready_rx)
        .await
        .expect("edge a never started")
        .unwrap();
    until_retained(&url, 1 + N as i64).await;
    assert_eq!(
        unrouted(&b).await.len(),
        1 + N,
        "a's events wait for its stage 2"
    );
    other.shutdown_background();
    // Edge b: a delivery of its own, and the dead edge's events again.
    assert!(matches!(
        ingest(&b, &event("own", "none")).await,
        Ok(Some(_))
    ));
    let redelivered: Vec<_> = (0..N)
        .map(|i| spawn_ingest(&b, event(&format!("e{i}"), &format!("s{i}"))))
        .collect();
    for (i, t) in redelivered.into_iter().enumerate() {
        let got = answer(t, &format!("e{i} again")).await;
        assert_eq!(got, Ok(None), "e{i} was retained by a: a duplicate");
    }
    for i in 0..N {
        let w = b
            .store()
            .wait(&format!("j{i}"), "w")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(w.event, Some(("ci".into(), format!("e{i}"))));
    }
    release(lock).await;
    assert_eq!(ingest(&b, &event("blk-e", "blk")).await, Ok(None));
    drain(&b, "drain").await;
    assert!(unrouted(&b).await.is_empty(), "{:?}", unrouted(&b).await);
    assert_eq!(actions(&**b.store(), "event.received").await, N + 3);
    assert_eq!(actions(&**b.store(), "event.match").await, N + 1);
}

/// Once a burst (with callers that hung up) is over, the pipeline's tasks end and let go of
/// the edge: dropping the last handle frees it, its connections with it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_idle_pipeline_lets_its_edge_go() {
    let Some((url, clock)) = schema("an_idle_pipeline_lets_its_edge_go").await else {
        return;
    };
    let rt = edge(&url, &clock).await;
    let mut tasks = Vec::new();
    for i in 0..300 {
        tasks.push(spawn_ingest(&rt, event(&format!("e{}", i % 200), "s")));
    }
    for (i, t) in tasks.iter().enumerate() {
        if i % 4 == 0 {
            tokio::time::sleep(Duration::from_micros(300)).await;
            t.abort();
        }
    }
    for t in tasks {
        let _ = tokio::time::timeout(HANG, t)
            .await
            .expect("a delivery hung");
    }
    drain(&rt, "drain").await;
    let weak = Arc::downgrade(&rt);
    drop(rt);
    for _ in 0..100 {
        if weak.upgrade().is_none() {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!(
        "the edge is still held {} times after its pipeline went idle",
        weak.strong_count()
    );
}

/// Every connection of the edge is terminated while stage 1 retains a batch (more queued
/// behind it) and stage 2 routes one (more queued behind it). Every caller is answered, with
/// an error or an answer; the edge recovers; redelivering what failed routes everything once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn connections_terminated_mid_pipeline_answer_every_caller() {
    const N: usize = 10;
    let Some((url, clock)) = schema("connections_terminated_mid_pipeline").await else {
        return;
    };
    let app = "ozcheck_pipeline_kill";
    let rt = edge_named(&url, "edge-k", app, &clock).await;
    let (lock, gate, tasks) = both_stages_held(&rt, &url, N).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let killed = terminate(&url, Some(app), None).await;
    assert!(killed >= 2, "terminated {killed}");
    open_gate(gate).await;
    release(lock).await;
    let mut failed = Vec::new();
    for (id, t) in tasks {
        if answer(t, &id).await.is_err() {
            failed.push(id);
        }
    }
    assert!(
        failed.contains(&"blk-e".to_owned()) && failed.contains(&"g".to_owned()),
        "the two batches in the store when their connections died failed: {failed:?}"
    );
    // The edge recovers: broken connections fail their statement and are dropped.
    let mut all: Vec<(String, String)> =
        (0..N).map(|i| (format!("e{i}"), format!("s{i}"))).collect();
    all.push(("blk-e".into(), "blk".into()));
    all.push(("g".into(), "nobody".into()));
    for (id, subject) in &all {
        let mut ok = false;
        for _ in 0..20 {
            if ingest(&rt, &event(id, subject)).await.is_ok() {
                ok = true;
                break;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        assert!(
            ok,
            "{id} was never delivered after the connections came back"
        );
    }
    drain(&rt, "drain").await;
    assert!(unrouted(&rt).await.is_empty(), "{:?}", unrouted(&rt).await);
    for i in 0..N {
        let w = rt
            .store()
            .wait(&format!("j{i}"), "w")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(w.event, Some(("ci".into(), format!("e{i}"))));
    }
    assert_eq!(actions(&**rt.store(), "event.received").await, N + 3);
    assert_eq!(actions(&**rt.store(), "event.match").await, N + 1);
}

/// A delivery with a NUL character handed to `ingest` (the door that refuses it is
/// `deliver`'s) in a batch of good ones while stage 2 is stuck: its batch fails, and only its
/// batch; its callers are answered with the error without waiting for stage 2; the event in
/// stage 2 is routed and answered when it moves again; the good ones, delivered again, are new.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_row_the_database_refuses_fails_its_batch_only_and_strands_nobody() {
    let Some((url, clock)) = schema("a_row_the_database_refuses_fails_its_batch_only").await else {
        return;
    };
    let rt = edge(&url, &clock).await;
    for i in 0..5 {
        job_waiting_on(&rt, &format!("j{i}"), &format!("s{i}")).await;
    }
    let (lock, stuck) = hold_stage_2(&rt, &url).await;
    let routing = spawn_ingest(&rt, event("good0", "s0"));
    until_retained(&url, 2).await;
    let (gate, gated) = hold_stage_1(&rt, &url, "g").await;
    let mut bad = event("bad", "s0");
    bad.text = "a\0b".into();
    let bad = spawn_ingest(&rt, bad);
    let goods: Vec<_> = (1..5)
        .map(|i| spawn_ingest(&rt, event(&format!("good{i}"), &format!("s{i}"))))
        .collect();
    tokio::time::sleep(Duration::from_millis(300)).await;
    open_gate(gate).await;
    // g is retained (and waits for stage 2); the batch after it is answered while stage 2 is
    // still stuck.
    assert!(answer(bad, "bad").await.is_err(), "PostgreSQL keeps no NUL");
    let mut failed = Vec::new();
    for (i, g) in goods.into_iter().enumerate() {
        match answer(g, &format!("good{}", i + 1)).await {
            Ok(Some(_)) => panic!("good{} was answered new while stage 2 is stuck", i + 1),
            Ok(None) => panic!("good{} was never delivered before", i + 1),
            Err(_) => failed.push(i + 1),
        }
    }
    assert!(!routing.is_finished() && !stuck.is_finished() && !gated.is_finished());
    release(lock).await;
    assert!(matches!(answer(stuck, "blk-e").await, Ok(Some(_))));
    assert!(matches!(answer(routing, "good0").await, Ok(Some(_))));
    assert!(matches!(answer(gated, "g").await, Ok(Some(_))));
    for i in failed {
        let again = ingest(&rt, &event(&format!("good{i}"), &format!("s{i}"))).await;
        assert!(matches!(again, Ok(Some(_))), "good{i} again: {again:?}");
    }
    assert!(unrouted(&rt).await.is_empty());
    for i in 0..5 {
        let w = rt
            .store()
            .wait(&format!("j{i}"), "w")
            .await
            .unwrap()
            .unwrap();
        assert_eq!(w.event, Some(("ci".into(), format!("good{i}"))));
    }
    assert_eq!(actions(&**rt.store(), "event.received").await, 7);
}

/// The edge's store is closed (a graceful stop) while stage 1 retains a batch and stage 2
/// routes another, more queued behind each: every caller is answered, with an answer or an
/// error; every event a delivery was answered Ok for is routed; the close finishes; a delivery
/// after it fails instead of hanging.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn closing_the_store_mid_pipeline_answers_every_caller() {
    const N: usize = 6;
    let Some((url, clock)) = schema("closing_the_store_mid_pipeline").await else {
        return;
    };
    let rt = edge(&url, &clock).await;
    let (lock, gate, tasks) = both_stages_held(&rt, &url, N).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let closing = {
        let store = rt.store().clone();
        tokio::spawn(async move { store.close().await })
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    open_gate(gate).await;
    release(lock).await;
    let mut ok = Vec::new();
    for (id, t) in tasks {
        if answer(t, &id).await.is_ok() {
            ok.push(id);
        }
    }
    tokio::time::timeout(HANG, closing)
        .await
        .expect("closing the store hung")
        .unwrap();
    assert!(
        ingest(&rt, &event("late", "none")).await.is_err(),
        "a delivery to a closed store"
    );
    let reader = PostgresStore::connect(&url).await.unwrap();
    let left: HashSet<String> = reader
        .unrouted(Timestamp(i64::MAX), 1000)
        .await
        .unwrap()
        .into_iter()
        .map(|s| s.event.id.clone())
        .collect();
    let lost: Vec<&String> = ok.iter().filter(|id| left.contains(*id)).collect();
    assert!(
        lost.is_empty(),
        "answered Ok but left to route: {lost:?} (Ok: {ok:?})"
    );
    reader.close().await;
}

/// Routing takes its locks in the order every routing transaction takes them: its candidate
/// waits, then their jobs (two routers that took them in different orders could deadlock).
/// The job's row is locked from outside, so routing stops at the job; by then it must hold
/// the wait, which another transaction then cannot lock (`NOWAIT` fails). A router that asked
/// for the job first would stop before it locked the wait.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn routing_holds_its_candidate_waits_before_it_asks_for_their_jobs() {
    let Some((url, clock)) = schema("routing_holds_its_candidate_waits_before").await else {
        return;
    };
    let rt = edge(&url, &clock).await;
    let seq = job_waiting_on(&rt, "j", "s").await;
    let mut job_lock = connect(&url).await;
    sqlx::raw_sql("BEGIN").execute(&mut job_lock).await.unwrap();
    sqlx::query("SELECT 1 FROM jobs WHERE id = 'j' FOR UPDATE")
        .execute(&mut job_lock)
        .await
        .unwrap();
    let holder = backend_pid(&mut job_lock).await;
    let task = spawn_ingest(&rt, event("e", "s"));

    // Until a server process of the edge waits for the job's lock.
    let mut probe = connect(&url).await;
    let waited = tokio::time::timeout(HANG, async {
        loop {
            let blocked: i64 = sqlx::query_scalar(
                "SELECT count(*) FROM pg_stat_activity WHERE $1::int = ANY(pg_blocking_pids(pid))",
            )
            .bind(holder)
            .fetch_one(&mut probe)
            .await
            .unwrap();
            if blocked > 0 {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await;
    assert!(waited.is_ok(), "routing never waited for the job's row");
    assert!(!task.is_finished(), "e is routing, behind the job's lock");

    sqlx::raw_sql("BEGIN").execute(&mut probe).await.unwrap();
    let taken = sqlx::query("SELECT 1 FROM waits WHERE seq = $1 FOR UPDATE NOWAIT")
        .bind(seq)
        .execute(&mut probe)
        .await;
    let code = taken
        .as_ref()
        .err()
        .and_then(|e| e.as_database_error())
        .and_then(|e| e.code().map(std::borrow::Cow::into_owned));
    assert_eq!(
        code.as_deref(),
        Some("55P03"),
        "while routing waits for the job, its candidate wait is locked by it: {taken:?}"
    );
    end_tx(probe, "ROLLBACK").await;

    release(job_lock).await;
    let routed = answer(task, "e").await.unwrap();
    assert!(routed.is_some(), "e is new");
    let wait = rt.store().wait_by_seq(seq).await.unwrap().unwrap();
    assert_eq!(
        wait.state,
        WaitState::Matched,
        "the wait got e once the job was free"
    );
}
