//! Routing benchmark: 100,000 open waits over 10,000 subjects; every event is ingested (retained,
//! audited, looked up in the index, type-checked, claimed) and the wait it took is replaced so
//! the index stays at full size. Prints events per second and the p50/p99 latency per event.
//!
//! ```text
//! route_bench memory [EVENTS] [IN_FLIGHT]
//! route_bench sqlite [EVENTS] [IN_FLIGHT]
//! route_bench postgres URL EDGES [EVENTS] [IN_FLIGHT]
//! ```
//!
//! With `ROUTE_BENCH_LARGEST=1` every event is as large as a source may give one: 16 KiB of
//! `text` and just under 8 KiB of `attributes` (128 keys); otherwise events have no text and
//! one attribute.
//!
//! `IN_FLIGHT` events are ingested at once (default 1: one after another), as concurrent
//! deliveries would be; with `postgres`, `EDGES` runtimes (each its own connection pool, routing
//! through the database's index as edges sharing one database do) take the events in turn. The
//! waits are registered through the runtime too (jobs started, waits registered), 64 at once;
//! that is not timed. With `postgres` the process runs on two worker threads, or on
//! `ROUTE_BENCH_THREADS` (1: one thread for every edge and the driver).
//!
//! **What the timed loop includes.** Events are built before it, in batches of 10,000; after
//! each batch the waits it took are registered again (not timed), so the index stays full. With
//! one in flight the loop calls [`Runtime::ingest`] for one event after another on the bench's
//! task, as an edge's connection handler awaits one delivery at a time: per event, the call and
//! two clock reads for its latency, nothing else. With more in flight each event is moved (not
//! copied) into a tokio task of its own in a `JoinSet`, so that that many are in the runtime at
//! once; the spawn, the scheduling and the join are then part of each event's time. Neither
//! form includes what `Runtime::deliver` adds before `ingest` (the signature, the source's
//! function, remembering the delivery's identity and its `event.delivery` record).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::{Duration, Instant};

use ozcheck_runtime::clock::{ManualClock, Timestamp};
use ozcheck_runtime::config::Config;
use ozcheck_runtime::model::Event;
use ozcheck_runtime::routes::Routing;
use ozcheck_runtime::store::{MemoryStore, PostgresStore, SqliteStore, Store};
use ozcheck_runtime::{JobStart, Runtime};
use serde_json::json;
use tokio::task::JoinSet;

/// The allocator `ozcheck serve` runs with (docs/decisions/0009).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const WAITS: usize = 100_000;
const SUBJECTS: usize = 10_000;
const TYPES: usize = WAITS / SUBJECTS;
/// Registrations at once while seeding (not timed).
const SEEDERS: usize = 64;
/// Events per timed batch; the waits they took are registered again between batches.
const BATCH: usize = 10_000;

async fn register<S: Store>(rt: Arc<Runtime<S>>, n: usize, generation: usize) {
    let subject = n % SUBJECTS;
    let kind = n / SUBJECTS % TYPES;
    let job = format!("j{n}-{generation}");
    rt.start_job(&JobStart {
        id: job.clone(),
        ..JobStart::default()
    })
    .await
    .expect("job");
    let args = json!({"source": "ci", "types": [format!("t{kind}")],
                      "subject": format!("repo/s#{subject}"), "timeout": "7d", "since": "now"});
    rt.wait_for_event(&job, &format!("w{n}-{generation}"), &args)
        .await
        .expect("wait");
}

/// Registers the waits `(n, generation)`, [`SEEDERS`] at once.
async fn register_all<S: Store>(rt: &Arc<Runtime<S>>, waits: impl Iterator<Item = (usize, usize)>) {
    let mut running = JoinSet::new();
    for (n, generation) in waits {
        if running.len() >= SEEDERS {
            running
                .join_next()
                .await
                .expect("a task")
                .expect("register");
        }
        running.spawn(register(rt.clone(), n, generation));
    }
    while let Some(done) = running.join_next().await {
        done.expect("register");
    }
}

/// CPU time (user + system) by thread name, from Linux's /proc (empty elsewhere): the stores run
/// their statements on threads of their own (the `SQLite` store's writer and reader, sqlx's
/// `SQLite` workers), beside the runtime's thread.
fn thread_cpu() -> BTreeMap<String, Duration> {
    let mut by_name = BTreeMap::new();
    let Ok(tasks) = std::fs::read_dir("/proc/self/task") else {
        return by_name;
    };
    for task in tasks.flatten() {
        let Ok(stat) = std::fs::read_to_string(task.path().join("stat")) else {
            continue;
        };
        // The name is in parentheses and may hold spaces; the fields follow it.
        let (Some(open), Some(close)) = (stat.find('('), stat.rfind(')')) else {
            continue;
        };
        let name = stat[open + 1..close].to_owned();
        let fields: Vec<&str> = stat[close + 1..].split_whitespace().collect();
        let ticks = |i: usize| {
            fields
                .get(i)
                .and_then(|f| f.parse::<u64>().ok())
                .unwrap_or(0)
        };
        // utime and stime are fields 14 and 15 of the line (indices 11 and 12 after the name);
        // the clock ticks 100 times a second on Linux.
        *by_name.entry(name).or_default() += Duration::from_millis((ticks(11) + ticks(12)) * 10);
    }
    by_name
}

/// The machine's CPU time (every process, the database server's too) from Linux's /proc/stat,
/// in clock ticks: user (with nice), system (with interrupts), idle, I/O wait and steal (zeros
/// elsewhere).
fn machine_ticks() -> [u64; 5] {
    let Ok(stat) = std::fs::read_to_string("/proc/stat") else {
        return [0; 5];
    };
    let Some(line) = stat.lines().find(|l| l.starts_with("cpu ")) else {
        return [0; 5];
    };
    let t: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|f| f.parse().ok())
        .chain(std::iter::repeat(0))
        .take(8)
        .collect();
    // user nice system idle iowait irq softirq steal (guest time is counted in user).
    [t[0] + t[1], t[2] + t[5] + t[6], t[3], t[4], t[7]]
}

/// The CPU time each thread name gained since `before`.
fn cpu_since(before: &BTreeMap<String, Duration>, into: &mut BTreeMap<String, Duration>) {
    for (name, now) in thread_cpu() {
        let gained = now.saturating_sub(before.get(&name).copied().unwrap_or_default());
        *into.entry(name).or_default() += gained;
    }
}

struct Measured {
    wall: Duration,
    /// CPU time by thread name.
    cpu: BTreeMap<String, Duration>,
    latencies: Vec<Duration>,
    /// The machine's CPU ticks while timed ([`machine_ticks`]).
    ticks: [u64; 5],
}

/// With `ROUTE_BENCH_PERF` naming the control FIFO of `perf record --control fifo:… -D -1`,
/// tells perf to sample the timed parts only (`enable`) and not the seeding (`disable`).
fn profile(command: &str) {
    if let Some(fifo) = std::env::var_os("ROUTE_BENCH_PERF") {
        if let Err(e) = std::fs::write(&fifo, format!("{command}\n")) {
            eprintln!("route_bench: cannot write to the perf control FIFO: {e}");
        }
    }
}

/// Whether events are the largest a source may give (`ROUTE_BENCH_LARGEST=1`).
fn largest() -> bool {
    static LARGEST: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *LARGEST.get_or_init(|| std::env::var("ROUTE_BENCH_LARGEST").is_ok_and(|v| v == "1"))
}

fn event(k: usize) -> Event {
    let n = k % WAITS;
    if largest() {
        // 16 KiB of text; 128 attributes, 8,065 bytes as JSON.
        let text = format!("{k:0>16384}");
        let attributes: serde_json::Map<String, serde_json::Value> = (0..128)
            .map(|a| (format!("a{a:03}"), json!(format!("{:0>53}", k + a))))
            .collect();
        return Event {
            text,
            attributes: attributes.into(),
            ..small_event(k, n)
        };
    }
    small_event(k, n)
}

fn small_event(k: usize, n: usize) -> Event {
    Event {
        source: "ci".into(),
        id: format!("e{k}"),
        kind: format!("t{}", n / SUBJECTS % TYPES),
        action: "completed".into(),
        subject: format!("repo/s#{}", n % SUBJECTS),
        text: String::new(),
        attributes: json!({"conclusion": "success"}),
    }
}

/// Ingests `events` through `edges` in turn, `in_flight` at once (`local`: one edge routing
/// through its own index, whose size is checked).
async fn run<S: Store>(
    edges: &[Arc<Runtime<S>>],
    local: bool,
    events: usize,
    in_flight: usize,
) -> Measured {
    let first = &edges[0];
    register_all(first, (0..WAITS).map(|n| (n, 0))).await;
    let mut m = Measured {
        wall: Duration::ZERO,
        cpu: BTreeMap::new(),
        latencies: Vec::with_capacity(events),
        ticks: [0; 5],
    };
    let mut k = 0;
    while k < events {
        let batch: Vec<Event> = (k..(k + BATCH).min(events)).map(event).collect();
        let taken = batch.len();
        // One batch touches distinct waits; each event takes exactly one.
        let cpu = thread_cpu();
        let ticks = machine_ticks();
        profile("enable");
        let wall = Instant::now();
        if in_flight == 1 {
            one_at_a_time(edges, &batch, &mut m.latencies).await;
        } else {
            at_once(edges, batch, in_flight, &mut m.latencies).await;
        }
        m.wall += wall.elapsed();
        profile("disable");
        for (sum, (after, before)) in m.ticks.iter_mut().zip(machine_ticks().iter().zip(ticks)) {
            *sum += after.saturating_sub(before);
        }
        cpu_since(&cpu, &mut m.cpu);
        if local {
            assert_eq!(first.armed(), WAITS - taken);
        }
        // Keep the index full: the waits that got an event are replaced (not timed).
        register_all(first, (k..k + taken).map(|j| (j % WAITS, j / WAITS + 1))).await;
        k += taken;
    }
    if local {
        assert_eq!(first.armed(), WAITS);
    }
    m
}

/// One event after another, each awaited on this task before the next (one in flight): no
/// task, no copy of the event, only the two clock reads of its latency.
async fn one_at_a_time<S: Store>(
    edges: &[Arc<Runtime<S>>],
    batch: &[Event],
    latencies: &mut Vec<Duration>,
) {
    for (i, event) in batch.iter().enumerate() {
        let rt = &edges[i % edges.len()];
        let start = Instant::now();
        let stored = rt.ingest(event).await.expect("ingest");
        latencies.push(start.elapsed());
        assert!(stored.is_some(), "a new event");
    }
}

/// `in_flight` events in the runtime at once, each moved into a task of its own.
async fn at_once<S: Store>(
    edges: &[Arc<Runtime<S>>],
    batch: Vec<Event>,
    in_flight: usize,
    latencies: &mut Vec<Duration>,
) {
    let mut running = JoinSet::new();
    for (i, event) in batch.into_iter().enumerate() {
        if running.len() >= in_flight {
            latencies.push(running.join_next().await.expect("a task").expect("ingest"));
        }
        let rt = edges[i % edges.len()].clone();
        running.spawn(async move {
            let start = Instant::now();
            let stored = rt.ingest(&event).await.expect("ingest");
            let took = start.elapsed();
            assert!(stored.is_some(), "a new event");
            took
        });
    }
    while let Some(done) = running.join_next().await {
        latencies.push(done.expect("ingest"));
    }
}

fn report(name: &str, mut m: Measured) {
    m.latencies.sort();
    let n = m.latencies.len();
    let pct = |p: f64| m.latencies[((n as f64 * p) as usize).min(n - 1)];
    let per_sec = |d: Duration| n as f64 / d.as_secs_f64();
    let cpu: Duration = m.cpu.values().sum();
    println!(
        "{name}: {n} events through {WAITS} open waits over {SUBJECTS} subjects: \
         {:.0} events/s wall, {:.0} events/s of this process's CPU time; \
         latency p50 {:?}, p99 {:?}, max {:?}",
        per_sec(m.wall),
        per_sec(cpu),
        pct(0.50),
        pct(0.99),
        m.latencies[n - 1]
    );
    let threads: Vec<String> = m
        .cpu
        .iter()
        .filter(|(_, d)| !d.is_zero())
        .map(|(name, d)| format!("{name} {:.1} µs", d.as_secs_f64() * 1e6 / n as f64))
        .collect();
    println!("  CPU per event by thread: {}", threads.join(", "));
    // The clock ticks 100 times a second on Linux.
    let [user, system, idle, iowait, steal] = m.ticks;
    let busy = user + system + steal;
    let all = (busy + idle + iowait).max(1);
    println!(
        "  the machine's busy CPU per event (every process): {:.1} µs \
         (user {}%, system {}%, idle {}%, I/O wait {}%, steal {}% of the time timed)",
        (busy * 10_000) as f64 / n as f64,
        user * 100 / all,
        system * 100 / all,
        idle * 100 / all,
        iowait * 100 / all,
        steal * 100 / all
    );
}

fn config() -> Arc<Config> {
    Arc::new(serde_json::from_value(json!({"sources": [{"name": "ci", "kind": "json"}]})).unwrap())
}

fn clock() -> Arc<ManualClock> {
    Arc::new(ManualClock::new(Timestamp(1_767_225_600_000)))
}

async fn alone<S: Store>(store: S) -> Vec<Arc<Runtime<S>>> {
    vec![
        Runtime::start(Arc::new(store), clock(), config())
            .await
            .expect("start"),
    ]
}

fn number(arg: Option<String>, default: usize) -> usize {
    arg.and_then(|a| a.parse().ok()).unwrap_or(default)
}

/// Worker threads of the benchmark process with `postgres` (`ROUTE_BENCH_THREADS`, default 2;
/// 1 runs every edge and the driver on one thread).
fn threads() -> usize {
    std::env::var("ROUTE_BENCH_THREADS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(2)
        .max(1)
}

fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "memory".into());
    let runtime = |threads: usize| {
        let mut builder = if threads == 1 {
            tokio::runtime::Builder::new_current_thread()
        } else {
            let mut b = tokio::runtime::Builder::new_multi_thread();
            b.worker_threads(threads);
            b
        };
        builder.enable_all().build().expect("tokio")
    };
    match which.as_str() {
        "memory" | "sqlite" => {
            let events = number(args.next(), 100_000);
            let in_flight = number(args.next(), 1).max(1);
            runtime(1).block_on(async {
                let name = format!("{which}, {in_flight} in flight");
                if which == "memory" {
                    report(
                        &name,
                        run(&alone(MemoryStore::new()).await, true, events, in_flight).await,
                    );
                } else {
                    let dir = tempfile::tempdir().expect("tempdir");
                    let store = SqliteStore::open(&dir.path().join("bench.db"))
                        .await
                        .expect("open");
                    report(
                        &name,
                        run(&alone(store).await, true, events, in_flight).await,
                    );
                }
            });
        }
        "postgres" => {
            let url = args.next().expect("a database URL");
            let edges = number(args.next(), 1).max(1);
            let events = number(args.next(), 100_000);
            let in_flight = number(args.next(), 64).max(1);
            runtime(threads()).block_on(async {
                let schema = PostgresStore::create_schema(&url).await.expect("schema");
                let clock = clock();
                let mut runtimes = Vec::new();
                for e in 0..edges {
                    let store = PostgresStore::connect_in_schema(&url, &schema)
                        .await
                        .expect("connect");
                    let routing = Routing::Shared {
                        edge: format!("edge-{e}"),
                    };
                    let rt =
                        Runtime::start_with(Arc::new(store), clock.clone(), config(), &routing)
                            .await
                            .expect("start");
                    runtimes.push(rt);
                }
                let m = run(&runtimes, false, events, in_flight).await;
                report(
                    &format!("postgres, {edges} edges, {in_flight} in flight"),
                    m,
                );
                PostgresStore::drop_schema(&url, &schema)
                    .await
                    .expect("drop the schema");
            });
        }
        other => eprintln!("unknown store `{other}`: memory, sqlite or postgres"),
    }
}
