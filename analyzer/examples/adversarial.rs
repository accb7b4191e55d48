//! The worst evaluations we know how to build, one per class of hard limit (docs/decisions/0006),
//! timed by the real clock: each filter of at most 1,024 bytes runs over an event at the default
//! bounds (16 KiB text, 8 KiB attributes), with the cost limit on and then off (the 250 ms
//! deadline and the memory cap alone), in runtime-only mode (no static check first, as
//! `ozcheck eval --no-static-check`), `RUNS` times each. Prints how each ended, the median and the
//! longest time, and the longest of all: the figure BENCHMARKS.md reports.
//!
//! `cargo run --release -p ozcheck-analyzer --example adversarial [RUNS]`

use std::sync::Arc;
use std::time::{Duration, Instant};

use ozcheck_analyzer::EventBounds;
use ozcheck_analyzer::cost::table::DEFAULT_COST_LIMIT;
use ozcheck_analyzer::eval::{EvalError, Event, Limits, Program, Stop, SystemClock};
use ozcheck_analyzer::syntax::{self, ParseOptions};
use serde_json::{Value as Json, json};

/// The deadline on the edge.
const DEADLINE: Duration = Duration::from_millis(250);

/// An event at the default bounds: `text` (up to 16 KiB), `subject` (a header field), and
/// attributes (up to 8 KiB compact).
fn event(text: &str, subject: &str, attributes: Json) -> Json {
    let mut event = json!({"id": "1", "source": "s", "type": "t", "action": "opened",
                           "subject": subject, "text": text});
    event["attributes"] = attributes;
    event
}

/// Copies of `unit`, at most `bytes` long.
fn fill(unit: &str, bytes: usize) -> String {
    unit.repeat(bytes / unit.len())
}

/// A list of `count` zeros.
fn zeros(count: usize) -> Json {
    Json::Array(vec![json!(0); count])
}

fn cases() -> Vec<(&'static str, String, Json)> {
    let text = fill("a", 16 * 1024);
    // Case-insensitive classes whose compilation is the expensive part, up to the header bound.
    let folded = fill("(?i)[a-zé]", 240);
    let patterns: Vec<Json> = (0..30)
        .map(|i| {
            json!(format!(
                "(?i)[a-z{}][^b]{{1,100}}\\pL",
                char::from(b'c' + i % 20)
            ))
        })
        .collect();
    let counted = "(?:a{1,120}){1,120}\\d";
    vec![
        (
            "event pattern: case-folded classes compiled per call",
            "event.text.matches(event.subject)".to_owned(),
            event(&text, &folded, json!({})),
        ),
        (
            "event patterns compiled in a loop",
            "event.attributes.p.exists(p, event.text.matches(p))".to_owned(),
            event(&text, "", json!({ "p": patterns })),
        ),
        (
            "counted repetitions over the 16 KiB text",
            "event.text.matches(event.subject)".to_owned(),
            event(&text, counted, json!({})),
        ),
        (
            "counted repetitions over a built 256 KiB text",
            format!(
                "({}).matches(event.subject)",
                vec!["event.text"; 16].join(" + ")
            ),
            event(&text, counted, json!({})),
        ),
        (
            "deep equality of two built lists of 4,000 shared 4,000-element lists",
            "event.attributes.a.map(x, event.attributes.a) + [1] == \
             event.attributes.a.map(x, event.attributes.a) + [2]"
                .to_owned(),
            event("", "", json!({ "a": zeros(4000) })),
        ),
        (
            "deep equality through three levels of sharing (64 billion leaves)",
            "[event.attributes.a.map(x, event.attributes.a)].map(l, event.attributes.a.map(x, l) \
             + [1] == event.attributes.a.map(x, l) + [2])[0]"
                .to_owned(),
            event("", "", json!({ "a": zeros(4000) })),
        ),
        (
            "`in` over a built list of 4,000 shared lists",
            "[1] in event.attributes.a.map(x, event.attributes.a)".to_owned(),
            event("", "", json!({ "a": zeros(4000) })),
        ),
        (
            "doubling the 16 KiB text in a map chain",
            format!("[event.text]{}.size() == 1", ".map(x, x + x)".repeat(12)),
            event(&text, "", json!({})),
        ),
        (
            "nested exists over two 4,000-element lists",
            "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y + 1))".to_owned(),
            event("", "", json!({ "a": zeros(2000), "b": zeros(2000) })),
        ),
        (
            "format of a built list of lists",
            "'%s'.format([event.attributes.a.map(x, event.attributes.a)]).size() > 0".to_owned(),
            event("", "", json!({ "a": zeros(4000) })),
        ),
        (
            "split of a built text between its code points",
            format!(
                "({}).split('').size() > 0",
                vec!["event.text"; 16].join(" + ")
            ),
            event(&text, "", json!({})),
        ),
        (
            "sort of 50,000 references to two 2 MiB strings (second attack)",
            "[event.text + event.text].all(a1, [a1 + a1].all(a2, [a2 + a2].all(a3, \
             [a3 + a3].all(a4, [a4 + a4].all(a5, [a5 + a5].all(a6, [a6 + a6].all(a7, \
             [a7 + 'a'].all(A, [a7 + 'b'].all(B, lists.range(50000).map(i, i % 2 == 0 ? B : A)\
             .sort().size() > 0)))))))))"
                .to_owned(),
            event(&text, "", json!({})),
        ),
        (
            "a 16 KiB needle in an empty string, 100,000 times (second attack)",
            "lists.range(100000).all(i, !''.contains(event.text))".to_owned(),
            event(&text, "", json!({})),
        ),
        (
            "a map built from 100,000 keys in descending order (second attack)",
            "lists.range(100000).transformMapEntry(i, v, {100000 - v: v}).size() > 0".to_owned(),
            event("", "", json!({})),
        ),
        (
            "transformMap of 400,000 entries (second attack)",
            "lists.range(400000).transformMap(i, v, v).size() > 0".to_owned(),
            event("", "", json!({})),
        ),
        (
            "split of a built 1 MiB text between its code points (second attack)",
            "[event.text + event.text].all(a, [a + a + a + a].all(b, \
             [b + b + b + b].all(c, c.split('').size() > 0)))"
                .to_owned(),
            event(&text, "", json!({})),
        ),
        (
            "optional values three deep, 600,000 times (second attack)",
            "lists.range(600000).map(i, optional.of(optional.of(optional.of(i)))).size() > 0"
                .to_owned(),
            event("", "", json!({})),
        ),
        (
            "replace that doubles every byte, in a loop",
            "event.attributes.a.map(x, event.text.replace('a', 'aa')).size() > 0".to_owned(),
            event(&text, "", json!({ "a": zeros(4000) })),
        ),
    ]
}

fn end(result: &Result<ozcheck_analyzer::eval::Evaluation, EvalError>) -> &'static str {
    match result {
        Ok(_) => "value",
        Err(EvalError::Runtime { .. }) => "error",
        Err(EvalError::Stopped(Stop::CostLimit { .. })) => "cost-limit",
        Err(EvalError::Stopped(Stop::Deadline { .. })) => "deadline",
        Err(EvalError::Stopped(Stop::Memory { .. })) => "memory",
    }
}

fn main() {
    let runs: usize = std::env::args()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(10);
    let clock = Arc::new(SystemClock::new());
    let mut worst = (Duration::ZERO, String::new());
    println!("| case | cost limit | end | median | longest |");
    println!("|---|---|---|--:|--:|");
    for (name, source, json) in cases() {
        assert!(source.len() <= 1024, "{name}: {} bytes", source.len());
        let event = Event::from_value(&json, &EventBounds::DEFAULT)
            .unwrap_or_else(|e| panic!("{name}: event out of bounds: {e}"));
        let program = match syntax::parse(&source, &ParseOptions::default()).and_then(Program::new)
        {
            Ok(program) => program,
            Err(e) => {
                println!("| {name} | — | refused when compiled: {e:?} | | |");
                continue;
            }
        };
        for cost in [Some(DEFAULT_COST_LIMIT), None] {
            let limits = Limits::default()
                .with_cost(cost)
                .with_deadline(DEADLINE)
                .with_clock(clock.clone());
            let mut times = Vec::with_capacity(runs);
            let mut ends = Vec::new();
            for _ in 0..runs {
                let started = Instant::now();
                let result = program.eval_event(&event, &limits);
                times.push(started.elapsed());
                let e = end(&result);
                if !ends.contains(&e) {
                    ends.push(e);
                }
            }
            times.sort();
            let (median, longest) = (times[times.len() / 2], times[times.len() - 1]);
            let limit = if cost.is_some() { "on" } else { "off" };
            println!(
                "| {name} | {limit} | {} | {:.2} ms | {:.2} ms |",
                ends.join(", "),
                median.as_secs_f64() * 1e3,
                longest.as_secs_f64() * 1e3
            );
            if longest > worst.0 {
                worst = (longest, format!("{name}, cost limit {limit}"));
            }
        }
    }
    println!(
        "\nlongest evaluation: {:.2} ms ({})",
        worst.0.as_secs_f64() * 1e3,
        worst.1
    );
}
