//! Generators for property tests and fuzz targets (feature `testgen`): random well-typed
//! filters over `event` (type-directed from the checker's overload tables, and realistic ones
//! for the differential test), events within bounds, random or adversarial, and the soundness
//! case that uses the witness of each filter as its adversary. Seed-driven, so a failing seed
//! reproduces its case exactly.

mod coverage;
mod events;
mod realistic;
mod typed;

use std::sync::Arc;
use std::time::Duration;

pub use coverage::Coverage;
pub use events::event_json;
pub use realistic::FilterGen;
pub use typed::{Focus, Gen, SHAPES, Shape, focus};

use crate::check::Env;
use crate::cost::estimate;
use crate::eval::{EvalError, Event, Limits, ManualClock, Program, Stop};
use crate::witness::{self, Effort};
use crate::{EventBounds, Options, compile};

/// The attribute keys that generated filters read and generated events fill.
pub(crate) const KEYS: &[&str] = &["a", "b", "labels", "k"];

/// A small deterministic generator (xorshift64*), so one proptest seed reproduces one case.
pub struct Rng(u64);

impl Rng {
    /// A generator seeded with `seed`.
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }
    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: u64) -> u64 {
        self.next_u64() % n.max(1)
    }
    /// One of `items`.
    pub fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
    /// True `percent` times in a hundred.
    pub fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

/// Evaluations of one soundness case stop at this cost: a larger estimate is not checked to
/// its end (the case then only checks that no evaluation passes the estimate before it).
pub const WORK_CAP: u64 = 400_000;

/// Witness candidates per soundness case.
pub const WITNESS_EVALUATIONS: usize = 24;

/// What one soundness case did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CaseOutcome {
    /// Whether the filter compiled (else it was skipped).
    pub compiled: bool,
    /// Evaluations run (witness candidates and random events).
    pub evaluations: usize,
    /// The metered cost on the witness.
    pub witness_cost: u64,
    /// The estimate's max.
    pub estimate: u64,
}

/// One soundness case from a seed: a filter around `focus`, random bounds, its witness and four
/// random events within them. `Err` describes a case whose metered cost exceeded the estimate's
/// max, with the filter and the event. The compiled filter's nodes and overloads are counted
/// into `coverage`.
pub fn soundness_case(
    seed: u64,
    focus: Focus,
    coverage: &mut Coverage,
) -> Result<CaseOutcome, String> {
    let mut rng = Rng::new(seed);
    // Shapes get room to be expensive most of the time.
    let large = matches!(focus, Focus::Shape(_)) && rng.chance(60);
    let bounds = EventBounds {
        text: if large {
            1024
        } else {
            [0, 16, 64, 300, 1024][rng.below(5) as usize]
        },
        attributes: if large {
            1024
        } else {
            [2, 16, 64, 300, 1024][rng.below(5) as usize]
        },
        header_field: 32,
    };
    let options = Options {
        bounds,
        ..Options::default()
    };
    let env = Env::filter();
    let mut source = String::new();
    let mut compiled = None;
    // Deep filters may pass the byte limit or, rarely, a typing rule the generator does not
    // model; a few shallower tries keep the focus.
    for depth in [3, 2, 1, 1] {
        source = Gen::new(&mut rng).filter(focus, depth);
        if let Ok(checked) = compile(&source, &env, &options) {
            compiled = Some(checked);
            break;
        }
    }
    if focus == Focus::Shape(Shape::Message) {
        coverage.count_kind("Struct");
        return match compiled {
            None => Ok(CaseOutcome::default()),
            Some(_) => Err(format!("a message literal compiled: {source}")),
        };
    }
    let Some(checked) = compiled else {
        return Ok(CaseOutcome::default());
    };
    coverage.count(&checked);
    let estimate = estimate(&checked, &env, &options);
    let program = Program::from_checked(&checked).map_err(|d| format!("{source}: {d:?}"))?;
    let max = estimate.cost.max;
    let cap = max.min(WORK_CAP);
    let mut outcome = CaseOutcome {
        compiled: true,
        estimate: max,
        ..CaseOutcome::default()
    };
    let effort = Effort {
        cap,
        evaluations: WITNESS_EVALUATIONS,
        work: u64::MAX,
    };
    if let Some(w) = witness::build(&checked, &env, &estimate, &options, effort) {
        outcome.evaluations += w.evaluations;
        outcome.witness_cost = w.cost;
        if w.cost > max {
            return Err(format!(
                "metered cost {} on the witness exceeds the estimate {}..{}\nfilter: {source}\nevent: {}",
                w.cost, estimate.cost.min, max, w.event
            ));
        }
    }
    for _ in 0..4 {
        let text = event_json(&mut rng, &bounds).to_string();
        let event = Event::from_json(&text, &bounds)
            .map_err(|e| format!("generated event out of bounds: {e}\n{text}"))?;
        let limits = Limits {
            cost: Some(cap),
            deadline: Duration::from_secs(3600),
            clock: Arc::new(ManualClock::new()),
            model: options.model,
            ..Limits::default()
        };
        outcome.evaluations += 1;
        match program.eval_event(&event, &limits) {
            Err(EvalError::Stopped(Stop::CostLimit { cost })) if cap == max => {
                return Err(format!(
                    "metered cost {cost} exceeds the estimate {}..{max}\nfilter: {source}\nevent: {text}",
                    estimate.cost.min
                ));
            }
            // Memory follows cost: what the estimate allows, at `MAX_BYTES_PER_UNIT` bytes a
            // unit, stays under the cap, so an evaluation within it never stops on memory.
            Err(EvalError::Stopped(Stop::Memory { bytes, cost })) => {
                return Err(format!(
                    "stopped on memory ({bytes} bytes at cost {cost}) within the estimate \
                     {max}\nfilter: {source}\nevent: {text}"
                ));
            }
            Ok(done) if done.built > max.saturating_mul(crate::cost::table::MAX_BYTES_PER_UNIT) => {
                return Err(format!(
                    "built {} bytes, more than {} a unit of the estimate {max}\nfilter: \
                     {source}\nevent: {text}",
                    done.built,
                    crate::cost::table::MAX_BYTES_PER_UNIT
                ));
            }
            _ => {}
        }
    }
    Ok(outcome)
}

/// What the `cel` crate's interpreter (cel-rust) and ozcheck's evaluator disagree on, by design
/// or by a known defect of that crate; each entry is checked against the filter source.
/// `docs/decisions/0004-cel-rust-differences.md` explains them.
#[cfg(feature = "oracle")]
pub const KNOWN_INTERPRETER_DIFFERENCES: &[(&str, &str)] = &[];

/// `json` as compact text with the keys of every object in the opposite order of its map's (the
/// event reader keeps the order of the text).
#[cfg(feature = "oracle")]
fn reversed_text(json: &serde_json::Value) -> String {
    match json {
        serde_json::Value::Object(map) => {
            let members: Vec<String> = map
                .iter()
                .rev()
                .map(|(k, v)| {
                    format!(
                        "{}:{}",
                        serde_json::Value::from(k.as_str()),
                        reversed_text(v)
                    )
                })
                .collect();
            format!("{{{}}}", members.join(","))
        }
        serde_json::Value::Array(items) => {
            let items: Vec<String> = items.iter().map(reversed_text).collect();
            format!("[{}]", items.join(","))
        }
        other => other.to_string(),
    }
}

/// One differential case from a seed: a random filter over a small random event, evaluated by
/// ozcheck and by the `cel` crate's interpreter. When both produce a bool they must agree (a
/// runtime error on either side is not compared: the crates word and place errors differently).
#[cfg(feature = "oracle")]
pub fn differential_case(seed: u64) -> Result<(), String> {
    let mut rng = Rng::new(seed);
    let bounds = EventBounds {
        text: 64,
        attributes: 128,
        header_field: 32,
    };
    let options = Options {
        bounds,
        ..Options::default()
    };
    let depth = 1 + rng.below(2) as u32;
    let source = FilterGen::new(&mut rng).bool_expr(depth);
    let Ok(checked) = compile(&source, &Env::filter(), &options) else {
        return Ok(());
    };
    let program = Program::from_checked(&checked).map_err(|d| format!("{source}: {d:?}"))?;
    let json = event_json(&mut rng, &bounds);
    let event = Event::from_value(&json, &bounds).map_err(|e| e.to_string())?;
    let answer = |event: &Event| match program.eval_event(event, &Limits::default()) {
        Ok(evaluation) => match evaluation.value {
            crate::eval::Value::Bool(b) => Some(b),
            _ => None,
        },
        Err(_) => None,
    };
    let Some(ours) = answer(&event) else {
        return Ok(());
    };
    // CEL leaves the order in which a map is iterated unspecified: ozcheck iterates in the
    // order the event wrote the keys, cel-rust in its hash order. Where our own answer changes
    // when every object of the event lists its keys the other way round, the filter observes
    // that order (`labels.map(k, k)[0]` over a map), and the two may differ by design.
    let reversed = Event::from_json(&reversed_text(&json), &EventBounds::DEFAULT)
        .map_err(|e| e.to_string())?;
    if answer(&reversed) != Some(ours) {
        return Ok(());
    }
    let theirs = std::panic::catch_unwind(|| {
        let program = cel::Program::compile(&source).ok()?;
        let mut context = cel::Context::default();
        context.add_variable_from_value("event", cel::to_value(&json).ok()?);
        match program.execute(&context) {
            Ok(cel::Value::Bool(b)) => Some(b),
            _ => None,
        }
    });
    match theirs {
        Ok(Some(theirs)) if theirs != ours => {
            if KNOWN_INTERPRETER_DIFFERENCES
                .iter()
                .any(|(pattern, _)| source.contains(pattern))
            {
                return Ok(());
            }
            Err(format!(
                "ozcheck says {ours}, cel-rust says {theirs}\nfilter: {source}\nevent: {json}"
            ))
        }
        _ => Ok(()),
    }
}
