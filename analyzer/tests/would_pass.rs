//! What would pass a filter refused by cost, through the public entry points: every bound the
//! report suggests is checked again, accepted at the suggested value and refused one byte
//! above it; the bounds it says cannot help are checked at their least value; the estimate is
//! monotone in each bound, which is what makes the suggested value the smallest change.

use ozcheck_analyzer::bounds::Bound;
use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::cost::Remedy;
use ozcheck_analyzer::{Options, Report, Verdict, check_expression, check_filter, cost_summary};

const NESTED: &str = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))";
const LABELS_IN_TEXT: &str = "event.attributes.labels.exists(l, event.text.contains(l))";
const LABELS_IN_SUBJECT: &str = "event.attributes.labels.exists(l, event.subject.contains(l))";
/// Costs the same whatever the event: two loops over built lists.
const NO_EVENT: &str = "lists.range(1500).exists(i, lists.range(1500).exists(j, i == j + 1))";
/// Depends on the text, but its constant part alone is over the limit.
const HEAVY_CONSTANT: &str = "event.text.contains('x') || \
    lists.range(1500).exists(i, lists.range(1500).exists(j, i == j + 1))";

fn with_limit(limit: u64) -> Options {
    Options {
        limit,
        ..Options::default()
    }
}

fn report(source: &str, options: &Options) -> Report {
    check_expression(source, &Env::filter(), options)
}

fn remedy(source: &str, options: &Options) -> Remedy {
    let report = report(source, options);
    assert_eq!(report.verdict, Verdict::Refused, "{source}");
    report
        .would_pass
        .unwrap_or_else(|| panic!("{source}: no remedy"))
}

/// Checks every suggestion of `source` under `options` by estimating again: accepted at the
/// suggested value with the reported cost, refused one byte above it. Returns the bounds
/// suggested.
fn assert_suggestions_hold(source: &str, options: &Options) -> Vec<Bound> {
    let remedy = remedy(source, options);
    for change in &remedy.changes {
        assert_eq!(change.current, options.bounds.get(change.bound));
        assert!(change.at_most < change.current, "{source}: {change:?}");
        let at = |value: u64| Options {
            bounds: options.bounds.with(change.bound, value),
            ..options.clone()
        };
        let passing = report(source, &at(change.at_most));
        assert_eq!(passing.verdict, Verdict::Accepted, "{source}: {change:?}");
        assert_eq!(passing.cost.map(|c| c.max), Some(change.cost));
        assert!(change.cost <= options.limit);
        assert_eq!(passing.would_pass, None);
        let over = report(source, &at(change.at_most + 1));
        assert_eq!(over.verdict, Verdict::Refused, "{source}: {change:?} + 1");
    }
    for floor in &remedy.floors {
        let at_least = Options {
            bounds: options.bounds.with(floor.bound, floor.least),
            ..options.clone()
        };
        let cost = report(source, &at_least).cost.expect("estimated").max;
        assert_eq!(cost, floor.cost, "{source}: {floor:?}");
        assert!(cost > options.limit, "{source}: {floor:?}");
    }
    let mut all: Vec<Bound> = remedy.changes.iter().map(|c| c.bound).collect();
    all.extend(remedy.floors.iter().map(|f| f.bound));
    all.sort_by_key(|b| Bound::ALL.iter().position(|x| x == b));
    assert_eq!(all, Bound::ALL, "{source}: every bound is answered once");
    remedy.changes.iter().map(|c| c.bound).collect()
}

#[test]
fn nested_loops_over_the_attributes_pass_with_smaller_attributes() {
    let suggested = assert_suggestions_hold(NESTED, &Options::default());
    assert_eq!(suggested, [Bound::Attributes]);
    let remedy = remedy(NESTED, &Options::default());
    // The text and the headers take no part in the cost: at their least it is unchanged.
    for floor in &remedy.floors {
        assert_eq!(floor.cost, remedy.cost, "{floor:?}");
    }
}

#[test]
fn either_the_text_or_the_attributes_may_be_lowered() {
    let suggested = assert_suggestions_hold(LABELS_IN_TEXT, &Options::default());
    assert_eq!(suggested.len(), 2, "{suggested:?}");
    assert!(suggested.contains(&Bound::Text) && suggested.contains(&Bound::Attributes));
    // The smallest change comes first: the share of the current bound kept is largest.
    let remedy = remedy(LABELS_IN_TEXT, &Options::default());
    let share = |i: usize| {
        let c = &remedy.changes[i];
        c.at_most as f64 / c.current as f64
    };
    assert!(share(0) >= share(1));
}

#[test]
fn header_fields_are_a_bound_too() {
    let options = with_limit(50_000);
    let suggested = assert_suggestions_hold(LABELS_IN_SUBJECT, &options);
    assert!(suggested.contains(&Bound::HeaderField), "{suggested:?}");
    assert!(!suggested.contains(&Bound::Text), "{suggested:?}");
}

#[test]
fn a_cost_that_no_bound_changes_has_no_suggestion() {
    let remedy = remedy(NO_EVENT, &Options::default());
    assert!(remedy.changes.is_empty(), "{remedy:?}");
    assert_suggestions_hold(NO_EVENT, &Options::default());
    assert!(remedy.floors.iter().all(|f| f.cost == remedy.cost));
    let text = remedy.describe();
    assert!(text.contains("does not depend"), "{text}");
}

#[test]
fn a_bound_at_its_least_that_still_does_not_fit_is_named() {
    let remedy = remedy(HEAVY_CONSTANT, &Options::default());
    assert!(remedy.changes.is_empty(), "{remedy:?}");
    assert_suggestions_hold(HEAVY_CONSTANT, &Options::default());
    let text = remedy
        .floors
        .iter()
        .find(|f| f.bound == Bound::Text)
        .expect("text");
    assert!(text.cost < remedy.cost && text.least == 0, "{text:?}");
    let words = remedy.describe();
    assert!(
        words.contains("no single bound") && words.contains("event.text at 0 bytes"),
        "{words}"
    );
}

#[test]
fn the_refusal_says_what_would_pass() {
    let report = check_filter(NESTED, &Options::default());
    let remedy = report.would_pass.as_ref().expect("a remedy");
    let help = report.diagnostics[0].help.as_deref().unwrap_or_default();
    assert!(help.contains(&remedy.describe()), "{help}");
    let change = remedy.changes[0];
    let words = remedy.describe();
    assert!(
        words.starts_with("it would pass: with event.attributes at most ")
            && words.contains("(instead of 8,192) it costs up to 998,846"),
        "{words}"
    );
    assert_eq!((change.at_most, change.cost), (1339, 998_846));
    // The dominating sub-expression is still the one labelled.
    let span = report.diagnostics[0].span;
    assert_eq!(&NESTED[span.start as usize..span.end as usize], "x == y");
}

#[test]
fn accepted_filters_need_no_remedy() {
    let report = check_filter("event.text.contains('LGTM')", &Options::default());
    assert_eq!(report.verdict, Verdict::Accepted);
    assert_eq!(report.would_pass, None);
    let summary = cost_summary(
        "event.text.contains('LGTM')",
        &Env::filter(),
        &Options::default(),
    )
    .expect("compiles");
    assert_eq!(summary.would_pass, None);
}

#[test]
fn the_hover_summary_carries_the_remedy() {
    let summary = cost_summary(NESTED, &Env::filter(), &Options::default()).expect("compiles");
    let report = check_filter(NESTED, &Options::default());
    assert_eq!(summary.would_pass, report.would_pass);
    assert!(summary.would_pass.is_some());
}

#[test]
fn bounds_already_at_their_least_are_reported_as_such() {
    let mut options = with_limit(1);
    options.bounds.text = 0;
    let remedy = remedy(LABELS_IN_TEXT, &options);
    let text = remedy
        .floors
        .iter()
        .find(|f| f.bound == Bound::Text)
        .expect("text");
    assert_eq!((text.least, text.cost), (0, remedy.cost));
    assert_suggestions_hold(LABELS_IN_TEXT, &options);
}

/// The property the search rests on (docs/cost-model.md §5.1): with the other bounds fixed, the
/// estimate never decreases when one bound grows. Checked at 65 evenly spaced values up to each
/// default bound and at its 41 least values, for filters of every shape the model sums over.
#[test]
fn the_estimate_is_monotone_in_every_bound() {
    let filters = [
        NESTED,
        LABELS_IN_TEXT,
        LABELS_IN_SUBJECT,
        HEAVY_CONSTANT,
        "event.attributes.exists(k, event.attributes[k].contains('x'))",
        "event.attributes.a.map(x, x + x).filter(y, y.size() > 3).size() > 0",
        "event.attributes.title.contains(event.attributes.keyword)",
        "event.attributes.reviewers.exists(r, r in event.attributes.owners)",
        "event.text.matches('^fix(\\\\(.*\\\\))?: ') && event.attributes.tags.sort().size() > 2",
        "event.attributes.m.exists(k, event.attributes.m[k] == event.action)",
    ];
    for source in filters {
        for bound in Bound::ALL {
            let top = Options::default().bounds.get(bound);
            let mut values: Vec<u64> = (0..=64).map(|i| top * i / 64).collect();
            values.extend((0..=40).map(|i| bound.least() + i));
            values.sort_unstable();
            values.dedup();
            let mut last = 0;
            for value in values {
                let mut options = Options::default();
                options.bounds = options.bounds.with(bound, value);
                let cost = report(source, &options).cost.expect("estimated").max;
                assert!(
                    cost >= last,
                    "{source}: {bound:?} = {value} costs {cost} < {last}"
                );
                last = cost;
            }
        }
    }
}
