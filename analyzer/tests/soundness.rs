//! Soundness of the static bound, tested: for random well-typed filters and events within
//! bounds — random ones and adversarial ones that pour the whole budget into the shapes that
//! make a filter expensive — the metered cost of an evaluation never exceeds the estimate's max,
//! so an accepted filter can never be stopped by the cost limit.
//!
//! The meter runs with its limit set to the estimate's max: any evaluation that would cost more
//! stops with `cost-limit`, which this test reports together with the filter and the event.
//! `SOUNDNESS_CASES` overrides the number of cases (default 10,000).

use std::sync::Arc;
use std::time::Duration;

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::cost::estimate;
use ozcheck_analyzer::eval::{EvalError, Event, Limits, ManualClock, Program, Stop};
use ozcheck_analyzer::{EventBounds, Options, compile};
use proptest::prelude::*;
use serde_json::{Map, Value as Json, json};

/// A small deterministic generator (xorshift64*), so one proptest seed reproduces one case.
struct Rng(u64);

impl Rng {
    fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n.max(1)
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
    fn chance(&mut self, percent: u64) -> bool {
        self.below(100) < percent
    }
}

const KEYS: &[&str] = &["a", "b", "labels", "k"];
const HEADERS: &[&str] = &["event.action", "event.id", "event.type", "event.subject"];
const LITERALS: &[&str] = &["''", "'a'", "'ab'", "'ñ'", "'LGTM'", "'0'", "'aaaaaaaa'"];
const PATTERNS: &[&str] = &[
    "'^fix'",
    "'a+b'",
    "'.*x.*'",
    "'[0-9]+$'",
    "'(a|ñ)*0'",
    "'^$'",
];

/// Builds a random filter whose parts are well typed: `event` fields, attribute values (dyn),
/// literals, and the iteration variables in scope.
struct FilterGen<'r> {
    rng: &'r mut Rng,
    vars: Vec<String>,
    next_var: u32,
}

impl FilterGen<'_> {
    fn bool_expr(&mut self, depth: u32) -> String {
        let leaf = depth == 0;
        match self.rng.below(if leaf { 6 } else { 16 }) {
            0 => format!("{} == {}", self.str_expr(depth), self.str_expr(depth)),
            1 => format!(
                "{}.contains({})",
                self.str_expr(depth),
                self.str_expr(depth)
            ),
            2 => format!(
                "{}.{}({})",
                self.str_expr(depth),
                self.rng.pick(&["startsWith", "endsWith"]),
                self.str_expr(depth)
            ),
            3 => format!(
                "{}.matches({})",
                self.str_expr(depth),
                self.rng.pick(PATTERNS)
            ),
            4 => format!(
                "{} {} {}",
                self.int_expr(depth),
                self.rng.pick(&["<", ">=", "=="]),
                self.int_expr(depth)
            ),
            5 => format!("has(event.attributes.{})", self.rng.pick(KEYS)),
            6 => format!("!({})", self.bool_expr(depth - 1)),
            7 => format!(
                "({}) {} ({})",
                self.bool_expr(depth - 1),
                self.rng.pick(&["&&", "||"]),
                self.bool_expr(depth - 1)
            ),
            8 => format!(
                "({}) ? ({}) : ({})",
                self.bool_expr(depth - 1),
                self.bool_expr(depth - 1),
                self.bool_expr(depth - 1)
            ),
            9 => format!(
                "{} in {}",
                self.str_expr(depth - 1),
                self.list_expr(depth - 1)
            ),
            10 => format!(
                "{} < {}",
                self.str_expr(depth - 1),
                self.str_expr(depth - 1)
            ),
            11 => {
                let macro_name = self.rng.pick(&["exists", "all", "exists_one"]);
                let range = self.list_expr(depth - 1);
                let (var, body) = self.scoped(|g| g.bool_expr(depth - 1));
                format!("{range}.{macro_name}({var}, {body})")
            }
            12 => {
                let (var, body) = self.scoped(|g| g.bool_expr(depth - 1));
                format!("event.attributes.exists({var}, {body})")
            }
            13 => {
                let (var, body) = self.scoped(|g| {
                    let key = g.vars.last().unwrap().clone();
                    format!("event.attributes[{key}] == {}", g.str_expr(0))
                });
                format!("event.attributes.exists({var}, {body})")
            }
            14 => format!(
                "event.attributes.{} == {}",
                self.rng.pick(KEYS),
                self.rng.pick(&["true", "1", "'x'", "null"])
            ),
            _ => format!(
                "{}.size() > {}",
                self.list_expr(depth - 1),
                self.rng.below(4)
            ),
        }
    }

    fn str_expr(&mut self, depth: u32) -> String {
        let choices = if depth == 0 { 5 } else { 8 };
        match self.rng.below(choices) {
            0 => "event.text".to_owned(),
            1 => self.rng.pick(HEADERS).to_owned(),
            2 => self.rng.pick(LITERALS).to_owned(),
            3 if !self.vars.is_empty() => {
                let i = self.rng.below(self.vars.len() as u64) as usize;
                self.vars[i].clone()
            }
            3 | 4 => format!("event.attributes.{}", self.rng.pick(KEYS)),
            5 => format!(
                "({} + {})",
                self.str_expr(depth - 1),
                self.str_expr(depth - 1)
            ),
            6 => format!("string({})", self.int_expr(depth - 1)),
            _ => format!("{}[0]", self.list_expr(depth - 1)),
        }
    }

    fn int_expr(&mut self, depth: u32) -> String {
        let choices = if depth == 0 { 3 } else { 6 };
        match self.rng.below(choices) {
            0 => format!("size({})", self.str_expr(0)),
            1 => self.rng.below(10).to_string(),
            2 => format!("size(event.attributes.{})", self.rng.pick(KEYS)),
            3 => format!(
                "({} + {})",
                self.int_expr(depth - 1),
                self.int_expr(depth - 1)
            ),
            4 => format!("{}.size()", self.list_expr(depth - 1)),
            _ => format!(
                "({} * {})",
                self.int_expr(depth - 1),
                self.int_expr(depth - 1)
            ),
        }
    }

    fn list_expr(&mut self, depth: u32) -> String {
        let choices = if depth == 0 { 2 } else { 6 };
        match self.rng.below(choices) {
            0 => format!("event.attributes.{}", self.rng.pick(KEYS)),
            1 => format!("[{}, {}]", self.rng.pick(LITERALS), self.rng.pick(LITERALS)),
            2 => {
                let range = self.list_expr(depth - 1);
                let (var, body) = self.scoped(|g| g.str_expr(depth - 1));
                format!("{range}.map({var}, {body})")
            }
            3 => {
                let range = self.list_expr(depth - 1);
                let (var, body) = self.scoped(|g| g.bool_expr(depth - 1));
                format!("{range}.filter({var}, {body})")
            }
            4 => format!(
                "({} + {})",
                self.list_expr(depth - 1),
                self.list_expr(depth - 1)
            ),
            _ => format!(
                "[{}, {}]",
                self.str_expr(depth - 1),
                self.str_expr(depth - 1)
            ),
        }
    }

    /// Runs `body` with a fresh iteration variable in scope.
    fn scoped(&mut self, body: impl FnOnce(&mut Self) -> String) -> (String, String) {
        let var = format!("x{}", self.next_var);
        self.next_var += 1;
        self.vars.push(var.clone());
        let text = body(self);
        self.vars.pop();
        (var, text)
    }
}

/// The compact JSON size of a value.
fn json_len(value: &Json) -> u64 {
    serde_json::to_string(value).unwrap().len() as u64
}

fn small_string(rng: &mut Rng, max_chars: u64) -> String {
    let n = rng.below(max_chars + 1);
    (0..n)
        .map(|_| ['a', 'b', '0', 'x', 'ñ'][rng.below(5) as usize])
        .collect()
}

/// One attribute value of a random shape, at most about `budget` bytes of JSON.
fn attribute_value(rng: &mut Rng, budget: u64, fill: bool) -> Json {
    let target = if fill { budget } else { rng.below(budget + 1) };
    match rng.below(6) {
        0 => Json::String(small_string(rng, target.saturating_sub(2))),
        1 => {
            // The densest list: one-digit ints, the worst case for counting elements.
            let n = target.saturating_sub(1) / 2;
            Json::Array((0..n).map(|i| json!(i % 10)).collect())
        }
        2 => {
            let mut items = Vec::new();
            let mut used = 2;
            while used < target {
                let s = small_string(rng, if fill { 0 } else { 3 });
                used += s.len() as u64 + 3;
                items.push(Json::String(s));
            }
            Json::Array(items)
        }
        3 => {
            let mut map = Map::new();
            for i in 0..target / 8 {
                map.insert(format!("k{i}"), Json::String(small_string(rng, 2)));
            }
            Json::Object(map)
        }
        4 => Json::Bool(rng.chance(50)),
        _ => json!(rng.below(1000)),
    }
}

/// Random attributes within `bound` bytes of compact JSON: either a few random values or,
/// adversarially, the whole budget split between one to three keys.
fn attributes(rng: &mut Rng, bound: u64) -> Json {
    let fill = rng.chance(60);
    // Most keys are present most of the time, so filters get past their first lookup.
    let present: Vec<&str> = KEYS.iter().copied().filter(|_| rng.chance(75)).collect();
    let mut map = Map::new();
    for key in &present {
        let share = bound / present.len() as u64;
        map.insert((*key).to_owned(), attribute_value(rng, share, fill));
    }
    let mut value = Json::Object(map);
    // Trim until it fits: drop list elements, shorten strings, finally drop keys.
    loop {
        let size = json_len(&value);
        if size <= bound {
            break;
        }
        let excess = (size - bound) as usize;
        let Json::Object(map) = &mut value else {
            unreachable!()
        };
        let key = map.keys().next().cloned().unwrap();
        match map.get_mut(&key).unwrap() {
            Json::Array(items) if !items.is_empty() => {
                let drop = excess.div_ceil(2).clamp(1, items.len());
                items.truncate(items.len() - drop);
            }
            Json::String(s) if !s.is_empty() => {
                s.pop();
            }
            Json::Object(m) if !m.is_empty() => {
                let first = m.keys().next().cloned().unwrap();
                m.remove(&first);
            }
            _ => {
                map.remove(&key);
            }
        }
    }
    value
}

fn event_json(rng: &mut Rng, bounds: &EventBounds) -> Json {
    let text_len = if rng.chance(50) {
        bounds.text
    } else {
        rng.below(bounds.text + 1)
    };
    let mut text = String::new();
    while (text.len() as u64) < text_len {
        let c = ['a', 'b', 'x', '0', ' ', 'ñ', 'L'][rng.below(7) as usize];
        if text.len() + c.len_utf8() > text_len as usize {
            break;
        }
        text.push(c);
    }
    let header = |rng: &mut Rng| small_string(rng, bounds.header_field / 2);
    json!({
        "id": header(rng),
        "source": "gh/acme",
        "type": header(rng),
        "action": header(rng),
        "subject": header(rng),
        "text": text,
        "attributes": attributes(rng, bounds.attributes),
    })
}

fn check_case(seed: u64) -> Result<(), TestCaseError> {
    let mut rng = Rng::new(seed);
    let bounds = EventBounds {
        text: [0, 16, 64, 300, 1024][rng.below(5) as usize],
        attributes: [2, 16, 64, 300, 1024][rng.below(5) as usize],
        header_field: 32,
    };
    let options = Options {
        bounds,
        ..Options::default()
    };
    let depth = 1 + rng.below(3) as u32;
    let source = FilterGen {
        rng: &mut rng,
        vars: Vec::new(),
        next_var: 0,
    }
    .bool_expr(depth);
    let env = Env::filter();
    let Ok(checked) = compile(&source, &env, &options) else {
        // Over the byte limit, or a generated shape the checker refuses: not this test's subject.
        return Ok(());
    };
    let estimate = estimate(&checked, &env, &options);
    let program = Program::from_checked(&checked).expect("prepares");
    for _ in 0..4 {
        let json = event_json(&mut rng, &bounds);
        let event = Event::from_value(&json, &bounds)
            .unwrap_or_else(|e| panic!("generated event out of bounds: {e}\n{json}"));
        let limits = Limits {
            cost: Some(estimate.cost.max),
            deadline: Duration::from_secs(3600),
            clock: Arc::new(ManualClock::new()),
        };
        let charged = match program.eval_event(&event, &limits) {
            Ok(evaluation) => evaluation.cost,
            Err(EvalError::Stopped(Stop::CostLimit { cost })) => {
                return Err(TestCaseError::fail(format!(
                    "metered cost {cost} exceeds the estimate {}..{}\nfilter: {source}\nevent: {json}",
                    estimate.cost.min, estimate.cost.max
                )));
            }
            Err(e) => e.cost(),
        };
        prop_assert!(
            charged <= estimate.cost.max,
            "charged {} > max {} for {}",
            charged,
            estimate.cost.max,
            source
        );
    }
    Ok(())
}

fn cases() -> u32 {
    std::env::var("SOUNDNESS_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: cases(),
        failure_persistence: None,
        ..ProptestConfig::default()
    })]

    #[test]
    fn metered_cost_never_exceeds_the_estimate(seed in any::<u64>()) {
        check_case(seed)?;
    }
}

/// The named worst cases from the issue, on events built to be their worst case.
#[test]
fn nested_exists_on_the_densest_attributes_stays_within_its_estimate() {
    let bounds = EventBounds::DEFAULT;
    let options = Options::default();
    let env = Env::filter();
    let source = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))";
    let checked = compile(source, &env, &options).unwrap();
    let estimate = estimate(&checked, &env, &options);
    let program = Program::from_checked(&checked).unwrap();
    let text = std::fs::read_to_string(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../corpus/events/adv_int8k.json"
    ))
    .unwrap();
    let event = Event::from_json(&text, &bounds).unwrap();
    let limits = Limits {
        cost: Some(estimate.cost.max),
        deadline: Duration::from_secs(3600),
        clock: Arc::new(ManualClock::new()),
    };
    let evaluation = program
        .eval_event(&event, &limits)
        .expect("completes within its estimate");
    assert!(evaluation.cost <= estimate.cost.max);
    // The bound is also tight: the densest event reaches a good part of it.
    assert!(
        evaluation.cost * 4 >= estimate.cost.max,
        "cost {} vs estimate {}",
        evaluation.cost,
        estimate.cost.max
    );
}
