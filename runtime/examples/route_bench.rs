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

async fn run<S: Store>(store: S, events: usize) -> (Duration, Vec<Duration>) {
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
    let mut latencies = Vec::with_capacity(events);
    let mut total = Duration::ZERO;
    for k in 0..events {
        let n = k % WAITS;
        let event = Event {
            source: "ci".into(),
            id: format!("e{k}"),
            kind: format!("t{}", n / SUBJECTS % TYPES),
            action: "completed".into(),
            subject: format!("repo/s#{}", n % SUBJECTS),
            text: String::new(),
            attributes: json!({"conclusion": "success"}),
        };
        let start = Instant::now();
        rt.ingest(&event).await.expect("ingest");
        let took = start.elapsed();
        total += took;
        latencies.push(took);
        // Keep the index full: the wait that got the event is replaced (not timed).
        register(&rt, n, k / WAITS + 1).await;
    }
    assert_eq!(rt.armed(), WAITS);
    (total, latencies)
}

fn report(name: &str, total: Duration, mut latencies: Vec<Duration>) {
    latencies.sort();
    let n = latencies.len();
    let pct = |p: f64| latencies[((n as f64 * p) as usize).min(n - 1)];
    println!(
        "{name}: {n} events routed through {WAITS} open waits over {SUBJECTS} subjects: {:.0} events/s, p50 {:?}, p99 {:?}, max {:?}",
        n as f64 / total.as_secs_f64(),
        pct(0.50),
        pct(0.99),
        latencies[n - 1]
    );
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let mut args = std::env::args().skip(1);
    let which = args.next().unwrap_or_else(|| "memory".into());
    let events: usize = args.next().and_then(|a| a.parse().ok()).unwrap_or(100_000);
    match which.as_str() {
        "memory" => {
            let (total, lat) = run(MemoryStore::new(), events).await;
            report("memory", total, lat);
        }
        "sqlite" => {
            let dir = tempfile::tempdir().expect("tempdir");
            let store = SqliteStore::open(&dir.path().join("bench.db"))
                .await
                .expect("open");
            let (total, lat) = run(store, events).await;
            report("sqlite", total, lat);
        }
        other => eprintln!("unknown store `{other}`: memory or sqlite"),
    }
}
