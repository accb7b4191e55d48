//! An edge serves first and sweeps after (issue 35, item 2): an edge that starts on a
//! `PostgreSQL` database holding a backlog of unrouted events answers deliveries and
//! registrations at once, leaves the backlog to the holder of the sweeper lease (never routing
//! it itself while another live edge holds the lease), and the holder routes it in bounded
//! passes.

use std::time::Duration;

use ozcheck_runtime::clock::{Clock, Timestamp};
use ozcheck_runtime::edge::REROUTE_PER_SWEEP;
use ozcheck_runtime::model::AuditRecord;
use ozcheck_runtime::store::Store;
use serde_json::json;

mod fixtures;
mod pg;
mod pg_edges;

use fixtures::{config, event};

/// More left-over events than one sweep routes.
const BACKLOG: usize = REROUTE_PER_SWEEP * 2;

async fn unrouted<S: Store>(store: &S) -> usize {
    store
        .unrouted(Timestamp(i64::MAX), 100_000)
        .await
        .unwrap()
        .len()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_started_edge_answers_beside_a_backlog_that_the_lease_holder_routes_in_bounded_passes() {
    let test = "a_started_edge_answers_beside_a_backlog";
    let Some((url, clock)) = pg_edges::schema(test).await else {
        return;
    };
    let a = pg_edges::edge_named(&url, "a", "serve_first_a", &clock, config()).await;
    a.sweep().await.unwrap();
    // Events retained and never routed, as an edge killed between the two steps leaves them;
    // half of them go to waits.
    pg_edges::job(&a, "j").await;
    for n in 0..BACKLOG / 2 {
        let args = json!({"source": "ci", "subject": format!("s{n}")});
        a.wait_for_event("j", &format!("w{n}"), &args)
            .await
            .unwrap();
    }
    let events: Vec<_> = (0..BACKLOG)
        .map(|n| event(&format!("e{n}"), &format!("s{n}")))
        .collect();
    let audits: Vec<AuditRecord> = events
        .iter()
        .map(|_| AuditRecord {
            at: clock.now(),
            action: "event.received".into(),
            data: json!({}),
        })
        .collect();
    a.store()
        .receive_many(&events, &audits, clock.now())
        .await
        .unwrap();
    clock.advance(Duration::from_secs(6));

    let b = pg_edges::edge_named(&url, "b", "serve_first_b", &clock, config()).await;
    assert_eq!(
        unrouted(&**b.store()).await,
        BACKLOG,
        "the edge routed the backlog before it could serve"
    );
    let fresh = b.ingest(&event("fresh", "s0")).await.unwrap();
    assert!(fresh.is_some(), "a delivery to the started edge is taken");
    pg_edges::job(&b, "k").await;
    let wait = b
        .wait_for_event("k", "w", &json!({"source": "ci", "subject": "s1"}))
        .await
        .unwrap();
    assert_eq!(wait.job, "k", "a registration on the started edge is taken");

    // `a` holds the sweeper lease: `b` leaves the backlog to it.
    b.sweep().await.unwrap();
    assert_eq!(unrouted(&**b.store()).await, BACKLOG, "b raced the holder");
    a.sweep().await.unwrap();
    let left = unrouted(&**a.store()).await;
    assert!(
        left > 0 && left < BACKLOG,
        "one pass routes a bounded part of the backlog, {left} left of {BACKLOG}"
    );
    a.sweep().await.unwrap();
    assert_eq!(unrouted(&**a.store()).await, 0);
    for n in 0..BACKLOG / 2 {
        let wait = a.wait_named("j", &format!("w{n}")).await.unwrap();
        assert!(wait.event.is_some(), "w{n} got its event");
    }
}
