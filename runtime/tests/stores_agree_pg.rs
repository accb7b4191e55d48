//! The memory, `SQLite` and `PostgreSQL` stores given the same nasty inputs answer alike, and
//! `PostgreSQL` keeps its promises under concurrent routers and retention: an independent attack
//! on the second pass of decision 0010 (candidates read by type, a routing's and a receipt's
//! writes in one statement each, the `unrouted` table). It found that a wait whose type holds
//! a NUL character failed the candidate read of its whole source (the `jsonb` cast), and that
//! retention and routing deadlocked on the marks of events still to route (older than the
//! pass: they locked them in different orders).

// The tests keep their helpers and constants next to the step that uses them.
#![allow(clippy::items_after_statements)]

use std::collections::{HashMap, HashSet};

use ozcheck_runtime::clock::Timestamp;
use ozcheck_runtime::model::{AuditRecord, Event, Wait, WaitState};
use ozcheck_runtime::store::{
    MemoryStore, PostgresStore, Received, SqliteStore, Store, ToRoute, WaitInsert,
};
use serde_json::json;
use sqlx::Connection;

// The store contract's fixtures (its checks run in `durability.rs` and `postgres.rs`).
#[allow(dead_code)]
mod contract;
mod pg;

use contract::{candidate, job};

/// Runs `$run` on a new memory store, a new `SQLite` store and `$pg`, asserts that the three
/// answers are equal, and returns the answer.
macro_rules! on_every_backend {
    ($run:path, $pg:expr) => {{
        let memory = $run(&MemoryStore::new()).await;
        let lite = $run(&SqliteStore::in_memory().await.unwrap()).await;
        let postgres = $run($pg).await;
        assert_eq!(memory, lite, "memory vs SQLite");
        assert_eq!(memory, postgres, "memory vs PostgreSQL");
        memory
    }};
}

/// The contract's open wait, of `source`, taking `types` (`None`: any type).
fn wait(
    name: &str,
    job: &str,
    source: &str,
    subject: Option<&str>,
    types: Option<&[&str]>,
) -> Wait {
    let mut wait = contract::wait(name, job, subject, 1_000_000);
    wait.spec.source = source.into();
    wait.spec.types = types.map(|t| t.iter().map(|s| (*s).to_owned()).collect());
    wait
}

fn ev(source: &str, id: &str, kind: &str, subject: &str) -> Event {
    Event {
        source: source.into(),
        id: id.into(),
        kind: kind.into(),
        action: String::new(),
        subject: subject.into(),
        text: String::new(),
        attributes: json!({}),
    }
}

fn received(at: i64) -> AuditRecord {
    AuditRecord {
        at: Timestamp(at),
        action: "event.received".into(),
        data: json!({}),
    }
}

async fn pg_store(test: &str) -> Option<(PostgresStore, String)> {
    let pg = pg::server(test)?;
    let url = pg.fresh_url().await;
    Some((PostgresStore::connect(&url).await.unwrap(), url))
}

async fn add_wait<S: Store>(store: &S, w: &Wait) -> i64 {
    if store.job(&w.job).await.unwrap().is_none() {
        assert!(store.insert_job(&job(&w.job)).await.unwrap());
    }
    match store.insert_wait(w).await.unwrap() {
        WaitInsert::Inserted(seq) => seq,
        other => panic!("{}: {other:?}", w.name),
    }
}

const NASTY: &[&str] = &[
    "",
    "t",
    "a\"b",
    "back\\slash",
    "\\\"",
    "é",
    "e\u{301}",
    "\u{1F600}",
    "null",
    "[]",
    "{\"k\":1}",
    "\u{1}",
    "\t\n",
    "?|",
    "' OR 1=1 --",
    "\u{2028}",
    "\u{7f}",
    "\u{FEFF}",
];

/// Waits of every kind of `types`, read back for keys of every nasty type.
async fn type_matrix<S: Store>(store: &S) -> Vec<Vec<String>> {
    let mut waits: Vec<Wait> = Vec::new();
    let subjects: [Option<&str>; 4] = [None, Some(""), Some("s"), Some("s'\"\\")];
    let mut n = 0;
    for subject in subjects {
        waits.push(wait(
            &format!("w{n}-any"),
            &format!("j{n}"),
            "ci",
            subject,
            None,
        ));
        n += 1;
        waits.push(wait(
            &format!("w{n}-empty"),
            &format!("j{n}"),
            "ci",
            subject,
            Some(&[]),
        ));
        n += 1;
        for t in NASTY {
            waits.push(wait(
                &format!("w{n}-{t:?}"),
                &format!("j{n}"),
                "ci",
                subject,
                Some(&[t]),
            ));
            n += 1;
        }
        waits.push(wait(
            &format!("w{n}-pair"),
            &format!("j{n}"),
            "ci",
            subject,
            Some(&["t", "t"]),
        ));
        n += 1;
        waits.push(wait(
            &format!("w{n}-all"),
            &format!("j{n}"),
            "ci",
            subject,
            Some(NASTY),
        ));
        n += 1;
        // Another source, same subjects and types.
        waits.push(wait(
            &format!("w{n}-gh"),
            &format!("j{n}"),
            "gh",
            subject,
            Some(&["t"]),
        ));
        n += 1;
    }
    for w in &waits {
        add_wait(store, w).await;
    }
    // One closed wait that would match everything: it must never be a candidate.
    let closed = wait("closed", "jc", "ci", None, None);
    let seq = add_wait(store, &closed).await;
    store
        .close(seq, WaitState::TimedOut, None, Timestamp(5))
        .await
        .unwrap();
    let mut keys: Vec<(String, String, String)> = Vec::new();
    for subject in ["", "s", "s'\"\\", "other"] {
        for t in NASTY.iter().chain(&["x", "T", "t "]) {
            keys.push(("ci".into(), subject.into(), (*t).into()));
        }
    }
    keys.push(("gh".into(), "s".into(), "t".into()));
    keys.push(("nope".into(), "s".into(), "t".into()));
    // Duplicate keys, and one key alone.
    keys.push(("ci".into(), "s".into(), "t".into()));
    keys.push(("ci".into(), "s".into(), "t".into()));
    let mut out = Vec::new();
    let answers = store.open_waits_on_many(&keys).await.unwrap();
    assert_eq!(answers.len(), keys.len());
    for (key, waits) in keys.iter().zip(answers) {
        let seqs: Vec<i64> = waits.iter().map(|w| w.seq).collect();
        let mut sorted = seqs.clone();
        sorted.sort_unstable();
        assert_eq!(seqs, sorted, "{key:?}: in registration order");
        out.push(waits.into_iter().map(|w| w.name).collect());
    }
    // Each key alone gives what it gave in the batch.
    for (i, key) in keys.iter().enumerate().step_by(7) {
        let alone = store
            .open_waits_on_many(std::slice::from_ref(key))
            .await
            .unwrap();
        let names: Vec<String> = alone[0].iter().map(|w| w.name.clone()).collect();
        assert_eq!(names, out[i], "{key:?} alone");
    }
    out
}

/// Attack 1: JSON-special, quoted, unicode and empty types; `types: []` against NULL.
#[tokio::test]
async fn candidates_by_nasty_types_agree_on_every_backend() {
    let Some((pg, _)) = pg_store("candidates_by_nasty_types").await else {
        return;
    };
    let memory = on_every_backend!(type_matrix, &pg);
    // `types: []` takes no type.
    assert!(memory.iter().flatten().all(|n| !n.ends_with("-empty")));
}

/// Attack 2: a wait whose type holds U+0000 (serde writes `\u0000`, which the `jsonb` of `PostgreSQL`
/// refuses) must not stop the other waits on its source from being found.
#[tokio::test]
async fn a_nul_in_a_waits_type_does_not_poison_its_source() {
    let Some((pg, _)) = pg_store("a_nul_in_a_waits_type").await else {
        return;
    };
    async fn run<S: Store>(store: &S) -> Result<Vec<String>, String> {
        add_wait(store, &wait("good", "j1", "ci", None, None)).await;
        add_wait(store, &wait("nul", "j2", "ci", None, Some(&["a\u{0}b"]))).await;
        let keys = vec![("ci".to_owned(), "s".to_owned(), "t".to_owned())];
        store
            .open_waits_on_many(&keys)
            .await
            .map(|a| a[0].iter().map(|w| w.name.clone()).collect())
            .map_err(|e| e.to_string())
    }
    let memory = run(&MemoryStore::new()).await;
    let lite = run(&SqliteStore::in_memory().await.unwrap()).await;
    let postgres = run(&pg).await;
    assert_eq!(memory, Ok(vec!["good".to_owned()]));
    assert_eq!(lite, memory, "SQLite");
    assert_eq!(postgres, memory, "PostgreSQL");
}

/// The state a store ends in, comparable across backends.
async fn snapshot<S: Store>(store: &S, jobs: &[&str]) -> serde_json::Value {
    let mut waits = Vec::new();
    for j in jobs {
        for w in store.waits_of_job(j).await.unwrap() {
            waits.push(json!([w.name, format!("{:?}", w.state), w.event]));
        }
        let job = store.job(j).await.unwrap().unwrap();
        waits.push(json!([j, job.outside_started]));
    }
    let audit: Vec<serde_json::Value> = store
        .audit()
        .await
        .unwrap()
        .into_iter()
        .map(|r| json!([r.action, r.data]))
        .collect();
    let unrouted: Vec<String> = store
        .unrouted(Timestamp(i64::MAX), 1000)
        .await
        .unwrap()
        .into_iter()
        .map(|e| format!("{}/{}", e.event.source, e.event.id))
        .collect();
    json!({"waits": waits, "audit": audit, "unrouted": unrouted})
}

fn shape(r: &Received) -> serde_json::Value {
    match r {
        Received::New(s) => json!(["new", s.event.text]),
        Received::Known { stored, routed } => json!(["known", stored.event.text, routed]),
    }
}

/// Attack 3 (within the contract): a batch of distinct events, events of other sources with the
/// same ids, many candidates per job, a wait offered to two events, a candidate of a wait that
/// does not exist, events not retained; then redeliveries.
async fn routing_batch<S: Store>(store: &S) -> serde_json::Value {
    let w1 = add_wait(store, &wait("w1", "j1", "ci", Some("s"), None)).await;
    let w2 = add_wait(store, &wait("w2", "j1", "ci", None, None)).await;
    let w3 = add_wait(store, &wait("w3", "j2", "ci", None, Some(&["t"]))).await;
    let w4 = add_wait(store, &wait("w4", "j2", "ci", None, None)).await;
    let w5 = add_wait(store, &wait("w5", "j3", "gh", None, None)).await;
    let w6 = add_wait(store, &wait("w6", "j3", "gh", None, None)).await;
    let a = ev("ci", "a\"'\\", "t", "s");
    let a_gh = ev("gh", "a\"'\\", "t", "s");
    let b = ev("ci", "b", "t", "s");
    let c = ev("ci", "", "t", "s");
    let ghost = ev("ci", "never-received", "t", "s");
    let batch_in = vec![a.clone(), a_gh.clone(), b.clone(), c.clone()];
    let audits: Vec<AuditRecord> = (0..4).map(|i| received(10 + i)).collect();
    let received_first = store
        .receive_many(&batch_in, &audits, Timestamp(10))
        .await
        .unwrap();
    let first: Vec<_> = received_first.iter().map(shape).collect();
    // b and c come with their sequence numbers, as an edge routes them; a is found by its
    // identity.
    let seq_of = |i: usize| match &received_first[i] {
        Received::New(stored) => Some(stored.seq),
        other @ Received::Known { .. } => panic!("{other:?} was not new"),
    };
    let batch = vec![
        ToRoute {
            event: b.clone().into(),
            candidates: vec![
                candidate(w1, "j1"),
                candidate(w2, "j1"),
                candidate(w3, "j2"),
                candidate(w4, "j2"),
            ],
            mark_routed: true,
            seq: seq_of(2),
        },
        ToRoute {
            event: a.clone().into(),
            candidates: vec![
                candidate(w1, "j1"),
                candidate(w2, "j1"),
                candidate(w3, "j2"),
                candidate(w4, "j2"),
                candidate(9999, "j9"),
            ],
            mark_routed: true,
            seq: None,
        },
        ToRoute {
            event: a_gh.clone().into(),
            candidates: vec![
                candidate(w5, "j3"),
                candidate(w6, "j3"),
                candidate(w2, "j1"),
            ],
            mark_routed: false,
            seq: None,
        },
        ToRoute {
            event: ghost.clone().into(),
            candidates: vec![candidate(w6, "j3")],
            mark_routed: true,
            seq: None,
        },
        ToRoute {
            event: c.clone().into(),
            candidates: vec![],
            mark_routed: true,
            seq: seq_of(3),
        },
    ];
    let outcomes = store.route_many(&batch, Timestamp(20)).await.unwrap();
    let again: Vec<_> = store
        .receive_many(&batch_in, &audits, Timestamp(30))
        .await
        .unwrap()
        .iter()
        .map(shape)
        .collect();
    json!({
        "first": first,
        "outcomes": format!("{outcomes:?}"),
        "again": again,
        "state": snapshot(store, &["j1", "j2", "j3"]).await,
        "ghost": store.event("ci", "never-received").await.unwrap().is_some(),
    })
}

#[tokio::test]
async fn a_routing_batch_ends_alike_on_every_backend() {
    let Some((pg, _)) = pg_store("a_routing_batch_ends_alike").await else {
        return;
    };
    on_every_backend!(routing_batch, &pg);
}

/// Attack 5: redelivery answers before routing, after routing without and with the mark, after
/// retention, and of an event received again after retention.
async fn redeliveries<S: Store>(store: &S) -> Vec<serde_json::Value> {
    let e = ev("ci", "r", "t", "s");
    let mut out = Vec::new();
    let say = async |store: &S, at: i64| {
        let r = store
            .receive(&e, Timestamp(at), &received(at))
            .await
            .unwrap();
        let unrouted = store.unrouted(Timestamp(i64::MAX), 10).await.unwrap().len();
        json!([shape(&r), unrouted])
    };
    out.push(say(store, 10).await);
    out.push(say(store, 11).await);
    store.route(&e, &[], Timestamp(12), false).await.unwrap();
    out.push(say(store, 13).await);
    store.route(&e, &[], Timestamp(14), true).await.unwrap();
    out.push(say(store, 15).await);
    store.route(&e, &[], Timestamp(16), true).await.unwrap();
    out.push(say(store, 17).await);
    out.push(json!(store.purge_events(Timestamp(11)).await.unwrap()));
    out.push(say(store, 18).await);
    // The sweeper's bound is strict: received at 18 is not before 18.
    out.push(json!(
        store.unrouted(Timestamp(18), 10).await.unwrap().len()
    ));
    out.push(json!(
        store.unrouted(Timestamp(19), 10).await.unwrap().len()
    ));
    out.push(json!(store.unrouted(Timestamp(19), 0).await.unwrap().len()));
    store.mark_routed("ci", "r").await.unwrap();
    store.mark_routed("ci", "r").await.unwrap();
    store.mark_routed("ci", "none").await.unwrap();
    out.push(say(store, 19).await);
    out.push(json!(store.purge_events(Timestamp(100)).await.unwrap()));
    out.push(json!(
        store.unrouted(Timestamp(i64::MAX), 10).await.unwrap().len()
    ));
    let audit: Vec<_> = store
        .audit()
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.at.0)
        .collect();
    out.push(json!(audit));
    out
}

#[tokio::test]
async fn redelivery_answers_agree_on_every_backend() {
    let Some((pg, url)) = pg_store("redelivery_answers").await else {
        return;
    };
    on_every_backend!(redeliveries, &pg);
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let left: i64 = sqlx::query_scalar("SELECT count(*) FROM unrouted")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    assert_eq!(left, 0);
}

fn shuffled<T: Clone>(items: &[T], seed: u64) -> Vec<T> {
    let mut v = items.to_vec();
    let mut x = seed
        .wrapping_mul(6_364_136_223_846_793_005)
        .wrapping_add(1_442_695_040_888_963_407);
    for i in (1..v.len()).rev() {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let j = (x % (i as u64 + 1)) as usize;
        v.swap(i, j);
    }
    v
}

/// Attack 6: several pools route overlapping batches of the same events at once, with stale
/// candidate lists in different orders; afterwards every promise holds.
#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn many_pools_route_overlapping_batches_at_once() {
    let Some((first, url)) = pg_store("many_pools_route_overlapping_batches").await else {
        return;
    };
    const JOBS: usize = 12;
    const PER_JOB: usize = 3;
    const EVENTS: usize = 40;
    const POOLS: usize = 5;
    let mut waits: Vec<(i64, String)> = Vec::new();
    for j in 0..JOBS {
        for k in 0..PER_JOB {
            let types: Option<&[&str]> = if k == 1 { Some(&["t", "u"]) } else { None };
            let subject = if k == 2 { Some("s") } else { None };
            let w = wait(&format!("w{j}-{k}"), &format!("j{j}"), "ci", subject, types);
            waits.push((add_wait(&first, &w).await, format!("j{j}")));
        }
    }
    let events: Vec<Event> = (0..EVENTS)
        .map(|i| {
            ev(
                "ci",
                &format!("e{:02}", EVENTS - i),
                if i % 3 == 0 { "u" } else { "t" },
                "s",
            )
        })
        .collect();
    let audits: Vec<AuditRecord> = (0..EVENTS).map(|i| received(i as i64)).collect();
    first
        .receive_many(&events, &audits, Timestamp(5))
        .await
        .unwrap();
    let mut stores = vec![first.clone()];
    for _ in 1..POOLS {
        stores.push(PostgresStore::connect(&url).await.unwrap());
    }
    let mut tasks = Vec::new();
    for (p, store) in stores.iter().enumerate() {
        let store = store.clone();
        let events = shuffled(&events, p as u64 + 1);
        let waits = waits.clone();
        tasks.push(tokio::spawn(async move {
            let mut errors = Vec::new();
            for (b, chunk) in events.chunks(7 + p).enumerate() {
                let batch: Vec<ToRoute> = chunk
                    .iter()
                    .map(|e| ToRoute {
                        event: e.clone().into(),
                        candidates: shuffled(&waits, (p * 100 + b) as u64)
                            .iter()
                            .map(|(seq, job)| candidate(*seq, job))
                            .collect(),
                        mark_routed: b % 2 == 0,
                        seq: None,
                    })
                    .collect();
                if let Err(e) = store.route_many(&batch, Timestamp(6)).await {
                    errors.push(e.to_string());
                }
            }
            errors
        }));
    }
    let mut errors = Vec::new();
    for t in tasks {
        errors.extend(t.await.unwrap());
    }
    let mut matched = 0;
    for j in 0..JOBS {
        let mut got = HashSet::new();
        for w in first.waits_of_job(&format!("j{j}")).await.unwrap() {
            if w.state == WaitState::Matched {
                matched += 1;
                let e = w.event.clone().expect("a matched wait keeps its event");
                assert!(got.insert(e.clone()), "job j{j} got {e:?} twice");
            }
        }
    }
    let audit = first.audit().await.unwrap();
    let matches = audit.iter().filter(|r| r.action == "event.match").count();
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let ledger: i64 = sqlx::query_scalar("SELECT count(*) FROM job_events")
        .fetch_one(&mut conn)
        .await
        .unwrap();
    let dup_match_audits: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM (SELECT data FROM audit WHERE action = 'event.match' \
         GROUP BY data HAVING count(*) > 1) d",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert!(errors.is_empty(), "routing errors: {errors:?}");
    assert_eq!(matched, JOBS * PER_JOB, "every wait was offered an event");
    assert_eq!(matches, matched, "one event.match per claim");
    assert_eq!(ledger, matched as i64, "one ledger row per claim");
    assert_eq!(dup_match_audits, 0);
}

/// Receives `n` events of round `round` one by one, ids descending, so the physical order of
/// their `unrouted` rows is the reverse of identity order. Returns them with their sequence
/// numbers.
async fn receive_backwards(store: &PostgresStore, round: i64, n: usize) -> Vec<(Event, i64)> {
    let mut events = Vec::new();
    for i in (0..n).rev() {
        let e = ev("ci", &format!("r{round}-{i:02}"), "t", "s");
        let Received::New(stored) = store
            .receive(&e, Timestamp(round * 10), &received(round))
            .await
            .unwrap()
        else {
            panic!("{} was not new", e.id);
        };
        events.push((e, stored.seq));
    }
    events
}

/// Marks `events` routed through `router` while `purger` forgets them, at once; returns the
/// errors of either. Even rounds give the router the events' sequence numbers, as an edge
/// does; odd rounds leave it to find them by identity.
async fn route_and_purge_at_once(
    router: &PostgresStore,
    purger: &PostgresStore,
    events: &[(Event, i64)],
    round: i64,
) -> Vec<String> {
    let batch: Vec<ToRoute> = events
        .iter()
        .map(|(e, seq)| ToRoute {
            event: e.clone().into(),
            candidates: vec![],
            mark_routed: true,
            seq: (round % 2 == 0).then_some(*seq),
        })
        .collect();
    let route = {
        let router = router.clone();
        tokio::spawn(async move { router.route_many(&batch, Timestamp(round * 10 + 1)).await })
    };
    let purge = {
        let purger = purger.clone();
        tokio::spawn(async move { purger.purge_events(Timestamp(round * 10 + 5)).await })
    };
    let mut errors = Vec::new();
    if let Err(e) = route.await.unwrap() {
        errors.push(format!("round {round} route: {e}"));
    }
    if let Err(e) = purge.await.unwrap() {
        errors.push(format!("round {round} purge: {e}"));
    }
    errors
}

/// Attack 7: retention races routing (with marks) of events whose ids run against their
/// arrival order, and receipts of redeliveries; nothing is left half-forgotten and nothing
/// deadlocks.
#[tokio::test(flavor = "multi_thread", worker_threads = 8)]
async fn retention_races_routing_and_redelivery() {
    let Some((router, url)) = pg_store("retention_races_routing").await else {
        return;
    };
    let purger = PostgresStore::connect(&url).await.unwrap();
    let receiver = PostgresStore::connect(&url).await.unwrap();
    let mut errors: Vec<String> = Vec::new();
    let mut answers: HashMap<&'static str, usize> = HashMap::new();
    for round in 0..60i64 {
        let events = receive_backwards(&router, round, 30).await;
        let redeliver = {
            let receiver = receiver.clone();
            let events: Vec<Event> = events.iter().map(|(e, _)| e.clone()).collect();
            tokio::spawn(async move {
                let audits: Vec<AuditRecord> = events.iter().map(|_| received(round)).collect();
                receiver
                    .receive_many(&events, &audits, Timestamp(round * 10 + 2))
                    .await
            })
        };
        errors.extend(route_and_purge_at_once(&router, &purger, &events, round).await);
        match redeliver.await.unwrap() {
            Err(e) => errors.push(format!("receive: {e}")),
            Ok(rs) => {
                for r in rs {
                    let k = match r {
                        Received::New(_) => "new",
                        Received::Known { routed: true, .. } => "known routed",
                        Received::Known { routed: false, .. } => "known unrouted",
                    };
                    *answers.entry(k).or_default() += 1;
                }
            }
        }
    }
    eprintln!("redelivery answers: {answers:?}");
    let mut conn = sqlx::PgConnection::connect(&url).await.unwrap();
    let orphans: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM unrouted u WHERE NOT EXISTS (SELECT 1 FROM events e WHERE e.seq = u.seq)",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    let mismatched: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM unrouted u JOIN events e ON e.seq = u.seq \
         WHERE e.received_at <> u.received_at",
    )
    .fetch_one(&mut conn)
    .await
    .unwrap();
    assert_eq!(orphans, 0, "unrouted rows without their event");
    assert_eq!(mismatched, 0);
    assert!(errors.is_empty(), "errors: {errors:?}");
}

/// Attack 8: a receipt with many events where some are known, in one statement: the audit
/// records go to the added events by position, whatever the identity order.
#[tokio::test]
async fn receipt_records_go_to_the_events_added() {
    let Some((pg, _)) = pg_store("receipt_records_go_to_the_events_added").await else {
        return;
    };
    async fn run<S: Store>(store: &S) -> serde_json::Value {
        let known = ev("ci", "m", "t", "s");
        store
            .receive(&known, Timestamp(1), &received(1))
            .await
            .unwrap();
        let events = vec![
            ev("ci", "z", "t", "s"),
            known.clone(),
            ev("gh", "m", "t", "s"),
            ev("ci", "a", "t", "s"),
            ev("ci", "\u{1F600}", "t", "s"),
        ];
        let audits: Vec<AuditRecord> = events
            .iter()
            .map(|e| AuditRecord {
                at: Timestamp(2),
                action: "event.received".into(),
                data: json!({"id": format!("{}/{}", e.source, e.id)}),
            })
            .collect();
        let rs = store
            .receive_many(&events, &audits, Timestamp(2))
            .await
            .unwrap();
        let audit: Vec<_> = store
            .audit()
            .await
            .unwrap()
            .into_iter()
            .map(|r| r.data)
            .collect();
        let unrouted: Vec<_> = store
            .unrouted(Timestamp(i64::MAX), 100)
            .await
            .unwrap()
            .into_iter()
            .map(|e| format!("{}/{}", e.event.source, e.event.id))
            .collect::<std::collections::BTreeSet<_>>()
            .into_iter()
            .collect();
        json!({"answers": rs.iter().map(shape).collect::<Vec<_>>(), "audit": audit, "unrouted": unrouted})
    }
    on_every_backend!(run, &pg);
}

/// Attack 7b: attack 7 without the receiver, the pair that deadlocked: a routing that marks
/// events routed against retention deleting the same marks (they locked them in identity order
/// and in physical order, here the reverse; both now lock them in sequence order).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn retention_and_routing_do_not_deadlock() {
    let Some((router, url)) = pg_store("retention_and_routing_do_not_deadlock").await else {
        return;
    };
    let purger = PostgresStore::connect(&url).await.unwrap();
    let mut errors: Vec<String> = Vec::new();
    for round in 0..150i64 {
        let events = receive_backwards(&router, round, 40).await;
        errors.extend(route_and_purge_at_once(&router, &purger, &events, round).await);
    }
    assert!(errors.is_empty(), "errors: {errors:?}");
}
