//! The estimates of filters that use the extension libraries, against the metered cost of the
//! heaviest event written by hand for each: never below it (sound), and for the filters people
//! write, within 2× of it (tight). The refused `replace` is confirmed by its event: the
//! metered evaluation passes the limit too.

use std::sync::Arc;
use std::time::Duration;

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::eval::{EvalError, Event, Limits, ManualClock, Program, Stop};
use ozcheck_analyzer::{EventBounds, Options, Verdict, check_filter, compile};
use serde_json::{Value, json};

fn event(text: &str, attributes: &Value) -> Event {
    let json = json!({
        "id": "1", "source": "s", "type": "t", "action": "a", "subject": "x",
        "text": text, "attributes": attributes
    });
    Event::from_value(&json, &EventBounds::DEFAULT).expect("within the default bounds")
}

/// The metered cost of `source` on `event` with the cost limit off (a manual clock, so the
/// deadline never fires), or the cost at which the memory cap stopped it.
fn metered(source: &str, event: &Event) -> u64 {
    let checked = compile(source, &Env::filter(), &Options::default()).expect("compiles");
    let program = Program::from_checked(&checked).expect("program");
    let limits = Limits {
        cost: None,
        deadline: Duration::from_secs(3600),
        clock: Arc::new(ManualClock::new()),
        ..Limits::default()
    };
    match program.eval_event(event, &limits) {
        Ok(e) => e.cost,
        Err(e) => e.cost(),
    }
}

fn estimate(source: &str) -> (Verdict, u64) {
    let report = check_filter(source, &Options::default());
    (report.verdict, report.cost.expect("estimated").max)
}

/// Accepted, at least the metered cost, at most `factor` times it.
fn tight(source: &str, event: &Event, factor: u64) {
    let (verdict, max) = estimate(source);
    let cost = metered(source, event);
    assert_eq!(verdict, Verdict::Accepted, "{source}: {max}");
    assert!(cost <= max, "{source}: metered {cost} > estimate {max}");
    assert!(
        max <= factor * cost,
        "{source}: estimate {max} > {factor} × {cost}"
    );
}

#[test]
fn lower_ascii_contains_is_accepted_within_twice_its_worst_event() {
    let text = "x".repeat(16 * 1024);
    tight(
        "event.text.lowerAscii().contains('lgtm')",
        &event(&text, &json!({})),
        2,
    );
}

#[test]
fn replace_with_the_text_is_refused_and_its_event_confirms_it() {
    let source = "event.text.replace('a', event.text).size() > 0";
    let (verdict, max) = estimate(source);
    assert_eq!(verdict, Verdict::Refused);
    // Every byte is an `a`: 16,384 copies of the 16,384-byte text.
    let text = "a".repeat(16 * 1024);
    let checked = compile(source, &Env::filter(), &Options::default()).expect("compiles");
    let program = Program::from_checked(&checked).expect("program");
    match program.eval_event(&event(&text, &json!({})), &Limits::default()) {
        Err(EvalError::Stopped(Stop::CostLimit { cost })) => {
            assert!(
                cost > ozcheck_analyzer::cost::DEFAULT_COST_LIMIT && cost <= max,
                "{cost}"
            );
        }
        other => panic!("{other:?}"),
    }
}

#[test]
fn the_witness_of_the_refused_replace_replays_past_the_limit() {
    let source = "event.text.replace('a', event.text).size() > 0";
    let (report, witness) =
        ozcheck_analyzer::check_with_witness(source, &Env::filter(), &Options::default());
    assert_eq!(report.verdict, Verdict::Refused);
    let witness = witness.expect("a refused filter has a witness");
    let limit = ozcheck_analyzer::cost::DEFAULT_COST_LIMIT;
    assert!(witness.cost > limit, "witness cost {}", witness.cost);
    // The event it wrote, read back as `ozcheck eval --event` reads it, is stopped by the meter.
    let event = Event::from_json(&witness.event, &EventBounds::DEFAULT).expect("within bounds");
    let checked = compile(source, &Env::filter(), &Options::default()).expect("compiles");
    let program = Program::from_checked(&checked).expect("program");
    match program.eval_event(&event, &Limits::default()) {
        Err(EvalError::Stopped(Stop::CostLimit { cost })) => assert!(cost > limit, "{cost}"),
        other => panic!("{other:?}"),
    }
}

#[test]
fn realistic_extension_filters_are_sound_and_tight() {
    let words = "x".repeat(16 * 1024);
    let labels: Vec<String> = (0..1000).map(|i| format!("l{i}")).collect();
    let title = "w ".repeat(4090);
    // Title words: 4,090 one-letter parts.
    tight(
        "event.attributes.title.split(' ').exists(w, w == 'urgent')",
        &event("", &json!({ "title": title })),
        2,
    );
    tight(
        "sets.intersects(event.attributes.labels, ['urgent', 'p0'])",
        &event("", &json!({ "labels": labels })),
        3,
    );
    tight(
        "event.text.upperAscii().startsWith('LGTM') || event.text.trim() == 'ok'",
        &event(&words, &json!({})),
        2,
    );
    tight(
        "event.attributes.labels.join(',').contains('urgent')",
        &event("", &json!({ "labels": labels })),
        3,
    );
    // As many entries as fit, each taking both sides of the `&&`.
    let pairs: serde_json::Map<String, Value> =
        (0..850).map(|i| (format!("x{i}"), json!(0))).collect();
    tight(
        "event.attributes.exists(k, v, k.startsWith('x') && v == 'y')",
        &event("", &Value::Object(pairs)),
        3,
    );
    // The densest list: one-byte elements.
    let zeros = vec![0; 4085];
    tight(
        "event.attributes.?labels.orValue([]).exists(l, l == 'urgent')",
        &event("", &json!({ "labels": zeros })),
        2,
    );
}

/// The `%s` text of a double, and its `%.100f` text, over every decimal exponent and the
/// mantissas with the most digits: never longer than the bounds the estimate prices them at.
#[test]
fn formatted_doubles_stay_within_their_bounds() {
    use ozcheck_analyzer::cost::table::{FORMATTED_DOUBLE_MAX, FORMATTED_SCALAR_MAX};
    let env = Env::filter().expecting(ozcheck_analyzer::check::Expected::Any);
    let sized = |source: &str, x: f64| -> u64 {
        let checked = compile(source, &env, &Options::default()).expect("compiles");
        let program = Program::from_checked(&checked).expect("program");
        let e = event("", &json!({ "x": x }));
        match program.eval_event(&e, &Limits::default()) {
            Ok(found) => match found.value {
                ozcheck_analyzer::eval::Value::Int(n) => n as u64,
                other => panic!("{source}: {other:?}"),
            },
            Err(e) => panic!("{source} on {x:e}: {e}"),
        }
    };
    let (mut longest_s, mut longest_f) = (0, 0);
    for exponent in -324..=308 {
        for mantissa in [
            "1",
            "5",
            "9.999999999999999",
            "1.2345678901234567",
            "2.2250738585072014",
        ] {
            let Ok(x) = format!("-{mantissa}e{exponent}").parse::<f64>() else {
                continue;
            };
            if x == 0.0 || !x.is_finite() {
                continue;
            }
            let s = sized("'%s'.format([event.attributes.x]).size()", x);
            let nested = sized("'%s'.format([[event.attributes.x]]).size()", x) - 2;
            let f = sized("'%.100f'.format([event.attributes.x]).size()", x);
            assert!(s <= FORMATTED_DOUBLE_MAX && nested == s, "{x:e}: {s}");
            assert!(f <= FORMATTED_SCALAR_MAX, "{x:e}: {f}");
            longest_s = longest_s.max(s);
            longest_f = longest_f.max(f);
        }
    }
    // The bounds are reached, or nearly: they are not loose.
    assert!(longest_s + 20 >= FORMATTED_DOUBLE_MAX, "{longest_s}");
    assert_eq!(longest_f, FORMATTED_SCALAR_MAX);
}

/// A list of doubles in their shortest exponent form formats to 60 times its JSON bytes; the
/// estimate of `format` over it is still above the metered cost (found by an independent
/// attack: `'%s%s%s'.format([l, l, l])` was metered at 1,399,898 against an estimate of 864,908).
#[test]
fn format_of_exponent_doubles_is_within_its_estimate() {
    let source =
        "'%s%s%s'.format([event.attributes.l, event.attributes.l, event.attributes.l]).size() > 0";
    // As many `1e308` as fit in 8 KiB of attributes: `{"l":[1e308,…]}`.
    let n = (8 * 1024 - 8) / 6;
    let e = event("", &json!({ "l": vec![1e308; n] }));
    let (_, max) = estimate(source);
    let cost = metered(source, &e);
    assert!(cost <= max, "metered {cost} > estimate {max}");
}
