//! The keys the runtime keeps (`keys.rs`): every string that becomes part of a store's key is
//! bounded at the door, one byte past each limit is refused with its code, and the sweeper goes
//! on past an event the store refuses (on `PostgreSQL`, with a trigger that refuses one event's
//! ledger row, standing in for any row the database will not take).

use std::sync::Arc;
use std::time::Duration;

use ozcheck_runtime::clock::{Clock, ManualClock, Timestamp};
use ozcheck_runtime::config::Config;
use ozcheck_runtime::keys::{MAX_FIELD, MAX_HEADER_FIELD, MAX_JOB_ID, MAX_NAME, MAX_WAIT_NAME};
use ozcheck_runtime::store::{MemoryStore, Store};
use ozcheck_runtime::{JobStart, Routing, Runtime};
use serde_json::json;
use sqlx::Connection;

mod fixtures;
mod pg;
mod pg_edges;

use fixtures::{config, event};
use pg_edges::Rt;

async fn memory_edge() -> Arc<Runtime<MemoryStore>> {
    let clock = ManualClock::new(Timestamp(1_000_000));
    Runtime::start_with(
        Arc::new(MemoryStore::new()),
        Arc::new(clock),
        config(),
        &Routing::Local,
    )
    .await
    .unwrap()
}

fn start(id: String) -> JobStart {
    JobStart {
        id,
        ..JobStart::default()
    }
}

#[tokio::test]
async fn a_job_id_a_wait_name_and_a_subject_are_refused_one_byte_past_their_limits() {
    let rt = memory_edge().await;
    let refused = rt
        .start_job(&start("j".repeat(MAX_JOB_ID + 1)))
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "key-too-long", "{refused}");
    let job = "j".repeat(MAX_JOB_ID);
    rt.start_job(&start(job.clone())).await.unwrap();

    let args = json!({"source": "ci", "subject": "s"});
    let long_name = "w".repeat(MAX_WAIT_NAME + 1);
    let refused = rt
        .wait_for_event(&job, &long_name, &args)
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "key-too-long", "{refused}");
    let name = "w".repeat(MAX_WAIT_NAME);
    rt.wait_for_event(&job, &name, &args).await.unwrap();

    let long_subject = json!({"source": "ci", "subject": "s".repeat(MAX_FIELD + 1)});
    let refused = rt
        .wait_for_event(&job, "w2", &long_subject)
        .await
        .unwrap_err();
    assert_eq!(refused.code(), "key-too-long", "{refused}");
    let subject = json!({"source": "ci", "subject": "s".repeat(MAX_FIELD)});
    rt.wait_for_event(&job, "w2", &subject).await.unwrap();
}

#[tokio::test]
async fn an_event_identity_past_its_limits_fails_only_its_own_ingest() {
    let rt = memory_edge().await;
    let long_id = event(&"i".repeat(MAX_FIELD + 1), "s");
    let refused = rt.ingest(&long_id).await.unwrap_err();
    assert!(refused.0.contains("`id` is 1025 bytes"), "{refused}");
    let mut long_source = event("e", "s");
    long_source.source = "s".repeat(MAX_NAME + 1);
    let refused = rt.ingest(&long_source).await.unwrap_err();
    assert!(refused.0.contains("`source` is 129 bytes"), "{refused}");
    // At the limit it is kept.
    let kept = rt
        .ingest(&event(&"i".repeat(MAX_FIELD), "s"))
        .await
        .unwrap();
    assert!(kept.is_some());
}

#[test]
fn a_configuration_past_the_key_limits_is_refused_when_saved() {
    let with = |value: serde_json::Value| -> Config { serde_json::from_value(value).unwrap() };
    let bound = |header_field: u64| {
        with(json!({"sources": [{"name": "ci", "kind": "json",
                                 "bounds": {"header_field": header_field}}]}))
    };
    ozcheck_runtime::configure::check(&bound(MAX_HEADER_FIELD)).unwrap();
    let refused = ozcheck_runtime::configure::check(&bound(MAX_HEADER_FIELD + 1)).unwrap_err();
    assert_eq!(refused.code(), "bound-too-large", "{refused}");

    let named = |name: &str| {
        with(json!({"sources": [{"name": "ci", "kind": "json"}],
                    "routines": [{"name": name, "triggers": []}]}))
    };
    ozcheck_runtime::configure::check(&named(&"r".repeat(MAX_NAME))).unwrap();
    let refused = ozcheck_runtime::configure::check(&named(&"r".repeat(MAX_NAME + 1))).unwrap_err();
    assert_eq!(refused.code(), "name-too-long", "{refused}");
    assert!(
        refused.to_string().contains("a routine's name"),
        "{refused}"
    );
}

/// A trigger that refuses the ledger row of every event whose id is in `refused`, as the
/// database would refuse a row it cannot keep.
const REFUSE: &str = "CREATE TABLE refused (id TEXT PRIMARY KEY); \
    CREATE FUNCTION refuse_ledger() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN \
      IF EXISTS (SELECT 1 FROM refused WHERE id = NEW.event_id) THEN \
        RAISE EXCEPTION 'the test refuses the ledger row of %', NEW.event_id; \
      END IF; RETURN NEW; END $$; \
    CREATE TRIGGER refuse_ledger BEFORE INSERT ON job_events \
      FOR EACH ROW EXECUTE FUNCTION refuse_ledger();";

/// An edge on a fresh schema with [`REFUSE`] installed, its clock, and a connection of the
/// test's own; `None` without a server.
async fn refusing_edge(test: &str) -> Option<(Rt, ManualClock, sqlx::PgConnection)> {
    let (url, clock) = pg_edges::schema(test).await?;
    let rt = pg_edges::edge_named(&url, "a", "ozcheck_keys", &clock, config()).await;
    let mut admin = pg_edges::connect(&url).await;
    sqlx::raw_sql(REFUSE).execute(&mut admin).await.unwrap();
    Some((rt, clock, admin))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_sweeper_routes_past_an_event_the_store_refuses_and_retention_still_runs() {
    let test = "the_sweeper_routes_past_an_event_the_store_refuses";
    let Some((rt, clock, mut admin)) = refusing_edge(test).await else {
        return;
    };
    for n in 0..4 {
        let job = format!("j{n}");
        rt.start_job(&start(job.clone())).await.unwrap();
        // Open past retention, so that the refused event still has a wait to be refused for.
        let args = json!({"source": "ci", "subject": format!("s{n}"), "timeout": "3d"});
        rt.wait_for_event(&job, "w", &args).await.unwrap();
    }
    // Every routing refused while the events arrive: they are retained, and left unrouted.
    sqlx::raw_sql("INSERT INTO refused VALUES ('e0'), ('e1'), ('e2'), ('e3')")
        .execute(&mut admin)
        .await
        .unwrap();
    for n in 0..4 {
        let failed = rt.ingest(&event(&format!("e{n}"), &format!("s{n}"))).await;
        assert!(failed.is_err(), "e{n} was routed through the refusal");
    }
    // Then only the first, oldest, is refused: the sweeper routes the three after it.
    sqlx::raw_sql("DELETE FROM refused WHERE id <> 'e0'")
        .execute(&mut admin)
        .await
        .unwrap();
    clock.advance(Duration::from_secs(30));
    let rerouted = rt.reroute(clock.now()).await.unwrap();
    assert_eq!(rerouted, 3, "the events after the refused one");
    for n in 1..4 {
        let waits = rt.store().waits_of_job(&format!("j{n}")).await.unwrap();
        assert_eq!(waits[0].event, Some(("ci".into(), format!("e{n}"))));
    }
    let open = rt.store().waits_of_job("j0").await.unwrap();
    assert_eq!(open[0].event, None, "the refused event took nothing");
    assert!(
        rt.log_lines()
            .iter()
            .any(|l| l.contains("ci/e0") && l.contains("next pass")),
        "the refused event is logged: {:?}",
        rt.log_lines()
    );
    // A day later retention forgets it, although it is still refused: the sweep fails no more.
    clock.advance(Duration::from_secs(2 * 24 * 3600));
    rt.sweep().await.unwrap();
    let unrouted: i64 = sqlx::query_scalar("SELECT count(*) FROM unrouted")
        .fetch_one(&mut admin)
        .await
        .unwrap();
    assert_eq!(
        unrouted, 0,
        "retention removed the event no one could route"
    );
    admin.close().await.unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pass_that_fails_at_every_event_ends_with_the_error() {
    let test = "a_pass_that_fails_at_every_event_ends_with_the_error";
    let Some((rt, clock, mut admin)) = refusing_edge(test).await else {
        return;
    };
    let events = ozcheck_runtime::edge::REROUTE_FAILURES + 4;
    for n in 0..events {
        let job = format!("j{n}");
        rt.start_job(&start(job.clone())).await.unwrap();
        rt.wait_for_event(
            &job,
            "w",
            &json!({"source": "ci", "subject": format!("s{n}")}),
        )
        .await
        .unwrap();
        sqlx::query("INSERT INTO refused VALUES ($1)")
            .bind(format!("e{n}"))
            .execute(&mut admin)
            .await
            .unwrap();
        assert!(
            rt.ingest(&event(&format!("e{n}"), &format!("s{n}")))
                .await
                .is_err()
        );
    }
    clock.advance(Duration::from_secs(30));
    let failed = rt.reroute(clock.now()).await.unwrap_err();
    assert!(failed.0.contains("the test refuses"), "{failed}");
    let tried = rt
        .log_lines()
        .iter()
        .filter(|l| l.starts_with("reroute:"))
        .count();
    assert_eq!(
        tried,
        ozcheck_runtime::edge::REROUTE_FAILURES,
        "the pass stopped after that many failures in a row"
    );
    admin.close().await.unwrap();
}
