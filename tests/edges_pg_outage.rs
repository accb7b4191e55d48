//! The database unavailable for 10 s under two `ozcheck serve` edges: deliveries meanwhile are
//! answered 503 (with `Retry-After`), the edges stay up, an edge killed and restarted during the
//! outage waits for the database (it used to exit with status 2) and serves once it is back,
//! and every delivery the senders retried is acknowledged and nothing acknowledged before or
//! after is lost. Its own test binary: it stops the server that the binary's other tests would share.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use serde_json::json;

mod edges;
#[path = "../runtime/tests/pg/mod.rs"]
mod pg;

use edges::{audit, deliver, event_body, http, in_parallel, of_action, start_edges};

const EVENTS: usize = 400;
/// Acknowledged deliveries before the database goes away.
const BEFORE: usize = 40;
const OUTAGE: Duration = Duration::from_secs(10);

#[test]
fn the_database_away_for_ten_seconds_gives_503s_and_loses_nothing_acknowledged() {
    let test = "the_database_away_for_ten_seconds";
    let Some(pg) = pg::server(test) else {
        return;
    };
    if !pg.is_managed() {
        pg::skipped(
            test,
            "it stops the server, and OZCHECK_TEST_PG names one it did not start",
        );
        return;
    }
    let url = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(pg.fresh_url());
    let dir = tempfile::tempdir().unwrap();
    let mut edges = start_edges(2, &url, dir.path());
    let addrs: Vec<String> = edges.iter().map(|e| e.addr.clone()).collect();
    in_parallel(EVENTS, 8, |i| {
        let (status, _) = http(&addrs[i % 2], "POST", &format!("/jobs/j{i}"), "").unwrap();
        assert_eq!(status, 201);
        let args = json!({"source": "ci", "subject": format!("s{i}")}).to_string();
        let (status, body) = http(
            &addrs[(i + 1) % 2],
            "POST",
            &format!("/jobs/j{i}/waits/w{i}"),
            &args,
        )
        .unwrap();
        assert_eq!((status, &body["state"]), (200, &json!("open")), "{body}");
    });
    let acknowledged = AtomicUsize::new(0);
    let mut during = None;
    let sent = std::thread::scope(|scope| {
        let senders = scope.spawn(|| {
            in_parallel(EVENTS, 4, |i| {
                let sent = deliver(
                    &addrs,
                    i % 2,
                    &event_body(&format!("e{i}"), &format!("s{i}")),
                );
                acknowledged.fetch_add(1, Ordering::SeqCst);
                sent
            })
        });
        let started = Instant::now();
        while acknowledged.load(Ordering::SeqCst) < BEFORE {
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "no deliveries"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        pg.stop_immediately();
        let down = Instant::now();
        // A wait registered meanwhile is refused the same way.
        let args = json!({"source": "ci"}).to_string();
        during = Some(http(&addrs[0], "POST", "/jobs/j0/waits/late", &args).unwrap());
        // An edge that crashes and is restarted during the outage waits for the database
        // instead of exiting, and listens once the database is back.
        let mut second = edges.pop().expect("two edges");
        second.kill();
        let restarting = scope.spawn(move || {
            second.restart();
            (second, Instant::now())
        });
        std::thread::sleep(OUTAGE.saturating_sub(down.elapsed()));
        let back = Instant::now();
        pg.start_again();
        let (second, listening) = restarting.join().expect("the restarted edge listens");
        assert!(
            listening >= back,
            "the restarted edge listened before the database was back"
        );
        edges.push(second);
        senders.join().unwrap()
    });
    let (status, body) = during.unwrap();
    assert_eq!(status, 503, "{body}");
    assert_eq!(body["error"]["code"], "store-unavailable", "{body}");
    for edge in &mut edges {
        assert!(edge.has_not_exited(), "{} stayed up", edge.name);
    }
    assert!(sent.iter().all(|s| s.status == 202 || s.status == 200));
    let refused: usize = sent.iter().map(|s| s.unavailable).sum();
    assert!(refused > 0, "deliveries during the outage are answered 503");
    let records = audit(&addrs[0]);
    assert_eq!(of_action(&records, "event.received").len(), EVENTS);
    let matches = of_action(&records, "event.match");
    assert_eq!(matches.len(), EVENTS, "one match per event");
    let matched: std::collections::BTreeSet<&str> = matches
        .iter()
        .filter_map(|m| m["data"]["wait"].as_str())
        .collect();
    assert_eq!(
        matched.len(),
        EVENTS,
        "every acknowledged event reached its wait"
    );
    for i in (0..EVENTS).step_by(7) {
        let (_, body) = http(&addrs[i % 2], "GET", &format!("/waits/w{i}"), "").unwrap();
        assert_eq!(body["state"], "matched", "w{i}");
    }
    eprintln!("{test}: {refused} attempts answered 503 during the outage");
}
