//! The witness guarantee (docs/cost-model.md §9.1), one test per class of issue 33 item 3: a
//! refused filter's witness replays past the limit, or the witness says why it found none; an
//! accepted filter's witness reaches at least half of the estimate's max; a witness is an event
//! the filter runs on without a runtime error. Every witness is replayed here as
//! `ozcheck eval --no-static-check --event W` replays it: read with the event reader's bounds and
//! evaluated with the default limit. Ratios are taken against the estimator in the tree, never
//! a number written here.

use std::sync::Arc;
use std::time::Duration;

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::eval::{EvalError, Event, Limits, ManualClock, Program, Stop};
use ozcheck_analyzer::witness::Witness;
use ozcheck_analyzer::{EventBounds, Options, Verdict, check_with_witness, compile};

/// What replaying a witness with the default limit did.
#[derive(Debug, PartialEq, Eq)]
enum Replay {
    Done(u64),
    CostLimit,
    Failed(String),
}

fn replay(source: &str, witness: &Witness) -> Replay {
    let options = Options::default();
    let checked = compile(source, &Env::filter(), &options).expect("compiles");
    let program = Program::from_checked(&checked).expect("prepares");
    let event = Event::from_json(&witness.event, &EventBounds::DEFAULT)
        .unwrap_or_else(|e| panic!("{source}: the witness is not a valid event: {e:?}"));
    let limits = Limits {
        deadline: Duration::from_secs(3600),
        clock: Arc::new(ManualClock::new()),
        ..Limits::default()
    };
    match program.eval_event(&event, &limits) {
        Ok(done) => Replay::Done(done.cost),
        Err(EvalError::Stopped(Stop::CostLimit { .. })) => Replay::CostLimit,
        Err(e) => Replay::Failed(e.to_string()),
    }
}

fn witness(source: &str) -> (Verdict, u64, Witness) {
    let (report, witness) = check_with_witness(source, &Env::filter(), &Options::default());
    let max = report.cost.expect("estimated").max;
    (
        report.verdict,
        max,
        witness.expect("an event filter has a witness"),
    )
}

/// Refused shapes of the extension libraries whose witnesses stayed under the limit while
/// hand-built events exceed it 10–500×: elements that must differ (`distinct`, the sets), one
/// long part among many (`sort`, `sortBy`), keys that must not match a literal, every
/// character of the text searched in it.
#[test]
fn refused_filters_witnesses_replay_past_the_limit() {
    for source in [
        "event.text.split('').distinct().size() > 0",
        "event.text.split(',').distinct().size() > 0",
        "event.text.split(',').sort().size() > 0",
        "event.attributes.items.sortBy(x, x).size() > 0",
        "event.attributes.items.sortBy(x, x.name).size() > 0",
        "event.attributes.tags.distinct().size() > 0",
        "event.attributes.exists(k, event.attributes.exists(j, k == j + 'x'))",
        // Generated keys are never empty: `''` ends this `all` at its first pair.
        "event.attributes.all(k, event.attributes.all(j, k.size() + j.size() > 0))",
        "event.text.split('').all(c, event.text.contains(c))",
        "event.text.split('').exists(c, event.text.indexOf(c) < 0)",
    ] {
        let (verdict, _, w) = witness(source);
        assert_eq!(verdict, Verdict::Refused, "{source}");
        assert!(w.proves(Options::default().limit), "{source}: {w:?}");
        assert_eq!(w.shortfall, None, "{source}");
        assert_eq!(replay(source, &w), Replay::CostLimit, "{source}");
    }
}

/// A refused filter no event can make expensive (the inner `exists` finds `k` itself at once)
/// gets a witness that says so instead of passing silently as a proof.
#[test]
fn a_refused_filter_without_a_proof_says_why() {
    let source = "event.attributes.exists(k, event.attributes.exists(j, k == j))";
    let (verdict, _, w) = witness(source);
    assert_eq!(verdict, Verdict::Refused);
    assert!(!w.proves(Options::default().limit));
    let why = w.shortfall.expect("a shortfall");
    assert!(
        why.contains("no event found that costs more than the limit"),
        "{why}"
    );
    assert!(why.contains(&w.evaluations.to_string()), "{why}");
}

/// Accepted shapes of the extension libraries: the witness reaches at least half of the
/// estimate's max. `'%s'.format([event.attributes])` got an empty event (18 units) and the
/// double quoting a third of what a text of quotes costs.
#[test]
fn accepted_filters_witnesses_reach_half_the_estimate() {
    for source in [
        "'%s'.format([event.attributes]) != ''",
        "'%s'.format([event.attributes.x]) != ''",
        "strings.quote(strings.quote(event.text)) != ''",
        "strings.quote(event.text) != ''",
        "event.text.split(' ').join(',') != ''",
        "event.attributes.labels.join(' ').contains('bug')",
        "event.text.replace('a', 'bb') != ''",
        "event.text.split('').size() > 0",
        "event.attributes.exists(k, k.startsWith('x'))",
        "event.attributes.files.all(f, !f.endsWith('.lock'))",
    ] {
        let (verdict, max, w) = witness(source);
        assert_eq!(verdict, Verdict::Accepted, "{source}");
        assert!(
            w.cost.saturating_mul(2) >= max,
            "{source}: the witness costs {} of an estimated {max}",
            w.cost
        );
        assert_eq!(replay(source, &w), Replay::Done(w.cost), "{source}");
    }
}

/// The elements of `files` are used as strings, so the witness's are strings: integers made
/// the filter fail with "no matching overload" on every element (and cost more, which is why
/// the search picked them).
#[test]
fn witnesses_are_events_the_filter_runs_on() {
    for source in [
        "event.attributes.files.all(f, !f.endsWith('.lock'))",
        "event.action == 'opened' && !event.attributes.draft",
        "event.attributes.a.map(x, x + x).filter(y, y.size() > 3).size() > 0",
    ] {
        let (_, _, w) = witness(source);
        assert_eq!(w.failure, None, "{source}: {}", w.event);
        assert!(
            matches!(replay(source, &w), Replay::Done(_)),
            "{source}: {}",
            w.event
        );
    }
}
