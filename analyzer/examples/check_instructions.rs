//! Runs the static check of one benchmark expression of `corpus/events/expressions.json` (what
//! the Python package's `check_filter` calls: `check_expression` in the filter environment with
//! the default options) a given number of times, or the one-shot evaluation (`oneshot`: the
//! check, then the program built and run on one event, as the package's `evaluate` does), for
//! counting instructions under callgrind. `benches/check_instructions.py` runs each case at two
//! repetition counts and prints the difference per call, without the set-up.
//!
//! `cargo run --release -p ozcheck-analyzer --example check_instructions -- check NAME N`
//! `cargo run --release -p ozcheck-analyzer --example check_instructions -- oneshot NAME N`

use std::hint::black_box;
use std::path::Path;

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::eval::{Event, Limits, Program};
use ozcheck_analyzer::syntax::{self, ParseOptions};
use ozcheck_analyzer::{EventBounds, Options, Verdict, check_expression};

fn corpus(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/events")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [mode, name, n] = args.as_slice() else {
        eprintln!("usage: check_instructions check|oneshot NAME N");
        std::process::exit(2);
    };
    let n: usize = n.parse().expect("N is a count");
    let json: serde_json::Value = serde_json::from_str(&corpus("expressions.json")).expect("JSON");
    let expr = json["expressions"]
        .as_array()
        .expect("a list")
        .iter()
        .find(|e| e["name"] == name.as_str())
        .and_then(|e| e["expr"].as_str())
        .unwrap_or_else(|| panic!("no expression named {name}"));
    let env = Env::filter();
    let options = Options::default();
    match mode.as_str() {
        "check" => {
            for _ in 0..n {
                black_box(check_expression(black_box(expr), &env, &options));
            }
        }
        "oneshot" => {
            let event = Event::from_json(&corpus("realistic.json"), &EventBounds::DEFAULT)
                .expect("within bounds");
            // The deadline is long for the same reason as in `eval_instructions`: under
            // callgrind the program runs tens of times slower.
            let limits = Limits::default().with_deadline(std::time::Duration::from_secs(3600));
            for _ in 0..n {
                let report = check_expression(black_box(expr), &env, &options);
                if report.verdict != Verdict::Accepted {
                    continue;
                }
                let program = syntax::parse(expr, &ParseOptions::default())
                    .and_then(Program::new)
                    .expect("an accepted expression compiles");
                let _ = black_box(program.eval_event(&event, &limits));
            }
        }
        other => panic!("unknown mode {other} (check or oneshot)"),
    }
}
