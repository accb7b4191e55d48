//! How tight the estimate is, measured by witnesses: for every filter in `corpus/` (the
//! benchmark expressions, the plugins the lint is tested on, the conformance scenarios) and in
//! the lint rules' examples, the estimate's max, the metered cost on the filter's witness, and
//! their ratio. The table in docs/cost-model.md §9 is what this test generates; it fails when
//! the committed table is stale, when the accepted filters' ratios miss the goal (median ≤ 1.25,
//! worst ≤ 3), or when a refused filter's witness does not pass the limit.
//!
//! `cargo test` rewrites the table when it is stale; with `CI=true` a stale table is a failure
//! (`OZCHECK_BLESS=1 cargo test --test tightness` rewrites it there too).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::cost;
use ozcheck_analyzer::witness::{self, Effort};
use ozcheck_analyzer::{Options, Verdict, compile};

const START: &str = "<!-- tightness-table:start -->";
const END: &str = "<!-- tightness-table:end -->";

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// A filter on one line: YAML block scalars and one-line forms of one filter are one row.
fn flat(filter: &str) -> String {
    filter.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// Every string under a `filter` or `sender` key of a YAML document.
fn yaml_filters(value: &yaml_serde::Value, out: &mut BTreeSet<(String, bool)>) {
    match value {
        yaml_serde::Value::Mapping(map) => {
            for (k, v) in map {
                match (k.as_str(), v.as_str()) {
                    (Some("filter"), Some(f)) => {
                        out.insert((flat(f), false));
                    }
                    (Some("sender"), Some(f)) => {
                        out.insert((flat(f), true));
                    }
                    _ => yaml_filters(v, out),
                }
            }
        }
        yaml_serde::Value::Sequence(items) => items.iter().for_each(|v| yaml_filters(v, out)),
        _ => {}
    }
}

fn yaml_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            yaml_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
}

/// The filters (and whether each is a `sender` expression) of the corpus and the lint examples.
fn filters() -> BTreeSet<(String, bool)> {
    let mut out = BTreeSet::new();
    let expressions: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("corpus/events/expressions.json")).unwrap(),
    )
    .unwrap();
    for e in expressions["expressions"].as_array().unwrap() {
        out.insert((flat(e["expr"].as_str().unwrap()), false));
    }
    out.insert((flat(expressions["expr_1024"].as_str().unwrap()), false));
    let mut files = Vec::new();
    yaml_files(&root().join("corpus/plugins"), &mut files);
    yaml_files(&root().join("corpus/conformance"), &mut files);
    files.sort();
    let mut texts: Vec<String> = files
        .iter()
        .filter_map(|p| std::fs::read_to_string(p).ok())
        .collect();
    for rule in ozcheck_lint::rules::RULES {
        for example in [rule.example, rule.use_instead] {
            texts.extend(
                ozcheck_lint::docs::example_files(example)
                    .into_iter()
                    .map(|f| f.text),
            );
        }
    }
    for text in texts {
        // Malformed documents (the lint's error fixtures) hold no filter worth measuring.
        for document in yaml_serde::Deserializer::from_str(&text) {
            match <yaml_serde::Value as serde::Deserialize>::deserialize(document) {
                Ok(value) => yaml_filters(&value, &mut out),
                Err(_) => break,
            }
        }
    }
    out
}

struct Row {
    filter: String,
    verdict: Verdict,
    max: u64,
    witness: u64,
    complete: bool,
}

impl Row {
    fn ratio(&self) -> Option<f64> {
        (self.witness > 0 && self.complete).then(|| self.max as f64 / self.witness as f64)
    }
}

fn measure(filter: &str, sender: bool, options: &Options) -> Option<Row> {
    let env = if sender { Env::sender() } else { Env::filter() };
    let checked = compile(filter, &env, options).ok()?;
    let estimate = cost::estimate(&checked, &env, options);
    let max = estimate.cost.max;
    let verdict = if max <= options.limit {
        Verdict::Accepted
    } else {
        Verdict::Refused
    };
    // A refused filter's witness is measured up to four limits: enough to prove the refusal
    // without running tens of millions of units in a debug build.
    let effort = Effort {
        cap: max.min(options.limit.saturating_mul(4)),
        evaluations: 400,
        work: u64::MAX,
    };
    let w = witness::build(&checked, &env, &estimate, options, effort)?;
    Some(Row {
        filter: filter.to_owned(),
        verdict,
        max,
        witness: w.cost,
        complete: w.complete,
    })
}

fn group(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

fn cell(filter: &str) -> String {
    let flat = flat(filter);
    let short: String = if flat.chars().count() > 90 {
        format!("{}…", flat.chars().take(89).collect::<String>())
    } else {
        flat
    };
    format!("`{}`", short.replace('|', "\\|"))
}

fn median(mut xs: Vec<f64>) -> f64 {
    xs.sort_by(f64::total_cmp);
    let n = xs.len();
    if n == 0 {
        return 0.0;
    }
    if n % 2 == 1 {
        xs[n / 2]
    } else {
        f64::midpoint(xs[n / 2 - 1], xs[n / 2])
    }
}

fn table(rows: &[Row], limit: u64) -> String {
    let mut out = String::new();
    out.push_str(
        "| filter | verdict | estimate max | witness cost | ratio |\n|---|---|--:|--:|--:|\n",
    );
    for r in rows {
        let verdict = match r.verdict {
            Verdict::Accepted => "accepted",
            Verdict::Refused => "refused",
        };
        let (witness, ratio) = match r.ratio() {
            Some(x) => (group(r.witness), format!("{x:.2}×")),
            None if r.witness == 0 => ("0".to_owned(), "—".to_owned()),
            None => (
                format!("> {}", group(r.witness.min(limit.saturating_mul(4)))),
                format!("< {:.1}×", r.max as f64 / r.witness as f64),
            ),
        };
        let _ = writeln!(
            out,
            "| {} | {verdict} | {} | {witness} | {ratio} |",
            cell(&r.filter),
            group(r.max)
        );
    }
    let accepted: Vec<f64> = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Accepted)
        .filter_map(Row::ratio)
        .collect();
    let worst = accepted.iter().copied().fold(0.0, f64::max);
    let _ = write!(
        out,
        "\n{} filters ({} accepted, {} refused). Accepted filters: median ratio {:.2}×, worst {:.2}×.\n",
        rows.len(),
        accepted.len(),
        rows.iter()
            .filter(|r| r.verdict == Verdict::Refused)
            .count(),
        median(accepted.clone()),
        worst
    );
    out
}

#[test]
fn tightness_table_is_current_and_meets_its_goal() {
    let options = Options::default();
    let rows: Vec<Row> = filters()
        .iter()
        .filter_map(|(f, sender)| measure(f, *sender, &options))
        .collect();
    assert!(rows.len() >= 10, "only {} filters measured", rows.len());
    for r in rows.iter().filter(|r| r.verdict == Verdict::Refused) {
        assert!(
            r.witness > options.limit,
            "the witness of refused `{}` costs {} ≤ the limit",
            r.filter,
            r.witness
        );
    }
    let accepted: Vec<f64> = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Accepted)
        .filter_map(Row::ratio)
        .collect();
    let worst = accepted.iter().copied().fold(0.0, f64::max);
    assert!(
        median(accepted.clone()) <= 1.25 && worst <= 3.0,
        "tightness goal missed: median {:.2}, worst {worst:.2}\n{}",
        median(accepted),
        table(&rows, options.limit)
    );

    let generated = table(&rows, options.limit);
    let path = root().join("docs/cost-model.md");
    let doc = std::fs::read_to_string(&path).unwrap();
    let (Some(a), Some(b)) = (doc.find(START), doc.find(END)) else {
        panic!("docs/cost-model.md has no {START} … {END} section");
    };
    let current = &doc[a + START.len()..b];
    let wanted = format!("\n{generated}");
    // `cargo test` regenerates the table; under CI (a clean clone) a stale table fails instead,
    // so what lands on main is always current.
    let ci = std::env::var("CI").is_ok_and(|v| v == "true");
    if std::env::var_os("OZCHECK_BLESS").is_some() || !ci && current != wanted {
        let updated = format!("{}{START}{wanted}{}", &doc[..a], &doc[b..]);
        std::fs::write(&path, updated).unwrap();
        return;
    }
    assert!(
        current == wanted,
        "docs/cost-model.md §9 is stale; regenerate it with `OZCHECK_BLESS=1 cargo test --test tightness`\n{generated}"
    );
}

/// The witness guarantee (docs/cost-model.md §9.1) over every filter of the corpus, the
/// benchmark expressions and the lint examples: a refused filter's witness replays past the
/// limit; an accepted one's reaches at least half of the estimate's max and replays to the
/// same cost without a runtime error. (Until cost model 10 one corpus filter,
/// `a.map(x, x + x).filter(y, y.size() > 3)`, was listed apart: its estimate was 2.69 times
/// anything reachable.)
#[test]
fn every_corpus_witness_keeps_the_guarantee() {
    use std::sync::Arc;
    use std::time::Duration;

    use ozcheck_analyzer::EventBounds;
    use ozcheck_analyzer::eval::{EvalError, Event, Limits, ManualClock, Program, Stop};

    let options = Options::default();
    let limit = options.limit;
    let mut failures = Vec::new();
    let mut checked_filters = 0;
    for (filter, sender) in filters() {
        let env = if sender { Env::sender() } else { Env::filter() };
        let Ok(checked) = compile(&filter, &env, &options) else {
            continue;
        };
        let estimate = cost::estimate(&checked, &env, &options);
        let max = estimate.cost.max;
        let refused = max > limit;
        // A refused filter's proof needs one limit and a unit; an accepted one is searched as
        // `ozcheck filter --witness` searches it.
        let effort = if refused {
            Effort {
                cap: limit + 1,
                evaluations: 400,
                work: limit.saturating_mul(32),
            }
        } else {
            Effort::for_limit(limit, max)
        };
        let Some(w) = witness::build(&checked, &env, &estimate, &options, effort) else {
            continue;
        };
        checked_filters += 1;
        let program = Program::from_checked(&checked).expect("prepares");
        let event = Event::from_json(&w.event, &EventBounds::DEFAULT).expect("a valid event");
        let limits = Limits {
            deadline: Duration::from_secs(3600),
            clock: Arc::new(ManualClock::new()),
            ..Limits::default()
        };
        let replay = program.eval_event(&event, &limits);
        if refused {
            if !matches!(replay, Err(EvalError::Stopped(Stop::CostLimit { .. }))) {
                failures.push(format!("refused `{filter}`: replay {replay:?}"));
            }
            continue;
        }
        match replay {
            Ok(done) if done.cost == w.cost => {}
            other => failures.push(format!(
                "accepted `{filter}`: witness {} but replay {other:?}",
                w.cost
            )),
        }
        if w.cost.saturating_mul(2) < max {
            failures.push(format!(
                "accepted `{filter}`: witness {} < half of {max}",
                w.cost
            ));
        }
    }
    assert!(checked_filters >= 10, "only {checked_filters} filters");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}
