//! Runs one benchmark expression of `corpus/events/expressions.json` (or the event binding) a
//! given number of times on one event, for counting its instructions under callgrind: the count
//! does not depend on what else the machine is doing, so two commits compare to the instruction
//! even on a busy machine (`benches/eval_instructions.sh` runs each case at two repetition
//! counts and prints the difference per evaluation).
//!
//! `cargo run --release -p ozcheck-analyzer --example eval_instructions -- NAME|bind EVENT N`
//! (EVENT is a file name in `corpus/events/`, e.g. `realistic.json`).

use std::hint::black_box;
use std::path::Path;

use ozcheck_analyzer::EventBounds;
use ozcheck_analyzer::eval::{Activation, Event, Limits, Program};
use ozcheck_analyzer::syntax::{self, ParseOptions};

fn corpus(name: &str) -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../corpus/events")
        .join(name);
    std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let [name, event_file, n] = args.as_slice() else {
        eprintln!("usage: eval_instructions NAME|bind EVENT N");
        std::process::exit(2);
    };
    let n: usize = n.parse().expect("N is a count");
    let text = corpus(event_file);
    if name == "bind" {
        for _ in 0..n {
            black_box(Event::from_json(black_box(&text), &EventBounds::DEFAULT)).expect("bound");
        }
        return;
    }
    let json: serde_json::Value = serde_json::from_str(&corpus("expressions.json")).expect("JSON");
    let expr = json["expressions"]
        .as_array()
        .expect("a list")
        .iter()
        .find(|e| e["name"] == name.as_str())
        .and_then(|e| e["expr"].as_str())
        .unwrap_or_else(|| panic!("no expression named {name}"));
    let ast = syntax::parse(expr, &ParseOptions::default()).expect("benchmark expressions parse");
    let program = Program::new(ast).expect("benchmark expressions compile");
    let event = Event::from_json(&text, &EventBounds::DEFAULT).expect("within bounds");
    let activation = Activation::event(&event);
    // Under callgrind a program runs tens of times slower: without a longer deadline, the
    // nested loops over the largest event would stop at the clock, at a point that varies.
    let limits = Limits::default().with_deadline(std::time::Duration::from_secs(3600));
    for _ in 0..n {
        let _ = black_box(program.eval(black_box(&activation), &limits));
    }
}
