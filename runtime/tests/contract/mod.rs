//! The store contract every backend keeps (memory, `SQLite`, `PostgreSQL`): each step through the
//! public `Store` trait, with the answers the semantics promise.

use ozcheck_runtime::clock::Timestamp;
use ozcheck_runtime::model::{
    AuditRecord, Event, Fire, FireState, Job, Since, Wait, WaitSpec, WaitState,
};
use ozcheck_runtime::store::{Candidate, Claim, FireLimit, FireOutcome, Received, Store};
use serde_json::json;

fn event(id: &str) -> Event {
    Event {
        source: "ci".into(),
        id: id.into(),
        kind: "t".into(),
        action: String::new(),
        subject: "s".into(),
        text: String::new(),
        attributes: json!({}),
    }
}

/// The whole contract, on a fresh store.
pub async fn store_contract<S: Store>(store: S) {
    sequences_fires_refusals_outputs_flags(&store).await;
    receiving_and_routing(&store).await;
    claims(&store).await;
    shared_index(&store).await;
    leases(&store).await;
}

async fn sequences_fires_refusals_outputs_flags<S: Store>(store: &S) {
    let now = Timestamp(1000);
    // Sequences increase (gaps are allowed) and are never reused after a purge, so `since: now`
    // stays right.
    let a = store.insert_event(&event("a"), now).await.unwrap().unwrap();
    assert_eq!(store.insert_event(&event("a"), now).await.unwrap(), None);
    let b = store.insert_event(&event("b"), now).await.unwrap().unwrap();
    assert!(b > a);
    assert_eq!(store.last_seq().await.unwrap(), b);
    assert_eq!(store.purge_events(Timestamp(1001)).await.unwrap(), 2);
    assert_eq!(store.last_seq().await.unwrap(), b);
    let c = store.insert_event(&event("c"), now).await.unwrap().unwrap();
    assert!(c > b);

    let fire = |job: &str, at: i64| Fire {
        job: job.into(),
        kind: "routine".into(),
        name: "r".into(),
        trigger: "t".into(),
        state: FireState::Started,
        reason: None,
        at: Timestamp(at),
    };
    let limit = Some(FireLimit {
        max: 1,
        window_start: Timestamp(0),
    });
    assert_eq!(
        store.record_fire(&fire("x", 1), limit).await.unwrap(),
        FireOutcome::Started
    );
    assert_eq!(
        store.record_fire(&fire("x", 2), limit).await.unwrap(),
        FireOutcome::Duplicate
    );
    assert_eq!(
        store.record_fire(&fire("y", 3), limit).await.unwrap(),
        FireOutcome::Refused("max_fires_per_hour".into())
    );
    let later = Some(FireLimit {
        max: 1,
        window_start: Timestamp(2),
    });
    assert_eq!(
        store.record_fire(&fire("z", 4), later).await.unwrap(),
        FireOutcome::Started
    );

    assert_eq!(
        store.count_refusal("ci", "signature", 7).await.unwrap(),
        (1, 0)
    );
    assert_eq!(
        store.count_refusal("ci", "signature", 7).await.unwrap(),
        (2, 0)
    );
    assert_eq!(
        store.count_refusal("ci", "signature", 8).await.unwrap(),
        (1, 2)
    );
    assert_eq!(
        store.count_refusal("ci", "bounds", 8).await.unwrap(),
        (1, 0)
    );

    let job = ozcheck_runtime::model::Job {
        id: "j".into(),
        started_at: now,
        start_seq: 0,
        deadline: None,
        runtime: "pydantic-ai".into(),
        shadow: false,
        sandboxed: false,
        outside_started: false,
        ended_at: None,
    };
    assert!(store.insert_job(&job).await.unwrap());
    store
        .record_output("j", "later", false, Timestamp(5))
        .await
        .unwrap();
    store
        .record_output("j", "now", true, Timestamp(6))
        .await
        .unwrap();
    let applied = |outputs: Vec<ozcheck_runtime::model::Output>| {
        outputs
            .into_iter()
            .map(|o| o.applied_at)
            .collect::<Vec<_>>()
    };
    assert_eq!(
        applied(store.outputs("j").await.unwrap()),
        [None, Some(Timestamp(6))]
    );
    assert!(store.end_job("j", Timestamp(9)).await.unwrap());
    assert!(!store.end_job("j", Timestamp(10)).await.unwrap());
    assert!(!store.end_job("nobody", Timestamp(10)).await.unwrap());
    assert_eq!(
        applied(store.outputs("j").await.unwrap()),
        [Some(Timestamp(9)), Some(Timestamp(6))]
    );

    assert!(!store.flag("k").await.unwrap());
    store.set_flag("k", true).await.unwrap();
    assert!(store.flag("k").await.unwrap());
    store.set_flag("k", false).await.unwrap();
    assert!(!store.flag("k").await.unwrap());
}

fn received(id: &str) -> AuditRecord {
    AuditRecord {
        at: Timestamp(1),
        action: "event.received".into(),
        data: json!({"id": id}),
    }
}

/// An event is retained unrouted with its record; a redelivery says whether it was routed.
async fn receiving_and_routing<S: Store>(store: &S) {
    let before = store.audit().await.unwrap().len();
    let stored = match store
        .receive(&event("r1"), Timestamp(50), &received("r1"))
        .await
        .unwrap()
    {
        Received::New(stored) => stored,
        other @ Received::Known { .. } => panic!("a new event: {other:?}"),
    };
    assert_eq!(stored.event, event("r1"));
    let again = store
        .receive(&event("r1"), Timestamp(60), &received("r1"))
        .await
        .unwrap();
    assert_eq!(
        again,
        Received::Known {
            stored: stored.clone(),
            routed: false
        }
    );
    assert_eq!(
        store.audit().await.unwrap().len(),
        before + 1,
        "one record per event"
    );
    assert_eq!(store.unrouted(Timestamp(50), 10).await.unwrap(), vec![]);
    assert_eq!(
        store.unrouted(Timestamp(51), 10).await.unwrap(),
        vec![stored.clone()]
    );
    store.mark_routed("ci", "r1").await.unwrap();
    assert_eq!(store.unrouted(Timestamp(51), 10).await.unwrap(), vec![]);
    let again = store
        .receive(&event("r1"), Timestamp(70), &received("r1"))
        .await
        .unwrap();
    assert_eq!(
        again,
        Received::Known {
            stored,
            routed: true
        }
    );
}

fn job(id: &str) -> Job {
    Job {
        id: id.into(),
        started_at: Timestamp(0),
        start_seq: 0,
        deadline: None,
        runtime: "pydantic-ai".into(),
        shadow: false,
        sandboxed: false,
        outside_started: false,
        ended_at: None,
    }
}

fn wait(name: &str, job: &str, subject: Option<&str>, deadline: i64) -> Wait {
    Wait {
        seq: 0,
        name: name.into(),
        job: job.into(),
        spec: WaitSpec {
            source: "ci".into(),
            types: None,
            subject: subject.map(str::to_owned),
            filter: None,
            timeout: std::time::Duration::from_secs(60),
            since: Since::Job,
        },
        after_seq: 0,
        created_at: Timestamp(0),
        deadline: Timestamp(deadline),
        state: WaitState::Open,
        event: None,
        reason: None,
    }
}

fn candidate(seq: i64, job: &str) -> Candidate {
    Candidate {
        wait_seq: seq,
        job: job.into(),
        audit: AuditRecord {
            at: Timestamp(2),
            action: "event.match".into(),
            data: json!({"wait": seq}),
        },
    }
}

async fn matches<S: Store>(store: &S) -> usize {
    let audit = store.audit().await.unwrap();
    audit.iter().filter(|r| r.action == "event.match").count()
}

/// One wait per job, oldest first; a lost claim gives its ledger row back.
async fn claims<S: Store>(store: &S) {
    for id in ["cj", "ck", "cm"] {
        assert!(store.insert_job(&job(id)).await.unwrap());
    }
    let w1 = store
        .insert_wait(&wait("c1", "cj", None, 1000))
        .await
        .unwrap()
        .unwrap();
    let w2 = store
        .insert_wait(&wait("c2", "cj", Some("s"), 1000))
        .await
        .unwrap()
        .unwrap();
    let w3 = store
        .insert_wait(&wait("c3", "ck", Some("s"), 1000))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store.insert_wait(&wait("c3", "ck", None, 1)).await.unwrap(),
        None
    );
    store
        .insert_event(&event("ce"), Timestamp(3))
        .await
        .unwrap()
        .unwrap();
    let key = ("ci", "ce");
    let outcomes = store
        .route(
            key,
            &[
                candidate(w1, "cj"),
                candidate(w2, "cj"),
                candidate(w3, "ck"),
            ],
            Timestamp(3),
            false,
        )
        .await
        .unwrap();
    assert_eq!(
        outcomes,
        [Claim::Claimed, Claim::JobHadEvent, Claim::Claimed]
    );
    let c1 = store.wait("c1").await.unwrap().unwrap();
    assert_eq!(
        (c1.state, c1.event),
        (WaitState::Matched, Some(("ci".into(), "ce".into())))
    );
    assert_eq!(
        store.wait("c2").await.unwrap().unwrap().state,
        WaitState::Open
    );
    assert!(store.job("cj").await.unwrap().unwrap().outside_started);
    assert_eq!(matches(store).await, 2);
    // A job never gets one event twice, and a wait changes state once.
    assert_eq!(
        store
            .claim(&candidate(w2, "cj"), key, Timestamp(4))
            .await
            .unwrap(),
        Claim::JobHadEvent
    );
    let m1 = store
        .insert_wait(&wait("m1", "cm", None, 1000))
        .await
        .unwrap()
        .unwrap();
    let m2 = store
        .insert_wait(&wait("m2", "cm", None, 1000))
        .await
        .unwrap()
        .unwrap();
    assert!(
        store
            .close(m1, WaitState::TimedOut, None, Timestamp(5))
            .await
            .unwrap()
    );
    assert!(
        !store
            .close(m1, WaitState::Refused, Some("late"), Timestamp(5))
            .await
            .unwrap()
    );
    assert_eq!(
        store
            .claim(&candidate(m1, "cm"), key, Timestamp(6))
            .await
            .unwrap(),
        Claim::NotOpen
    );
    assert_eq!(
        store
            .claim(&candidate(m2, "cm"), key, Timestamp(6))
            .await
            .unwrap(),
        Claim::Claimed
    );
    assert_eq!(matches(store).await, 3);
    assert!(store.job("ck").await.unwrap().unwrap().outside_started);
    // Look-back leaves out what the job's ledger holds.
    let ids = |events: Vec<ozcheck_runtime::model::StoredEvent>| {
        events.into_iter().map(|e| e.event.id).collect::<Vec<_>>()
    };
    assert_eq!(
        ids(store
            .retained_events("ci", 0, Timestamp(0), "cm")
            .await
            .unwrap()),
        ["c", "r1"]
    );
    assert_eq!(
        ids(store
            .retained_events("ci", 0, Timestamp(0), "cn")
            .await
            .unwrap()),
        ["c", "r1", "ce"]
    );
}

/// The index that edges sharing a database route through, and the due deadlines.
async fn shared_index<S: Store>(store: &S) {
    assert!(store.insert_job(&job("ij")).await.unwrap());
    let a = store
        .insert_wait(&wait("ia", "ij", Some("x"), 500))
        .await
        .unwrap()
        .unwrap();
    let b = store
        .insert_wait(&wait("ib", "ij", None, 400))
        .await
        .unwrap()
        .unwrap();
    let c = store
        .insert_wait(&wait("ic", "ij", Some("y"), 400))
        .await
        .unwrap()
        .unwrap();
    let seqs = |waits: Vec<Wait>| waits.into_iter().map(|w| w.seq).collect::<Vec<_>>();
    let on_x = seqs(store.open_waits_on("ci", "x").await.unwrap());
    assert!(
        on_x.contains(&a) && on_x.contains(&b) && !on_x.contains(&c),
        "{on_x:?}"
    );
    assert!(on_x.windows(2).all(|w| w[0] < w[1]), "registration order");
    assert!(store.open_waits_on("other", "x").await.unwrap().is_empty());
    assert_eq!(
        seqs(store.due_waits(Timestamp(450), 10).await.unwrap()),
        vec![b, c]
    );
    assert_eq!(
        seqs(store.due_waits(Timestamp(450), 1).await.unwrap()),
        vec![b]
    );
    assert_eq!(store.next_deadline().await.unwrap(), Some(Timestamp(400)));
    for seq in [a, b, c] {
        assert!(
            store
                .close(seq, WaitState::TimedOut, None, Timestamp(600))
                .await
                .unwrap()
        );
    }
    assert!(
        store
            .due_waits(Timestamp(600), 10)
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .open_waits_on("ci", "x")
            .await
            .unwrap()
            .iter()
            .all(|w| w.seq != a && w.seq != b)
    );
}

/// A lease is held until it expires; its holder renews it.
async fn leases<S: Store>(store: &S) {
    assert!(
        store
            .take_lease("l", "a", Timestamp(0), Timestamp(10))
            .await
            .unwrap()
    );
    assert!(
        !store
            .take_lease("l", "b", Timestamp(5), Timestamp(15))
            .await
            .unwrap()
    );
    assert!(
        store
            .take_lease("l", "a", Timestamp(9), Timestamp(20))
            .await
            .unwrap()
    );
    assert!(
        !store
            .take_lease("l", "b", Timestamp(19), Timestamp(30))
            .await
            .unwrap()
    );
    assert!(
        store
            .take_lease("l", "b", Timestamp(20), Timestamp(30))
            .await
            .unwrap()
    );
    assert!(
        !store
            .take_lease("l", "a", Timestamp(21), Timestamp(40))
            .await
            .unwrap()
    );
    assert!(
        store
            .take_lease("other", "a", Timestamp(21), Timestamp(40))
            .await
            .unwrap()
    );
}
