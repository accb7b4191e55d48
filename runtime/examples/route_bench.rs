//! Routing benchmark: 100,000 open waits over 10,000 subjects; every event is ingested (retained,
//! audited, looked up in the index, type-checked, claimed) and the wait it took is replaced so
//! the index stays at full size. Prints events per second and the p50/p99 latency per event.
//!
//! `cargo run --release -p ozcheck-runtime --example route_bench -- [memory|sqlite] [EVENTS]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use ozcheck_runtime::clock::{ManualClock, Timestamp};
use ozcheck_runtime::config::Config;
use ozcheck_runtime::model::Event;
use ozcheck_runtime::store::{MemoryStore, SqliteStore, Store};
use ozcheck_runtime::{JobStart, Runtime};
use serde_json::json;

const WAITS: usize = 100_000;
const SUBJECTS: usize = 10_000;
const TYPES: usize = WAITS / SUBJECTS;

async fn register<S: Store>(rt: &Runtime<S>, n: usize, generation: usize) {
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

/// CPU time of the whole process (user + system, all threads: `SQLite` runs its queries on a
/// worker thread), from Linux's /proc (zero elsewhere). On a loaded machine wall-clock throughput
/// mostly measures the other processes.
fn process_cpu() -> Duration {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return Duration::ZERO;
    };
    // Fields after the command name (which is in parentheses and may hold spaces).
    let Some(rest) = stat.rsplit_once(')').map(|(_, r)| r) else {
        return Duration::ZERO;
    };
    let fields: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| {
        fields
            .get(i)
            .and_then(|f| f.parse::<u64>().ok())
            .unwrap_or(0)
    };
    // utime and stime are fields 14 and 15 of the line (indices 11 and 12 after the name); the
    // clock ticks 100 times a second on Linux.
    Duration::from_millis((ticks(11) + ticks(12)) * 10)
}

struct Measured {
    wall: Duration,
    cpu: Duration,
    latencies: Vec<Duration>,
}

const BATCH: usize = 10_000;

async fn run<S: Store>(store: S, events: usize) -> Measured {
    let config: Config =
        serde_json::from_value(json!({"sources": [{"name": "ci", "kind": "json"}]})).unwrap();
    let clock = ManualClock::new(Timestamp(1_767_225_600_000));
    let rt = Runtime::start(Arc::new(store), Arc::new(clock), Arc::new(config))
        .await
        .expect("start");
    for n in 0..WAITS {
        register(&rt, n, 0).await;
    }
    assert_eq!(rt.armed(), WAITS);
    let mut m = Measured {
        wall: Duration::ZERO,
        cpu: Duration::ZERO,
        latencies: Vec::with_capacity(events),
    };
    let mut k = 0;
    while k < events {
        let batch: Vec<Event> = (k..(k + BATCH).min(events))
            .map(|k| {
                let n = k % WAITS;
                Event {
                    source: "ci".into(),
                    id: format!("e{k}"),
                    kind: format!("t{}", n / SUBJECTS % TYPES),
                    action: "completed".into(),
                    subject: format!("repo/s#{}", n % SUBJECTS),
                    text: String::new(),
                    attributes: json!({"conclusion": "success"}),
                }
            })
            .collect();
        // One batch touches distinct waits; each event takes exactly one.
        let cpu = process_cpu();
        let wall = Instant::now();
        for event in &batch {
            let start = Instant::now();
            rt.ingest(event).await.expect("ingest");
            m.latencies.push(start.elapsed());
        }
        m.wall += wall.elapsed();
        m.cpu += process_cpu().saturating_sub(cpu);
        assert_eq!(rt.armed(), WAITS - batch.len());
        // Keep the index full: the waits that got an event are replaced (not timed).
        for j in k..k + batch.len() {
            register(&rt, j % WAITS, j / WAITS + 1).await;
        }
        k += batch.len();
    }
    assert_eq!(rt.armed(), WAITS);
    m
}

fn report(name: &str, mut m: Measured) {
    m.latencies.sort();
    let n = m.latencies.len();
    let pct = |p: f64| m.latencies[((n as f64 * p) as usize).min(n - 1)];
    let per_sec = |d: Duration| n as f64 / d.as_secs_f64();
    println!(
        "{name}: {n} events through {WAITS} open waits over {SUBJECTS} subjects: \
         {:.0} events/s wall, {:.0} events/s of CPU time; latency p50 {:?}, p99 {:?}, max {:?}",
        per_sec(m.wall),
        per_sec(m.cpu),
        pct(0.50),
        pct(0.99),
        m.latencies[n - 1]
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "memory".into());
    let events: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    match which.as_str() {
        "memory" => {
            report("memory", run(MemoryStore::new(), events).await);
        }
        "sqlite" => {
            let dir = tempfile::tempdir().expect("tempdir");
            let store = SqliteStore::open(&dir.path().join("bench.db"))
                .await
                .expect("open");
            report("sqlite", run(store, events).await);
        }
        other => eprintln!("unknown store `{other}`: memory or sqlite"),
    }
}
