//! Charge by work and memory follows cost (issue 33, items 1 and 2), through the public entry
//! points: key comparisons in lookups and in building maps are charged by the keys' length and
//! priced the same way by the estimator, and no kind of value counts more bytes against the
//! memory cap than `MAX_BYTES_PER_UNIT` a unit charged.

use std::sync::Arc;
use std::time::Duration;

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::cost::CostModel;
use ozcheck_analyzer::cost::table::{self, MAX_BYTES_PER_UNIT, MEMORY_LIMIT};
use ozcheck_analyzer::eval::{EvalError, Evaluation, Event, Limits, ManualClock, Program, Stop};
use ozcheck_analyzer::{EventBounds, Options, Verdict, check_filter, compile};
use serde_json::json;

/// Eight keys of the text's length plus one, sharing all of it with the text: every probe of a
/// lookup of the text walks the whole text.
fn long_keys() -> String {
    (0..8)
        .map(|i| format!("event.text + '{i}': {i}"))
        .collect::<Vec<_>>()
        .join(", ")
}

/// The class: long keys built from the text once, then looked up 80,000 times (`k`
/// is one of them, `event.text` shares all but its last byte with each).
/// Charged one unit a lookup (version 3) it was accepted, and ran for seconds.
fn lookups(lookup: &str) -> String {
    format!(
        "[{{{}}}].all(m, [event.text + '0'].all(k, lists.range(80000).all(i, {lookup})))",
        long_keys()
    )
}

const LOOKUPS: [&str; 3] = [
    "!(event.text in m)",
    "m[?event.text].orValue(0) == 0",
    "m[k] == 0",
];

/// Eight long keys built once, then a map literal of them built 10,000 times.
fn map_literals() -> String {
    let keys: Vec<String> = (0..8).map(|i| format!("event.text + '{i}'")).collect();
    let entries: Vec<String> = (0..8).map(|i| format!("ks[{i}]: {i}")).collect();
    format!(
        "[[{}]].all(ks, lists.range(10000).all(i, {{{}}}.size() == 8))",
        keys.join(", "),
        entries.join(", ")
    )
}

fn estimate(source: &str, model: CostModel) -> (Verdict, u64) {
    let report = check_filter(
        source,
        &Options {
            model,
            ..Options::default()
        },
    );
    (report.verdict, report.cost.expect("estimated").max)
}

fn event(text: &str, attributes: &serde_json::Value) -> Event {
    let json = json!({
        "id": "1", "source": "s", "type": "t", "action": "a", "subject": "x",
        "text": text, "attributes": attributes
    });
    Event::from_json(&json.to_string(), &EventBounds::DEFAULT).expect("in bounds")
}

fn run(source: &str, event: &Event, cost: Option<u64>) -> Result<Evaluation, EvalError> {
    let options = Options::default();
    let checked = compile(source, &Env::filter(), &options).expect("compiles");
    let program = Program::from_checked(&checked).expect("prepares");
    let limits = Limits {
        cost,
        deadline: Duration::from_secs(3600),
        clock: Arc::new(ManualClock::new()),
        model: options.model,
        ..Limits::default()
    };
    program.eval_event(event, &limits)
}

#[test]
fn long_key_lookups_are_charged_by_the_key() {
    let text = "a".repeat(16_384);
    let e = event(&text, &json!({}));
    for lookup in LOOKUPS {
        let source = lookups(lookup);
        let v3 = CostModel::FULL.with_version(3).expect("carried");
        assert_eq!(estimate(&source, v3).0, Verdict::Accepted, "{source}");
        let (verdict, max) = estimate(&source, CostModel::FULL);
        assert_eq!(verdict, Verdict::Refused, "{source}: {max}");
        // Every lookup pays eight probes of 1,638 units, so the meter stops it within a few
        // hundred lookups instead of running 80,000 of them.
        assert!(
            matches!(
                run(&source, &e, Some(table::DEFAULT_COST_LIMIT)),
                Err(EvalError::Stopped(Stop::CostLimit { .. }))
            ),
            "{source}"
        );
    }
    // One lookup, metered: one call and eight probes of ⌊16385 / 10⌋.
    let one = format!("{{{}}}[event.text + '7'] == 7", long_keys());
    let done = run(&one, &e, None).expect("runs");
    let (_, max) = estimate(&one, CostModel::FULL);
    assert!(done.cost >= table::key_lookup(8, 16_385), "{}", done.cost);
    assert!(done.cost <= max, "{} > {max}", done.cost);
}

#[test]
fn building_a_map_of_long_keys_is_charged_by_its_keys() {
    let source = map_literals();
    let v3 = CostModel::FULL.with_version(3).expect("carried");
    assert_eq!(estimate(&source, v3).0, Verdict::Accepted);
    assert_eq!(estimate(&source, CostModel::FULL).0, Verdict::Refused);
    assert_eq!(
        table::map_build(8, 8 * table::key_compare(16_385)),
        64 * 1638
    );
}

/// The estimate prices the key work the meter charges, on events whose keys are as long as the
/// bounds allow and share their prefixes.
#[test]
fn key_work_stays_within_the_estimate() {
    let text = "k".repeat(16_384);
    let long = |c: char| format!("{}{c}", "k".repeat(2000));
    let mut keyed = serde_json::Map::new();
    for c in ['a', 'b', 'c'] {
        keyed.insert(long(c), json!(1));
    }
    let many: serde_json::Map<String, serde_json::Value> =
        (0..1000).map(|i| (format!("{i:03}"), json!(0))).collect();
    let events = [
        event(&text, &json!({})),
        event(&text, &serde_json::Value::Object(keyed)),
        event(&text, &serde_json::Value::Object(many)),
        event("", &json!({"a": 1})),
    ];
    let filters = [
        "event.text in event.attributes",
        "event.attributes[?event.text].hasValue()",
        "event.attributes.exists(k, k in event.attributes)",
        "event.attributes.exists(k, event.attributes[k] == 1)",
        "{event.text: 1, event.text + 'x': 2}[event.text] == 1",
        "event.attributes.exists(k, k in {event.text: 1, k + 'z': 2})",
        "event.attributes.transformMap(k, v, v).size() > 0",
        "event.attributes.transformMapEntry(k, v, {k + 'x': v}).size() > 0",
        "[event.text].all(t, {t + 'a': 1, t + 'b': 2, t + 'c': 3}.size() == 3)",
        "event.attributes.?a.optMap(x, x).hasValue()",
    ];
    for source in filters {
        let (_, max) = estimate(source, CostModel::FULL);
        for e in &events {
            let cost = match run(source, e, None) {
                Ok(done) => done.cost,
                Err(error) => error.cost(),
            };
            assert!(cost <= max, "{source}: metered {cost} > estimate {max}");
        }
    }
}

/// Memory follows cost: for every kind of value an evaluation builds, the bytes counted against
/// the memory cap stay within `MAX_BYTES_PER_UNIT` a unit charged. Before version 4 an
/// optional (64 bytes for one unit) and a list a library function builds from an empty one
/// (64 bytes for one unit) did not.
#[test]
fn every_kind_of_value_counts_at_most_its_cost_in_bytes() {
    let e = event(&"t".repeat(1000), &json!({"a": [1, 2, 3], "m": {"k": "v"}}));
    let filters = [
        // strings and bytes
        "[event.text + event.text].size() == 1",
        "bytes(event.text).size() > 0",
        "'%s %s'.format([event.text, event.text]).size() > 0",
        "event.text.split('').size() > 0",
        // lists
        "lists.range(1000).map(i, [i]).size() > 0",
        "lists.range(1000).all(i, [].reverse().reverse().reverse().size() == 0)",
        "lists.range(1000).all(i, [].sort().slice(0, 0).distinct().size() == 0)",
        "lists.range(1000).all(i, [[]].flatten().size() == 0)",
        "lists.range(1000).filter(i, i % 2 == 0).size() > 0",
        // maps
        "lists.range(1000).all(i, {} != {'a': i})",
        "lists.range(1000).transformMap(i, v, v).size() > 0",
        // optionals
        "lists.range(1000).all(i, optional.of(optional.of(optional.of(i))).hasValue())",
        "lists.range(1000).all(i, event.attributes.?m.?k.hasValue())",
        "lists.range(1000).all(i, event.attributes.a.first().optMap(x, x).hasValue())",
        "lists.range(1000).all(i, event.attributes.m[?'k'].hasValue())",
        // timestamps, durations, types: no allocation of their own
        "lists.range(1000).all(i, timestamp(i) > timestamp(0) || duration('1s') > duration('0s') || type(i) == int)",
    ];
    for source in filters {
        let done = run(source, &e, None).unwrap_or_else(|err| panic!("{source}: {err}"));
        assert!(
            done.built <= MAX_BYTES_PER_UNIT * done.cost,
            "{source}: {} bytes for {} units",
            done.built,
            done.cost
        );
    }
}

/// The case: nested optionals in a long loop were accepted at about 600,000 units and
/// stopped on memory on every event. Now an accepted filter of that shape completes, and the
/// one that would reach the cap is refused.
#[test]
fn nested_optionals_are_refused_before_they_reach_the_memory_cap() {
    let nested = |levels: usize| {
        let mut inner = "i".to_owned();
        for _ in 0..levels {
            inner = format!("optional.of({inner})");
        }
        format!("lists.range(13000).all(i, {inner}.hasValue())")
    };
    let e = event("", &json!({}));
    let heavy = nested(45);
    let v3 = CostModel::FULL.with_version(3).expect("carried");
    assert_eq!(estimate(&heavy, v3).0, Verdict::Accepted);
    assert!(matches!(
        run(&heavy, &e, None),
        Err(EvalError::Stopped(Stop::Memory { .. }))
    ));
    assert_eq!(estimate(&heavy, CostModel::FULL).0, Verdict::Refused);
    let accepted = nested(20);
    let (verdict, max) = estimate(&accepted, CostModel::FULL);
    assert_eq!(verdict, Verdict::Accepted);
    let done = run(&accepted, &e, Some(max)).expect("completes");
    assert!(done.built <= MAX_BYTES_PER_UNIT * done.cost && done.built < MEMORY_LIMIT);
}

#[test]
fn the_bytes_per_unit_bound_keeps_the_default_limit_under_the_cap() {
    const { assert!(MAX_BYTES_PER_UNIT * table::DEFAULT_COST_LIMIT < MEMORY_LIMIT) };
    // Each kind's own ratio (docs/cost-model.md §1).
    let full = CostModel::FULL;
    let ratios = [
        (table::built_text(1), full.alloc(table::alloc_bytes(1))),
        (table::BUILT_PER_ELEMENT, full.alloc(table::alloc_list(1))),
        (table::BUILT_PER_ENTRY, full.alloc(table::alloc_map(1))),
        (table::BUILT_PER_CONTAINER, table::LIST_CREATE),
        (table::BUILT_PER_CONTAINER, table::MAP_CREATE),
        (table::BUILT_PER_CONTAINER, full.list_alloc()),
        (
            table::BUILT_PER_CONTAINER,
            table::CALL + full.optional_alloc(),
        ),
    ];
    for (bytes, units) in ratios {
        assert!(
            bytes <= MAX_BYTES_PER_UNIT * units,
            "{bytes} bytes for {units}"
        );
    }
}

/// A decimal exactly halfway between 0 and the smallest double (2⁻¹⁰⁷⁵, 751 significant digits)
/// with one more digit, which takes the parser through its slowest path.
fn halfway_decimal() -> String {
    // 2⁻¹⁰⁷⁵ = 5¹⁰⁷⁵ / 10¹⁰⁷⁵: the digits of 5¹⁰⁷⁵ with the point moved.
    let mut digits = vec![1u32];
    for _ in 0..1075 {
        let mut carry = 0;
        for d in &mut digits {
            let v = *d * 5 + carry;
            *d = v % 10;
            carry = v / 10;
        }
        while carry > 0 {
            digits.push(carry % 10);
            carry /= 10;
        }
    }
    let s: String = digits
        .iter()
        .rev()
        .map(|d| char::from(b'0' + *d as u8))
        .collect();
    // 5¹⁰⁷⁵ has 752 digits, so 2⁻¹⁰⁷⁵ = d.ddd… × 10^(752 − 1 − 1075).
    let exponent = s.len() as i64 - 1 - 1075;
    format!("{}.{}1e{exponent}", &s[..1], &s[1..])
}

/// Issue 33 class 1, from the black-box attack on version 7: `double()` of a decimal near a
/// halfway point between two doubles (or past their range) leaves the parser's fast path for
/// arithmetic on a long decimal, 10–700 µs a call, where version 7 charged a tenth of a unit a
/// byte; `lists.range(109816).exists(i, double('2.47032822920623272088284e-324') < 0.0)` was
/// accepted at 988,359 and stopped by the deadline on every run. Version 8 charges every
/// `double(s)` of a string a unit a byte and `PARSE_DOUBLE`, and the estimator prices it so.
#[test]
fn parsing_a_double_is_charged_for_its_arithmetic() {
    let attack = "lists.range(109816).exists(i, double('2.47032822920623272088284e-324') < 0.0)";
    assert_eq!(estimate(attack, CostModel::FULL).0, Verdict::Refused);
    let (old_verdict, _) = estimate(attack, CostModel::FULL.with_version(7).expect("carried"));
    assert_eq!(old_verdict, Verdict::Accepted);
    let halfway = halfway_decimal();
    let long = format!(
        "{}{}e-324",
        &halfway[..halfway.len() - 5],
        "0".repeat(15_000)
    );
    for (text, name) in [
        (halfway.clone(), "halfway"),
        ("6e-319".to_owned(), "subnormal"),
        ("1e400".to_owned(), "past the range"),
        (long, "16 KiB of digits"),
        ("1.5".to_owned(), "plain"),
    ] {
        let e = event(&text, &json!({}));
        let source = "lists.range(10).exists(i, double(event.text) < -1.0)";
        let done = run(source, &e, None).expect("runs");
        let per_call = done.cost / 10;
        assert!(
            per_call >= table::PARSE_DOUBLE + text.len() as u64,
            "{name}: {per_call} a call"
        );
        let (_, max) = estimate(source, CostModel::FULL);
        assert!(done.cost <= max, "{name}: metered {} > {max}", done.cost);
        // Version 7 charged it a traversal only.
        let old = run_with(
            source,
            &e,
            CostModel::FULL.with_version(7).expect("carried"),
        );
        assert!(
            old / 10 + table::PARSE_DOUBLE + text.len() as u64 <= per_call,
            "{name}: version 7 charged {old}"
        );
    }
}

/// Issue 33 class 1 again: `%f` and `%e` work the exact digits of a double out on big integers
/// (`%.100f` of the largest double about 30–65 µs), where version 7 charged only the text's
/// allocation; `lists.range(2248).exists(i, '%.100f'.format([event.attributes.x]) == 'x')` was
/// accepted at 984,639 and stopped by the deadline on a loaded machine. Version 8 charges each
/// such clause `FORMAT_FLOAT`, literal pattern or not.
#[test]
fn formatting_fixed_and_scientific_is_charged_for_its_digits() {
    let attack = "lists.range(2248).exists(i, '%.100f'.format([event.attributes.x]) == 'x')";
    assert_eq!(estimate(attack, CostModel::FULL).0, Verdict::Refused);
    let (old_verdict, _) = estimate(attack, CostModel::FULL.with_version(7).expect("carried"));
    assert_eq!(old_verdict, Verdict::Accepted);
    let attributes =
        json!({ "x": -1.797_693_134_862_315_7e308, "t": 2.225_073_858_507_201_4e-308 });
    for (source, clauses) in [
        ("'%.100f'.format([event.attributes.x]) == 'x'", 1),
        (
            "'%.100e %f %e'.format([event.attributes.t, event.attributes.x, 1]) == 'x'",
            3,
        ),
        (
            "event.text.format([event.attributes.x, event.attributes.t]) == 'x'",
            2,
        ),
    ] {
        let e = event("%f%.100e", &attributes);
        let done = run(source, &e, None).expect("runs");
        assert!(
            done.cost >= clauses * table::FORMAT_FLOAT,
            "{source}: {}",
            done.cost
        );
        let (_, max) = estimate(source, CostModel::FULL);
        assert!(done.cost <= max, "{source}: metered {} > {max}", done.cost);
    }
}

fn run_with(source: &str, event: &Event, model: CostModel) -> u64 {
    let options = Options {
        model,
        ..Options::default()
    };
    let checked = compile(source, &Env::filter(), &options).expect("compiles");
    let program = Program::from_checked(&checked).expect("prepares");
    let limits = Limits {
        cost: None,
        deadline: Duration::from_secs(3600),
        clock: Arc::new(ManualClock::new()),
        model,
        ..Limits::default()
    };
    program.eval_event(event, &limits).expect("runs").cost
}
