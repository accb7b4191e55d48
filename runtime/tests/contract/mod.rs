//! The store contract every backend keeps (memory, `SQLite`, `PostgreSQL`): each step through the
//! public `Store` trait, with the answers the semantics promise.

use ozcheck_runtime::clock::Timestamp;
use ozcheck_runtime::model::{
    AuditRecord, Event, Fire, FireState, Job, Since, StepRecord, StepState, Wait, WaitSpec,
    WaitState,
};
use ozcheck_runtime::store::{
    Candidate, Claim, FireLimit, FireOutcome, Received, Store, ToRoute, WaitInsert,
};
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
    kept_events_and_ended_jobs(&store).await;
    flow_steps_and_audit_pages(&store).await;
    batches(&store).await;
}

fn inserted(insert: WaitInsert) -> i64 {
    match insert {
        WaitInsert::Inserted(seq) => seq,
        other => panic!("not inserted: {other:?}"),
    }
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
        event: Some(event(job)),
    };
    let limit = Some(FireLimit {
        max: 1,
        window_start: Timestamp(0),
    });
    let record = |f: &Fire| {
        let fired = self::job(&f.job);
        let audit = AuditRecord {
            at: f.at,
            action: "event.match".into(),
            data: json!({"job": f.job}),
        };
        (fired, audit)
    };
    let fire_once = async |f: Fire, limit| {
        let (fired, audit) = record(&f);
        store.record_fire(&f, limit, &fired, &audit).await.unwrap()
    };
    let audit_before = store.audit().await.unwrap().len();
    assert_eq!(fire_once(fire("x", 1), limit).await, FireOutcome::Started);
    assert_eq!(fire_once(fire("x", 2), limit).await, FireOutcome::Duplicate);
    assert_eq!(
        fire_once(fire("y", 3), limit).await,
        FireOutcome::Refused("max_fires_per_hour".into())
    );
    let later = Some(FireLimit {
        max: 1,
        window_start: Timestamp(2),
    });
    assert_eq!(fire_once(fire("z", 4), later).await, FireOutcome::Started);
    // A started fire's job and each fire's record commit with it; a refused fire starts no job.
    assert!(store.job("x").await.unwrap().is_some());
    assert!(store.job("y").await.unwrap().is_none());
    let outcomes: Vec<_> = store.audit().await.unwrap()[audit_before..]
        .iter()
        .map(|r| (r.data["job"].clone(), r.data["outcome"].clone()))
        .collect();
    assert_eq!(
        outcomes,
        [
            (json!("x"), json!("started")),
            (json!("y"), json!("refused")),
            (json!("z"), json!("started"))
        ]
    );
    assert_eq!(
        store.fire("x").await.unwrap().and_then(|f| f.event),
        Some(event("x")),
        "a fire keeps its event"
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
    assert_eq!(
        store.end_job("j", Timestamp(9)).await.unwrap(),
        Some(vec![])
    );
    assert_eq!(store.end_job("j", Timestamp(10)).await.unwrap(), None);
    assert_eq!(store.end_job("nobody", Timestamp(10)).await.unwrap(), None);
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
    assert_eq!(*stored.event, event("r1"));
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

/// A running job with nothing else set.
pub fn job(id: &str) -> Job {
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

/// An open wait of `job` for any event of source `ci` (on `subject`, if given).
pub fn wait(name: &str, job: &str, subject: Option<&str>, deadline: i64) -> Wait {
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
        matched: None,
        reason: None,
    }
}

/// A candidate of wait `seq` of `job`, with its `event.match` record.
pub fn candidate(seq: i64, job: &str) -> Candidate {
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
    let base = matches(store).await;
    for id in ["cj", "ck", "cm"] {
        assert!(store.insert_job(&job(id)).await.unwrap());
    }
    let w1 = inserted(
        store
            .insert_wait(&wait("c1", "cj", None, 1000))
            .await
            .unwrap(),
    );
    let w2 = inserted(
        store
            .insert_wait(&wait("c2", "cj", Some("s"), 1000))
            .await
            .unwrap(),
    );
    let w3 = inserted(
        store
            .insert_wait(&wait("c3", "ck", Some("s"), 1000))
            .await
            .unwrap(),
    );
    assert_eq!(
        store.insert_wait(&wait("c3", "ck", None, 1)).await.unwrap(),
        WaitInsert::NameTaken
    );
    store
        .insert_event(&event("ce"), Timestamp(3))
        .await
        .unwrap()
        .unwrap();
    let key = &event("ce");
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
    let c1 = store.wait("cj", "c1").await.unwrap().unwrap();
    assert_eq!(
        (c1.state, c1.event, c1.matched.as_deref()),
        (
            WaitState::Matched,
            Some(("ci".into(), "ce".into())),
            Some(&event("ce"))
        )
    );
    assert_eq!(
        store.wait("cj", "c2").await.unwrap().unwrap().state,
        WaitState::Open
    );
    assert!(store.job("cj").await.unwrap().unwrap().outside_started);
    assert_eq!(matches(store).await, base + 2);
    // A job never gets one event twice, and a wait changes state once.
    assert_eq!(
        store
            .claim(&candidate(w2, "cj"), key, Timestamp(4))
            .await
            .unwrap(),
        Claim::JobHadEvent
    );
    let m1 = inserted(
        store
            .insert_wait(&wait("m1", "cm", None, 1000))
            .await
            .unwrap(),
    );
    let m2 = inserted(
        store
            .insert_wait(&wait("m2", "cm", None, 1000))
            .await
            .unwrap(),
    );
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
    assert_eq!(matches(store).await, base + 3);
    assert!(store.job("ck").await.unwrap().unwrap().outside_started);
    // Look-back leaves out what the job's ledger holds.
    let ids = |events: Vec<ozcheck_runtime::model::StoredEvent>| {
        events
            .iter()
            .map(|e| e.event.id.clone())
            .collect::<Vec<_>>()
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
    let a = inserted(
        store
            .insert_wait(&wait("ia", "ij", Some("x"), 500))
            .await
            .unwrap(),
    );
    let b = inserted(
        store
            .insert_wait(&wait("ib", "ij", None, 400))
            .await
            .unwrap(),
    );
    let c = inserted(
        store
            .insert_wait(&wait("ic", "ij", Some("y"), 400))
            .await
            .unwrap(),
    );
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

/// Names are per job; a matched wait keeps its event past a purge; ending a job refuses its
/// open waits in the same step, and an ended job registers no wait.
async fn kept_events_and_ended_jobs<S: Store>(store: &S) {
    for id in ["kj", "kk"] {
        assert!(store.insert_job(&job(id)).await.unwrap());
    }
    let a = inserted(
        store
            .insert_wait(&wait("same", "kj", None, 9000))
            .await
            .unwrap(),
    );
    let b = inserted(
        store
            .insert_wait(&wait("same", "kk", None, 9000))
            .await
            .unwrap(),
    );
    assert_ne!(a, b);
    let named: Vec<_> = store
        .waits_named("same")
        .await
        .unwrap()
        .into_iter()
        .map(|w| w.job)
        .collect();
    assert_eq!(named, ["kj", "kk"]);
    assert_eq!(store.wait_by_seq(b).await.unwrap().unwrap().job, "kk");
    store
        .insert_event(&event("ke"), Timestamp(7000))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        store
            .claim(&candidate(a, "kj"), &event("ke"), Timestamp(7001))
            .await
            .unwrap(),
        Claim::Claimed
    );
    store.purge_events(Timestamp(i64::MAX)).await.unwrap();
    assert!(store.event("ci", "ke").await.unwrap().is_none());
    let kept = store.wait("kj", "same").await.unwrap().unwrap();
    assert_eq!(
        kept.matched.as_deref(),
        Some(&event("ke")),
        "the wait keeps its event"
    );

    let open = inserted(
        store
            .insert_wait(&wait("later", "kk", None, 9000))
            .await
            .unwrap(),
    );
    let refused = store.end_job("kk", Timestamp(8000)).await.unwrap().unwrap();
    let seqs: Vec<i64> = refused.iter().map(|w| w.seq).collect();
    assert_eq!(seqs, [b, open]);
    for seq in [b, open] {
        let w = store.wait_by_seq(seq).await.unwrap().unwrap();
        assert_eq!(
            (w.state, w.reason.as_deref()),
            (WaitState::Refused, Some("the job ended"))
        );
        assert_eq!(
            store
                .claim(&candidate(seq, "kk"), &event("kf"), Timestamp(8001))
                .await
                .unwrap(),
            Claim::NotOpen
        );
    }
    assert_eq!(
        store
            .insert_wait(&wait("after", "kk", None, 9000))
            .await
            .unwrap(),
        WaitInsert::JobEnded
    );
    assert_eq!(
        store
            .insert_wait(&wait("w", "nobody", None, 9000))
            .await
            .unwrap(),
        WaitInsert::JobEnded
    );
}

/// Flow steps are recorded once and decided once; audit pages follow their cursor.
async fn flow_steps_and_audit_pages<S: Store>(store: &S) {
    let step = |id: &str, state| StepRecord {
        job: "fj".into(),
        step: id.into(),
        state,
        output: if state == StepState::Pending {
            serde_json::Value::Null
        } else {
            json!({"matched": false})
        },
        details: Some(format!("details of {id}")),
        at: Timestamp(1),
    };
    assert!(
        store
            .record_step(&step("a", StepState::Skipped))
            .await
            .unwrap()
    );
    assert!(
        !store
            .record_step(&step("a", StepState::Pending))
            .await
            .unwrap()
    );
    assert!(
        store
            .record_step(&step("b", StepState::Pending))
            .await
            .unwrap()
    );
    let yes = json!({"approved": true});
    assert!(
        !store
            .decide_step("fj", "a", &yes, Timestamp(2))
            .await
            .unwrap()
    );
    assert!(
        store
            .decide_step("fj", "b", &yes, Timestamp(2))
            .await
            .unwrap()
    );
    assert!(
        !store
            .decide_step("fj", "b", &yes, Timestamp(3))
            .await
            .unwrap()
    );
    let steps = store.steps_of_job("fj").await.unwrap();
    let summary: Vec<_> = steps
        .iter()
        .map(|s| (s.step.as_str(), s.state, s.output.clone()))
        .collect();
    assert_eq!(
        summary,
        [
            ("a", StepState::Skipped, json!({"matched": false})),
            ("b", StepState::Decided, yes)
        ]
    );
    assert_eq!(steps[1].details.as_deref(), Some("details of b"));

    let all = store.audit().await.unwrap();
    let mut paged = Vec::new();
    let mut after = 0;
    loop {
        let page = store.audit_page(after, 3).await.unwrap();
        let Some((last, _)) = page.last() else { break };
        after = *last;
        assert!(page.len() <= 3);
        paged.extend(page.into_iter().map(|(_, r)| r));
    }
    assert_eq!(paged, all);
}

/// An event of the source that only [`batches`] uses.
fn batch_event(id: &str, subject: &str) -> Event {
    Event {
        source: "bsrc".into(),
        subject: subject.into(),
        ..event(id)
    }
}

/// A wait on the source that only [`batches`] uses.
fn batch_wait(name: &str, job: &str, subject: Option<&str>) -> Wait {
    let mut wait = wait(name, job, subject, 1000);
    wait.spec.source = "bsrc".into();
    wait
}

/// Several events at once: retained in one step, routed in one step exactly as one after
/// another would be, and the shared index read for several keys at once.
async fn batches<S: Store>(store: &S) {
    let base = matches(store).await;
    for id in ["bj", "bk"] {
        assert!(store.insert_job(&job(id)).await.unwrap());
    }
    let b1 = inserted(
        store
            .insert_wait(&batch_wait("b1", "bj", Some("bs")))
            .await
            .unwrap(),
    );
    let b2 = inserted(
        store
            .insert_wait(&batch_wait("b2", "bj", None))
            .await
            .unwrap(),
    );
    let b3 = inserted(
        store
            .insert_wait(&batch_wait("b3", "bk", Some("bs")))
            .await
            .unwrap(),
    );
    let (e1, e2, e3) = (
        batch_event("be1", "bs"),
        batch_event("be2", "bs"),
        batch_event("be3", "bs"),
    );

    let first = store
        .receive_many(
            &[e1.clone(), e2.clone()],
            &[received("be1"), received("be2")],
            Timestamp(10),
        )
        .await
        .unwrap();
    let [Received::New(s1), Received::New(s2)] = &first[..] else {
        panic!("not both new: {first:?}");
    };
    assert!(s1.seq != s2.seq);
    assert_eq!((&*s1.event, &*s2.event), (&e1, &e2));
    // A second delivery of an unrouted event is known and unrouted; a new one in the same batch
    // is new.
    let second = store
        .receive_many(
            &[e2.clone(), e3.clone()],
            &[received("be2"), received("be3")],
            Timestamp(11),
        )
        .await
        .unwrap();
    assert!(
        matches!(&second[..], [Received::Known { stored, routed: false }, Received::New(_)]
            if stored.seq == s2.seq),
        "{second:?}"
    );

    // Routed as one after another: be1 takes b1 (b2 skipped: its job has be1) and b3; be2
    // finds b1 taken and gets b2, the next wait of its job, and finds b3 taken; be3 finds
    // nothing open.
    let all = [
        candidate(b1, "bj"),
        candidate(b2, "bj"),
        candidate(b3, "bk"),
    ];
    let batch: Vec<ToRoute> = [&e1, &e2, &e3]
        .into_iter()
        .map(|event| ToRoute {
            event: event.clone().into(),
            candidates: all.to_vec(),
            mark_routed: true,
            seq: None,
        })
        .collect();
    let outcomes = store.route_many(&batch, Timestamp(12)).await.unwrap();
    assert_eq!(
        outcomes,
        [
            vec![Claim::Claimed, Claim::JobHadEvent, Claim::Claimed],
            vec![Claim::NotOpen, Claim::Claimed, Claim::NotOpen],
            vec![Claim::NotOpen, Claim::NotOpen, Claim::NotOpen],
        ]
    );
    let got = |name: &'static str, job: &'static str| async move {
        let wait = store.wait(job, name).await.unwrap().unwrap();
        (
            wait.state,
            wait.event.map(|e| e.1),
            wait.matched.map(|e| e.id.clone()),
        )
    };
    let matched = |id: &str| (WaitState::Matched, Some(id.to_owned()), Some(id.to_owned()));
    assert_eq!(got("b1", "bj").await, matched("be1"));
    assert_eq!(got("b2", "bj").await, matched("be2"));
    assert_eq!(got("b3", "bk").await, matched("be1"));
    assert!(store.job("bk").await.unwrap().unwrap().outside_started);
    assert_eq!(matches(store).await, base + 3);
    // All three are marked routed with their claims.
    let again = store
        .receive_many(
            &[e1.clone(), e2.clone(), e3.clone()],
            &[received("be1"), received("be2"), received("be3")],
            Timestamp(13),
        )
        .await
        .unwrap();
    assert!(
        again
            .iter()
            .all(|r| matches!(r, Received::Known { routed: true, .. })),
        "{again:?}"
    );

    // A job that had an event skips it on a new wait; another job's new wait takes it.
    let b4 = inserted(
        store
            .insert_wait(&batch_wait("b4", "bj", Some("bs")))
            .await
            .unwrap(),
    );
    let b5 = inserted(
        store
            .insert_wait(&batch_wait("b5", "bk", None))
            .await
            .unwrap(),
    );
    let late = ToRoute {
        event: e3.clone().into(),
        candidates: vec![candidate(b4, "bj"), candidate(b5, "bk")],
        mark_routed: false,
        seq: None,
    };
    let e2_again = ToRoute {
        event: e2.clone().into(),
        candidates: vec![candidate(b4, "bj"), candidate(b5, "bk")],
        mark_routed: false,
        seq: None,
    };
    assert_eq!(
        store
            .route_many(&[e2_again, late], Timestamp(14))
            .await
            .unwrap(),
        [
            vec![Claim::JobHadEvent, Claim::Claimed],
            vec![Claim::Claimed, Claim::NotOpen],
        ]
    );
    assert_eq!(got("b4", "bj").await, matched("be3"));
    assert_eq!(got("b5", "bk").await, matched("be2"));
    assert_eq!(matches(store).await, base + 5);

    // The index for several keys at once is the index for each key.
    let b6 = inserted(
        store
            .insert_wait(&batch_wait("b6", "bk", Some("bt")))
            .await
            .unwrap(),
    );
    let b7 = inserted(
        store
            .insert_wait(&batch_wait("b7", "bj", None))
            .await
            .unwrap(),
    );
    let b8 = inserted(
        store
            .insert_wait(&batch_wait("b8", "bk", Some("bs")))
            .await
            .unwrap(),
    );
    // Waits that take some types only: read for the keys of those types alone.
    let typed = |name: &str, subject: Option<&str>, types: &[&str]| {
        let mut w = batch_wait(name, "bk", subject);
        w.spec.types = Some(types.iter().map(|t| (*t).to_owned()).collect());
        w
    };
    let b9 = inserted(
        store
            .insert_wait(&typed("b9", Some("bs"), &["push"]))
            .await
            .unwrap(),
    );
    let b10 = inserted(
        store
            .insert_wait(&typed("b10", None, &["pr", "push"]))
            .await
            .unwrap(),
    );
    // A type that is a part of another, or quoted, is not that type.
    let b11 = inserted(
        store
            .insert_wait(&typed("b11", Some("bt"), &["pu", "\"push\""]))
            .await
            .unwrap(),
    );
    let keys: Vec<(String, String, String)> = [
        ("bsrc", "bs", "any"),
        ("bsrc", "bt", "any"),
        ("ci", "nothing", "any"),
        ("bsrc", "bs", "any"),
        ("bsrc", "bs", "push"),
        ("bsrc", "bt", "pr"),
        ("bsrc", "bt", "push"),
        ("bsrc", "bt", "\"push\""),
        ("other", "bs", "push"),
    ]
    .iter()
    .map(|(a, b, c)| ((*a).to_owned(), (*b).to_owned(), (*c).to_owned()))
    .collect();
    let many = store.open_waits_on_many(&keys).await.unwrap();
    let seqs: Vec<Vec<i64>> = many
        .iter()
        .map(|w| w.iter().map(|w| w.seq).collect())
        .collect();
    assert_eq!(seqs[0], [b7, b8]);
    assert_eq!(seqs[1], [b6, b7]);
    assert!(seqs[2].is_empty());
    assert_eq!(seqs[3], [b7, b8]);
    assert_eq!(seqs[4], [b7, b8, b9, b10]);
    assert_eq!(seqs[5], [b6, b7, b10]);
    assert_eq!(seqs[6], [b6, b7, b10]);
    assert_eq!(seqs[7], [b6, b7, b11]);
    assert!(seqs[8].is_empty());
    // Each key's waits are the index's for its source and subject that take its type.
    for ((source, subject, kind), waits) in keys.iter().zip(&many) {
        let mut expected = store.open_waits_on(source, subject).await.unwrap();
        expected.retain(|w| w.spec.takes_type(kind));
        assert_eq!(waits, &expected);
    }
    assert!(store.open_waits_on_many(&[]).await.unwrap().is_empty());
    assert!(
        store
            .route_many(&[], Timestamp(15))
            .await
            .unwrap()
            .is_empty()
    );
    assert!(
        store
            .receive_many(&[], &[], Timestamp(15))
            .await
            .unwrap()
            .is_empty()
    );
}
