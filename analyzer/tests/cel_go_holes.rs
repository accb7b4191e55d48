//! The holes cel-go's extension libraries had behind a cost limit, each replayed against
//! ozcheck: the static estimate refuses the filter, and the metered evaluation of the worst
//! event stops it — with `cost-limit` (or `memory` when the cost limit is off) and the figures
//! of the cost table, before the work or the allocation happens, under the default 250 ms
//! deadline on the system clock (a `deadline` stop would fail these tests).
//!
//! - cel-go #1307: the strings extension charged a flat cost of 1 per call, whatever the size;
//! - cel-go #1288: `indexOf` on long strings burned 24 s of CPU under `CostLimit(100)`;
//! - cel-go #1297, #1304: `join` allocated 587 MB under `CostLimit(100)`;
//! - cel-go #1281: `lists.range(n)` allocated its list before the limit fired;
//! - cel-go #1291: list concatenation in a comprehension was O(N²) behind the limit.

use ozcheck_analyzer::cost::table;
use ozcheck_analyzer::eval::{EvalError, Event, Limits, Program, Stop};
use ozcheck_analyzer::{EventBounds, Options, Verdict, check_filter, compile};
use serde_json::json;

/// cel-go's limit in the reports.
const CEL_GO_LIMIT: u64 = 100;

fn program(source: &str) -> Program {
    let checked = compile(
        source,
        &ozcheck_analyzer::check::Env::filter(),
        &Options::default(),
    )
    .unwrap_or_else(|d| panic!("{source}: {d:?}"));
    Program::from_checked(&checked).expect("program")
}

fn max_event(text: &str, attributes: &serde_json::Value) -> Event {
    let json = json!({
        "id": "1", "source": "s", "type": "t", "action": "a", "subject": "x",
        "text": text, "attributes": attributes
    });
    Event::from_value(&json, &EventBounds::DEFAULT).expect("within the default bounds")
}

fn run(source: &str, event: &Event, cost: Option<u64>) -> Result<u64, Stop> {
    match program(source).eval_event(event, &Limits::default().with_cost(cost)) {
        Ok(evaluation) => Ok(evaluation.cost),
        Err(EvalError::Stopped(stop)) => Err(stop),
        Err(other) => panic!("{source}: {other}"),
    }
}

fn refused_at(source: &str, limit: u64) {
    let report = check_filter(
        source,
        &Options {
            limit,
            ..Options::default()
        },
    );
    assert_eq!(report.verdict, Verdict::Refused, "{source}: {report:?}");
    assert_eq!(report.diagnostics[0].code, "cost-over-limit", "{source}");
}

/// #1307: every strings function costs at least one traversal of its receiver, so on the
/// largest text none is flat, each is refused under cel-go's limit and stopped by it.
#[test]
fn strings_functions_are_charged_by_size_not_a_flat_unit() {
    let text = "ab ".repeat(5461);
    let event = max_event(&text, &json!({}));
    let traversal = table::traversal(text.len() as u64);
    for call in [
        "lowerAscii()",
        "upperAscii()",
        "trim()",
        "reverse()",
        "replace('a', 'b')",
        "split(' ')",
        "substring(1)",
        "charAt(16000)",
        "indexOf('ba ')",
        "lastIndexOf('zz')",
    ] {
        let source = format!("event.text.{call} != dyn(0)");
        let cost = run(&source, &event, None).expect("completes without a limit");
        assert!(
            cost >= traversal,
            "{call}: {cost} < one traversal {traversal}"
        );
        refused_at(&source, CEL_GO_LIMIT);
        let stop = run(&source, &event, Some(CEL_GO_LIMIT)).unwrap_err();
        assert!(
            matches!(stop, Stop::CostLimit { cost } if cost > CEL_GO_LIMIT),
            "{call}: {stop:?}"
        );
    }
}

/// #1288: the search of `indexOf` is charged before it runs — the product of the two
/// traversals plus the code-point walk — so under cel-go's limit it never starts.
#[test]
fn index_of_pays_for_its_search_before_searching() {
    let text = "a".repeat(16_000);
    let needle = format!("{}b", "a".repeat(4_000));
    let event = max_event(&text, &json!({"needle": needle}));
    let source = "event.text.indexOf(event.attributes.needle) >= 0";
    refused_at(source, CEL_GO_LIMIT);
    let search = table::index_of(text.len() as u64, needle.len() as u64);
    // Two selections of `event.text` and three of the needle come first.
    match run(source, &event, Some(CEL_GO_LIMIT)) {
        Err(Stop::CostLimit { cost }) => assert!(cost >= search, "{cost} < {search}"),
        other => panic!("{other:?}"),
    }
    // Without the limit the whole search is paid, and it is what the table says.
    let cost = run(source, &event, None).expect("completes");
    assert!(cost >= search && cost <= search + 10, "{cost} vs {search}");
}

/// #1297, #1304: `join` counts the bytes of its result before building it. Here the result
/// would be 2,000 parts around 1,999 copies of a 16,000-byte separator, 32 MB: the cost limit
/// stops it first, and with the cost limit off a second join runs into the memory cap, not the
/// machine's memory.
#[test]
fn join_is_charged_its_result_before_allocating_it() {
    let parts: Vec<&str> = vec!["x"; 2_000];
    let separator = "s".repeat(16_000);
    let event = max_event(&separator, &json!({ "parts": parts }));
    let source = "event.attributes.parts.join(event.text).size() > 0";
    refused_at(source, CEL_GO_LIMIT);
    refused_at(source, table::DEFAULT_COST_LIMIT);
    let result = 2_000 + 1_999 * 16_000u64;
    // Under cel-go's limit the read of the 2,000 parts (one unit each) already passes it.
    match run(source, &event, Some(CEL_GO_LIMIT)) {
        Err(Stop::CostLimit { cost }) => assert!(cost > CEL_GO_LIMIT && cost < 2_100, "{cost}"),
        other => panic!("{other:?}"),
    }
    // Under the default limit the result's bytes are what stops it.
    match run(source, &event, Some(table::DEFAULT_COST_LIMIT)) {
        Err(Stop::CostLimit { cost }) => {
            assert!(cost >= table::alloc_bytes(result), "{cost} < {result}");
        }
        other => panic!("{other:?}"),
    }
    // With the cost limit off, joining 2,000 copies of the text with it would build 64 MB:
    // the memory cap refuses it before the first byte is copied.
    let doubled = "event.attributes.parts.map(p, event.text).join(event.text).size() > 0";
    let built = 2_000 * 16_000 + 1_999 * 16_000u64;
    match run(doubled, &event, None) {
        Err(Stop::Memory { bytes, .. }) => {
            assert!(
                bytes > table::MEMORY_LIMIT && bytes <= table::built_text(built) + 2_000 * 64,
                "{bytes}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// #1281: `lists.range(n)` pays for its `n` elements before one is allocated; an `n` the
/// estimator cannot see (computed from the event) makes the estimate unbounded.
#[test]
fn range_is_charged_before_it_allocates() {
    let event = max_event("", &json!({"n": 100_000_000}));
    refused_at(
        "lists.range(100000000).size() > 0",
        table::DEFAULT_COST_LIMIT,
    );
    refused_at(
        "lists.range(int(event.attributes.n)).size() > 0",
        u64::MAX - 1,
    );
    let source = "lists.range(int(event.attributes.n)).size() > 0";
    let fixed = table::CALL + table::LIST_CREATE;
    match run(source, &event, Some(table::DEFAULT_COST_LIMIT)) {
        Err(Stop::CostLimit { cost }) => {
            assert!(cost >= fixed + table::alloc_list(100_000_000), "{cost}");
        }
        other => panic!("{other:?}"),
    }
    match run(source, &event, None) {
        Err(Stop::Memory { bytes, .. }) => {
            assert_eq!(bytes, 100_000_000 * table::BUILT_PER_ELEMENT);
        }
        other => panic!("{other:?}"),
    }
    // A small literal range is exact: the call, the list, its elements.
    let accepted = check_filter("lists.range(3).size() == 3", &Options::default());
    assert_eq!(accepted.verdict, Verdict::Accepted);
}

/// #1291: the accumulators of `map`, `filter` and `transformList` grow in place, one charged
/// append per element, so the cost is linear in the list: doubling the list doubles the
/// per-element part exactly.
#[test]
fn comprehension_accumulators_are_linear() {
    let cost_of = |n: usize| {
        let items: Vec<u64> = (0..n as u64).collect();
        let event = max_event("", &json!({ "items": items }));
        let mut costs = Vec::new();
        for source in [
            "event.attributes.items.map(x, x).size() > 0",
            "event.attributes.items.filter(x, true).size() > 0",
            "event.attributes.items.transformList(i, x, x).size() > 0",
        ] {
            costs.push(run(source, &event, None).expect("completes"));
        }
        costs
    };
    let (one, two, three) = (cost_of(500), cost_of(1_000), cost_of(1_500));
    for i in 0..one.len() {
        assert_eq!(
            three[i] - two[i],
            two[i] - one[i],
            "{} then {} then {}: not linear",
            one[i],
            two[i],
            three[i]
        );
        assert!(two[i] > one[i]);
    }
    // The same loop stopped by cel-go's limit within its first elements.
    let items: Vec<u64> = (0..1_500).collect();
    let event = max_event("", &json!({ "items": items }));
    let stop = run(
        "event.attributes.items.map(x, x).size() > 0",
        &event,
        Some(CEL_GO_LIMIT),
    )
    .unwrap_err();
    assert!(matches!(stop, Stop::CostLimit { cost } if cost > CEL_GO_LIMIT));
}
