//! Findings of an independent attack on the hard limits (someone who had not written the
//! evaluator, given only the promises): one test each, failing without its fix. Times are never
//! asserted: a clock that moves one millisecond at every read makes "the deadline is read while
//! this runs" a deterministic property; the real-clock times are in BENCHMARKS.md
//! (`examples/adversarial.rs`).

use std::sync::Arc;
use std::time::Duration;

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::eval::{EvalError, Event, Limits, ManualClock, Program, Stop, Value};
use ozcheck_analyzer::{EventBounds, Options, compile};
use serde_json::json;

fn event(text: &str, attributes: &serde_json::Value) -> Event {
    let json = json!({
        "id": "1", "source": "s", "type": "t", "action": "a", "subject": "x",
        "text": text, "attributes": attributes
    });
    Event::from_value(&json, &EventBounds::DEFAULT).expect("within the default bounds")
}

/// Evaluates `source` with the cost limit off and `clock`.
fn eval(source: &str, event: &Event, clock: ManualClock) -> Result<Value, EvalError> {
    let options = Options::default();
    let checked = compile(source, &Env::filter(), &options).expect("compiles");
    let program = Program::from_checked(&checked).expect("prepares");
    let limits = Limits {
        cost: None,
        deadline: Duration::from_millis(250),
        clock: Arc::new(clock),
        model: options.model,
        ..Limits::default()
    };
    program.eval_event(event, &limits).map(|e| e.value)
}

/// A clock that passes the 250 ms deadline at its 250th read.
fn stepping() -> ManualClock {
    ManualClock::stepping(Duration::from_millis(1))
}

fn is_deadline(result: &Result<Value, EvalError>) -> bool {
    matches!(result, Err(EvalError::Stopped(Stop::Deadline { .. })))
}

/// 2,000 references to two strings of 64 KiB that differ in their last byte: every comparison
/// of the sort reads them to the end. The sort read no clock and ran for seconds with larger
/// strings (6–13 s for 50,000 references to 2 MiB).
#[test]
fn sort_reads_the_deadline_between_comparisons() {
    let text = "a".repeat(16 * 1024);
    let e = event(&text, &json!({}));
    for sort in ["sort()", "sortBy(s, s)"] {
        let source = format!(
            "[event.text + event.text + event.text + event.text].all(b, [b + 'a'].all(x, \
             [b + 'b'].all(y, lists.range(2000).map(i, i % 2 == 0 ? x : y).{sort}.size() > 0)))"
        );
        let result = eval(&source, &e, stepping());
        assert!(is_deadline(&result), "{sort}: {result:?}");
        // With a clock that never moves, the same sort completes.
        assert!(matches!(
            eval(&source, &e, ManualClock::new()),
            Ok(Value::Bool(true))
        ));
    }
}

/// NaN is not ordered: the standard library's sort panics ("does not correctly implement a
/// total order") on such a comparison once a list has more than twenty elements.
#[test]
fn sorting_doubles_with_nan_does_not_panic() {
    let e = event("", &json!({}));
    for sort in ["sort()", "sortBy(d, d)", "sortBy(d, -d)"] {
        let source = format!(
            "lists.range(40).map(i, i % 3 == 0 ? double('NaN') : double(40 - i)).{sort}.size() == 40"
        );
        assert!(
            matches!(eval(&source, &e, ManualClock::new()), Ok(Value::Bool(true))),
            "{sort}"
        );
    }
    // The order of what is ordered is kept.
    let sorted = "[3.0, 1.0, 2.0].sort() == [1.0, 2.0, 3.0]";
    assert!(matches!(
        eval(sorted, &e, ManualClock::new()),
        Ok(Value::Bool(true))
    ));
}

/// A million one-character parts of a built string: `split` read no clock while it allocated
/// them (300–400 ms past a 20 ms deadline).
#[test]
fn split_reads_the_deadline_between_parts() {
    let text = "a".repeat(16 * 1024);
    let e = event(&text, &json!({}));
    let source = "[event.text + event.text].all(a, [a + a + a + a].all(b, \
                  [b + b + b + b].all(c, c.split('').size() > 0)))";
    let result = eval(source, &e, stepping());
    assert!(is_deadline(&result), "{result:?}");
    assert!(matches!(
        eval(source, &e, ManualClock::new()),
        Ok(Value::Bool(true))
    ));
}

/// Optional values wrap their value in an allocation of their own: 600,000 of them, three deep,
/// held 122 MB with nothing counted against the 32 MiB cap.
#[test]
fn optional_values_count_against_the_memory_cap() {
    let e = event("", &json!({}));
    for wrap in [
        "optional.of(optional.of(optional.of(i)))",
        "optional.ofNonZeroValue(optional.of(optional.of(i + 1)))",
        "[[i].first(), [i].last(), {'k': i}.?k]",
        "optional.of(i).optMap(x, optional.of(x))",
    ] {
        let source = format!("lists.range(600000).map(i, {wrap}).size() > 0");
        let result = eval(&source, &e, ManualClock::new());
        assert!(
            matches!(result, Err(EvalError::Stopped(Stop::Memory { .. }))),
            "{wrap}: {result:?}"
        );
    }
    // A few are nothing to stop.
    assert!(matches!(
        eval(
            "lists.range(1000).map(i, optional.of(i)).size() > 0",
            &e,
            ManualClock::new()
        ),
        Ok(Value::Bool(true))
    ));
}

/// A needle longer than the haystack is answered before a searcher is built over the needle:
/// the call is charged one unit, and the answers are those of a search.
#[test]
fn long_needles_in_short_haystacks_are_answered_at_once() {
    let text = "b".repeat(16 * 1024);
    let e = event(&text, &json!({}));
    for (source, expected) in [
        ("''.contains(event.text)", false),
        ("'b'.contains(event.text)", false),
        ("''.indexOf(event.text) == -1", true),
        ("'bb'.lastIndexOf(event.text) == -1", true),
        ("''.replace(event.text, 'c') == ''", true),
        ("'bb'.replace(event.text, 'c', 0) == 'bb'", true),
        ("''.split(event.text) == ['']", true),
        ("'b'.split(event.text) == ['b']", true),
        ("event.text.contains(event.text)", true),
        ("event.text.indexOf(event.text) == 0", true),
        ("event.text.lastIndexOf(event.text) == 0", true),
        ("event.text.split(event.text).size() == 2", true),
    ] {
        assert!(
            matches!(eval(source, &e, ManualClock::new()), Ok(Value::Bool(b)) if b == expected),
            "{source}"
        );
    }
}

/// The witness writes the computed-key member beside the members under constant keys: its key
/// was `m` even when the filter also read `event.attributes.m`, and the event, with `m` twice,
/// was refused by every reader (41 of 3,697 accepted random filters).
#[test]
fn witnesses_never_repeat_a_key() {
    use ozcheck_analyzer::check_with_witness;
    for source in [
        "dyn(event.attributes.m) == event.attributes[event.text]",
        "event.attributes.m.size() + event.attributes.mm.size() + event.attributes.m0.size() \
         > size(event.attributes[event.action])",
        "event.attributes.m.exists(x, x == event.attributes[event.subject])",
    ] {
        let (_, witness) = check_with_witness(source, &Env::filter(), &Options::default());
        let witness = witness.expect("an event filter has a witness");
        let read = Event::from_json(&witness.event, &EventBounds::DEFAULT);
        assert!(read.is_ok(), "{source}: {read:?}\n{}", witness.event);
    }
}

/// The witness search stops after a bounded amount of metered work: a filter whose every
/// candidate runs to the search cap (sixteen limits) used all 400 candidates, 30 s for a 1 KiB
/// filter of fourteen such clauses.
#[test]
fn the_witness_search_has_a_work_budget() {
    use ozcheck_analyzer::witness::{self, Effort};
    let options = Options::default();
    let source = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y + 1))";
    let env = Env::filter();
    let checked = compile(source, &env, &options).expect("compiles");
    let estimate = ozcheck_analyzer::cost::estimate(&checked, &env, &options);
    let cap = 2 * options.limit;
    let effort = Effort {
        cap,
        evaluations: 400,
        work: 3 * cap,
    };
    let w = witness::build(&checked, &env, &estimate, &options, effort).expect("a witness");
    // Three caps of work, and the candidate that crosses the budget: at most four full runs
    // plus the cheap ones before them.
    assert!(w.evaluations <= 40, "{} evaluations", w.evaluations);
    // What `ozcheck filter --witness` spends is bounded the same way.
    let default = Effort::for_limit(options.limit, u64::MAX);
    assert_eq!(default.work, 4 * 16 * options.limit);
}

/// A pattern computed from constants alone is refused at check time as its literal would be,
/// with the words of the run-time error; it was accepted and then failed on every event.
#[test]
fn constant_patterns_are_checked_however_they_are_written() {
    use ozcheck_analyzer::{Verdict, check_filter};
    let e = event("abc", &json!({}));
    for pattern in [
        "'(' + ''",
        "dyn('(')",
        "true ? '(' : 'a'",
        "['a{1001}'][0]",
        "'%s'.format(['('])",
        "string(b'(')",
        "{'p': '('}.p",
        "'(('.substring(1)",
        "'(a'.charAt(0)",
    ] {
        let source = format!("'abc'.matches({pattern})");
        let report = check_filter(&source, &Options::default());
        assert_eq!(report.verdict, Verdict::Refused, "{pattern}");
        let diagnostic = &report.diagnostics[0];
        assert_eq!(diagnostic.code, "invalid-regex", "{pattern}");
        // The span is the pattern's.
        assert_eq!(
            &source[diagnostic.span.start as usize..diagnostic.span.end as usize],
            pattern
        );
        // The evaluator, run without the check, fails with the same message.
        let ast = ozcheck_analyzer::syntax::parse(
            &source,
            &ozcheck_analyzer::syntax::ParseOptions::default(),
        )
        .unwrap();
        let program = Program::new(ast).unwrap();
        let Err(EvalError::Runtime { message, .. }) = program.eval_event(&e, &Limits::default())
        else {
            panic!("{pattern}: not a run-time error")
        };
        assert_eq!(message, diagnostic.message, "{pattern}");
    }
    // Patterns that read the event are judged when they run, and valid constants pass.
    for source in [
        "'abc'.matches(event.text)",
        "'abc'.matches('a' + 'b')",
        "'abc'.matches(['x', 'b'][1])",
    ] {
        assert_eq!(
            check_filter(source, &Options::default()).verdict,
            Verdict::Accepted,
            "{source}"
        );
    }
}
