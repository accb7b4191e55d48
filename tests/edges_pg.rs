//! Four `ozcheck serve` processes on one `PostgreSQL` database (the acceptance of the multi-edge
//! runtime): 1,000 waits registered through random edges, 1,000 events delivered at once to
//! random edges and each delivered again to another edge; every wait matched exactly once, no
//! event twice to one job, the audit counts exact; the same with one edge killed (SIGKILL)
//! halfway through the burst and started again; and deadlines fired by the surviving edges
//! once the edge holding the sweeper lease is killed.

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use ozcheck_runtime::clock::{Clock, SystemClock};
use ozcheck_runtime::routes::{LEASE_TERM, SWEEPER_LEASE};
use ozcheck_runtime::store::{PostgresStore, Store};
use serde_json::json;

mod edges;
#[path = "../runtime/tests/pg/mod.rs"]
mod pg;

use edges::{Dice, Edge, audit, deliver, event_body, http, in_parallel, of_action, start_edges};

const EDGES: usize = 4;
/// Jobs, each with [`WAITS_PER_JOB`] waits on its own subject and as many events about it.
const JOBS: usize = 250;
const WAITS_PER_JOB: usize = 4;
const EVENTS: usize = JOBS * WAITS_PER_JOB;
/// Concurrent senders.
const SENDERS: usize = 16;

fn tokio() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("a runtime")
}

fn wait_name(job: usize, k: usize) -> String {
    format!("w{job}-{k}")
}

/// Starts the jobs and registers their waits, each through a random edge.
fn register(addrs: &[String], dice: &mut Dice) {
    let via: Vec<usize> = (0..EVENTS).map(|_| dice.below(addrs.len())).collect();
    in_parallel(JOBS, SENDERS, |job| {
        let (status, body) =
            http(&addrs[via[job]], "POST", &format!("/jobs/j{job}"), "").expect("start a job");
        assert_eq!(status, 201, "{body}");
    });
    in_parallel(EVENTS, SENDERS, |i| {
        let (job, k) = (i / WAITS_PER_JOB, i % WAITS_PER_JOB);
        let path = format!("/jobs/j{job}/waits/{}", wait_name(job, k));
        let args = json!({"source": "ci", "subject": format!("s{job}")}).to_string();
        let (status, body) = http(&addrs[via[i]], "POST", &path, &args).expect("register");
        assert_eq!((status, &body["state"]), (200, &json!("open")), "{body}");
    });
}

/// Every event twice, first to a random edge and again to another one, in a random order.
fn deliveries(dice: &mut Dice) -> Vec<(usize, usize)> {
    let mut out = Vec::with_capacity(2 * EVENTS);
    for event in 0..EVENTS {
        let first = dice.below(EDGES);
        let again = (first + 1 + dice.below(EDGES - 1)) % EDGES;
        out.push((event, first));
        out.push((event, again));
    }
    for i in (1..out.len()).rev() {
        out.swap(i, dice.below(i + 1));
    }
    out
}

fn event_id(event: usize) -> String {
    format!("e{event}")
}

/// Sends every delivery with [`SENDERS`] senders; once half of them are acknowledged, kills
/// `victim` if there is one. Returns the acknowledging statuses.
fn burst(addrs: &[String], plan: &[(usize, usize)], victim: Option<&Mutex<&mut Edge>>) -> Vec<u16> {
    let done = AtomicUsize::new(0);
    in_parallel(plan.len(), SENDERS, |i| {
        let (event, first) = plan[i];
        let body = event_body(&event_id(event), &format!("s{}", event / WAITS_PER_JOB));
        let sent = deliver(addrs, first, &body);
        if done.fetch_add(1, Ordering::SeqCst) + 1 == plan.len() / 2 {
            if let Some(victim) = victim {
                victim.lock().unwrap().kill();
            }
        }
        sent.status
    })
}

/// The checks after a burst: each wait open before is matched, by exactly one event of its
/// own subject; each event went to exactly one wait; the audit counts are exact.
fn check_outcome(addrs: &[String], statuses: &[u16], killed: bool) {
    let new = statuses.iter().filter(|s| **s == 202).count();
    let duplicates = statuses.iter().filter(|s| **s == 200).count();
    assert_eq!(new + duplicates, 2 * EVENTS, "every delivery acknowledged");
    if killed {
        // An event the killed edge had retained but not acknowledged is a duplicate when the
        // sender sends it again.
        assert!(new <= EVENTS, "{new} new");
    } else {
        assert_eq!(new, EVENTS, "each event new to exactly one edge");
    }
    let records = audit(&addrs[0]);
    assert_eq!(of_action(&records, "event.received").len(), EVENTS);
    let deliveries = of_action(&records, "event.delivery").len();
    if killed {
        assert!(deliveries >= 2 * EVENTS, "{deliveries} delivery records");
    } else {
        assert_eq!(deliveries, 2 * EVENTS);
    }
    let matches = of_action(&records, "event.match");
    assert_eq!(matches.len(), EVENTS, "one match per event");
    let mut by_wait: BTreeMap<String, String> = BTreeMap::new();
    let mut events = BTreeSet::new();
    for m in &matches {
        let (wait, id) = (
            m["data"]["wait"].as_str().unwrap(),
            m["data"]["id"].as_str().unwrap(),
        );
        let event: usize = id[1..].parse().unwrap();
        assert_eq!(
            m["data"]["job"],
            json!(format!("j{}", event / WAITS_PER_JOB)),
            "{m}: an event goes to a wait on its subject"
        );
        assert!(
            by_wait.insert(wait.to_owned(), id.to_owned()).is_none(),
            "{wait} matched twice"
        );
        assert!(
            events.insert(id.to_owned()),
            "{id} went to two waits of its job"
        );
    }
    assert_eq!(by_wait.len(), EVENTS, "every wait matched");
    let states = in_parallel(EVENTS, SENDERS, |i| {
        let name = wait_name(i / WAITS_PER_JOB, i % WAITS_PER_JOB);
        let (status, body) = http(
            &addrs[i % addrs.len()],
            "GET",
            &format!("/waits/{name}"),
            "",
        )
        .expect("read a wait");
        assert_eq!(status, 200, "{body}");
        body["state"].as_str().unwrap_or_default().to_owned()
    });
    assert!(states.iter().all(|s| s == "matched"), "{states:?}");
}

fn four_edges_route_a_burst(test: &str, kill_one: bool) {
    let Some(pg) = pg::server(test) else {
        return;
    };
    let url = tokio().block_on(pg.fresh_url());
    let dir = tempfile::tempdir().unwrap();
    let mut edges = start_edges(EDGES, &url, dir.path());
    let addrs: Vec<String> = edges.iter().map(|e| e.addr.clone()).collect();
    let mut dice = Dice::new(if kill_one { 0x5eed_0002 } else { 0x5eed_0001 });
    register(&addrs, &mut dice);
    let plan = deliveries(&mut dice);
    let started = Instant::now();
    let statuses = if kill_one {
        let victim = Mutex::new(&mut edges[EDGES - 1]);
        let statuses = burst(&addrs, &plan, Some(&victim));
        let victim = victim.into_inner().unwrap();
        assert!(!victim.is_alive());
        // What it had taken and not routed is routed by another edge (the sender's retry, the
        // sweeper) or by itself when it starts again.
        victim.restart();
        statuses
    } else {
        burst(&addrs, &plan, None)
    };
    eprintln!(
        "{test}: {} deliveries through {EDGES} edges in {:.1} s",
        plan.len(),
        started.elapsed().as_secs_f64()
    );
    check_outcome(&addrs, &statuses, kill_one);
}

#[test]
fn four_edge_processes_route_a_burst_and_its_redeliveries_exactly_once() {
    four_edges_route_a_burst("four_edge_processes_route_a_burst", false);
}

#[test]
fn four_edge_processes_lose_nothing_when_one_is_killed_halfway() {
    four_edges_route_a_burst("four_edge_processes_lose_nothing_when_one_is_killed", true);
}

/// The edges among `names` that hold the sweeper lease now (probing renews a holder's lease
/// and cannot take a lease that is held).
fn lease_holders(store: &PostgresStore, names: &[String]) -> Vec<String> {
    let now = SystemClock.now();
    let mut held = Vec::new();
    for name in names {
        let taken = tokio()
            .block_on(store.take_lease(SWEEPER_LEASE, name, now, now.plus(LEASE_TERM)))
            .expect("probe the lease");
        if taken {
            held.push(name.clone());
        }
    }
    held
}

#[test]
fn deadlines_fire_once_after_the_edge_holding_the_lease_is_killed() {
    let test = "deadlines_fire_once_after_the_edge_holding_the_lease_is_killed";
    let Some(pg) = pg::server(test) else {
        return;
    };
    let url = tokio().block_on(pg.fresh_url());
    let store = tokio().block_on(PostgresStore::connect(&url)).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let mut edges = start_edges(3, &url, dir.path());
    let names: Vec<String> = edges.iter().map(|e| e.name.clone()).collect();
    let addrs: Vec<String> = edges.iter().map(|e| e.addr.clone()).collect();
    let holder = lease_holders(&store, &names);
    assert_eq!(holder.len(), 1, "one edge sweeps: {holder:?}");
    let holder = names.iter().position(|n| *n == holder[0]).unwrap();
    // Thirty waits through all three edges, due in 8 s; then the holder dies.
    let (status, body) = http(&addrs[0], "POST", "/jobs/j", "").unwrap();
    assert_eq!(status, 201, "{body}");
    for i in 0..30 {
        let args = json!({"source": "ci", "subject": "x", "timeout": "8s"}).to_string();
        let (status, body) =
            http(&addrs[i % 3], "POST", &format!("/jobs/j/waits/d{i}"), &args).unwrap();
        assert_eq!((status, &body["state"]), (200, &json!("open")), "{body}");
    }
    edges[holder].kill();
    let survivors: Vec<usize> = (0..3).filter(|i| *i != holder).collect();
    let read = |i: usize| {
        let (_, body) = http(&addrs[survivors[i % 2]], "GET", &format!("/waits/d{i}"), "").unwrap();
        body["state"].as_str().unwrap_or_default().to_owned()
    };
    assert!(
        (0..30).all(|i| read(i) == "open"),
        "the deadlines are still ahead"
    );
    // A survivor takes the lease once the dead holder's expires, and fires every deadline.
    let started = Instant::now();
    while !(0..30).all(|i| read(i) == "timed_out") {
        assert!(
            started.elapsed() < Duration::from_secs(90),
            "deadlines not fired"
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    let alive: Vec<String> = survivors.iter().map(|i| names[*i].clone()).collect();
    assert_eq!(
        lease_holders(&store, &alive).len(),
        1,
        "one survivor sweeps"
    );
    assert!(lease_holders(&store, &names[holder..=holder]).is_empty());
    // Each wait left `open` once: an event that every one of them would have matched takes none.
    let sent = deliver(
        &addrs[survivors[0]..=survivors[0]],
        0,
        &event_body("late", "x"),
    );
    assert_eq!(sent.status, 202);
    assert!((0..30).all(|i| read(i) == "timed_out"));
    let records = audit(&addrs[survivors[0]]);
    assert!(of_action(&records, "event.match").is_empty());
}
