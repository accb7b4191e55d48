//! Generators for property tests and fuzz targets (feature `testgen`): random well-typed
//! filters over `event`, and events within bounds, random or adversarial (the whole budget
//! poured into the shapes that make a filter expensive). Seed-driven, so a failing seed
//! reproduces its case exactly.

use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value as Json, json};

use crate::check::Env;
use crate::cost::estimate;
use crate::eval::{EvalError, Event, Limits, ManualClock, Program, Stop};
use crate::{EventBounds, Options, compile};

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
pub struct FilterGen<'r> {
    rng: &'r mut Rng,
    vars: Vec<String>,
    next_var: u32,
}

impl<'r> FilterGen<'r> {
    /// A generator drawing from `rng`.
    pub fn new(rng: &'r mut Rng) -> Self {
        Self {
            rng,
            vars: Vec::new(),
            next_var: 0,
        }
    }
}

impl FilterGen<'_> {
    /// A bool expression nested at most `depth` levels.
    pub fn bool_expr(&mut self, depth: u32) -> String {
        let leaf = depth == 0;
        if !leaf && self.rng.chance(25) {
            return self.extension_bool(depth);
        }
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
        if depth > 0 && self.rng.chance(20) {
            return self.extension_str(depth);
        }
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
        if depth > 0 && self.rng.chance(15) {
            let f = self.rng.pick(&["indexOf", "lastIndexOf"]);
            return format!("{}.{f}({})", self.str_expr(depth - 1), self.str_expr(0));
        }
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
        if depth > 0 && self.rng.chance(20) {
            return self.extension_list(depth);
        }
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

    /// A bool built with the extension libraries: sets, optionals, two-variable
    /// comprehensions, string searches on rebuilt strings.
    fn extension_bool(&mut self, depth: u32) -> String {
        let d = depth - 1;
        match self.rng.below(6) {
            0 => format!(
                "sets.{}({}, {})",
                self.rng.pick(&["contains", "intersects", "equivalent"]),
                self.list_expr(d),
                self.list_expr(d)
            ),
            1 => {
                let (vars, body) = self.scoped2(|g| g.bool_expr(d));
                let macro_name = self.rng.pick(&["exists", "all", "existsOne"]);
                format!("event.attributes.{macro_name}({vars}, {body})")
            }
            2 => {
                let range = self.list_expr(d);
                let (vars, body) = self.scoped2(|g| g.bool_expr(d));
                let macro_name = self.rng.pick(&["exists", "all", "existsOne"]);
                format!("{range}.{macro_name}({vars}, {body})")
            }
            3 => format!(
                "event.attributes.?{}.orValue({}) == {}",
                self.rng.pick(KEYS),
                self.str_expr(d),
                self.str_expr(d)
            ),
            4 => format!(
                "optional.{}({}).{}",
                self.rng.pick(&["of", "ofNonZeroValue"]),
                self.str_expr(d),
                self.rng
                    .pick(&["hasValue()", "orValue('') == 'x'", "value() == 'x'"])
            ),
            _ => format!(
                "{}.contains({})",
                self.extension_str(depth),
                self.str_expr(0)
            ),
        }
    }

    /// A string built by the strings extension.
    fn extension_str(&mut self, depth: u32) -> String {
        let d = depth - 1;
        match self.rng.below(8) {
            0 => format!(
                "{}.{}()",
                self.str_expr(d),
                self.rng
                    .pick(&["lowerAscii", "upperAscii", "trim", "reverse"])
            ),
            1 => format!(
                "{}.replace({}, {})",
                self.str_expr(d),
                self.str_expr(0),
                self.str_expr(d)
            ),
            2 => format!(
                "{}.{}",
                self.str_expr(d),
                self.rng
                    .pick(&["substring(1)", "substring(0, 2)", "charAt(0)", "charAt(1)"])
            ),
            3 => format!("{}.join({})", self.list_expr(d), self.rng.pick(LITERALS)),
            4 => format!("strings.quote({})", self.str_expr(d)),
            5 => format!(
                "'%s-%d:%x'.format([{}, {}, {}])",
                self.str_expr(d),
                self.int_expr(0),
                self.str_expr(d)
            ),
            6 => format!(
                "event.attributes.?{}.orValue({})",
                self.rng.pick(KEYS),
                self.str_expr(d)
            ),
            _ => format!(
                "{}.replace({}, {}, 2)",
                self.str_expr(d),
                self.str_expr(0),
                self.str_expr(d)
            ),
        }
    }

    /// A list built by the strings, lists and optional-types extensions or the two-variable
    /// macros.
    fn extension_list(&mut self, depth: u32) -> String {
        let d = depth - 1;
        match self.rng.below(8) {
            0 => format!("{}.split({})", self.str_expr(d), self.rng.pick(LITERALS)),
            1 => format!(
                "{}.{}",
                self.list_expr(d),
                self.rng.pick(&[
                    "slice(0, 1)",
                    "distinct()",
                    "sort()",
                    "reverse()",
                    "flatten()"
                ])
            ),
            2 => format!("lists.range({})", self.rng.below(6)),
            3 => format!("[{}, {}].flatten()", self.list_expr(d), self.list_expr(d)),
            4 => {
                let range = self.list_expr(d);
                let (vars, body) = self.scoped2(|g| g.str_expr(d));
                format!("{range}.transformList({vars}, {body})")
            }
            5 => {
                let range = self.list_expr(d);
                let (var, body) = self.scoped(|g| g.str_expr(d));
                format!("{range}.sortBy({var}, {body})")
            }
            6 => format!(
                "optional.unwrap([optional.of({}), optional.none()])",
                self.str_expr(d)
            ),
            _ => format!("[?optional.of({}), ?optional.none()]", self.str_expr(d)),
        }
    }

    /// Runs `body` with two fresh iteration variables (`k, v` of a two-variable macro); only
    /// the second, the element or value, is offered to `body` (the first may be an index).
    fn scoped2(&mut self, body: impl FnOnce(&mut Self) -> String) -> (String, String) {
        let index = format!("i{}", self.next_var);
        let (var, text) = self.scoped(body);
        (format!("{index}, {var}"), text)
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

/// A random event within `bounds`: text of random or full length, attributes random or filling
/// the budget in one to four keys of adversarial shapes.
pub fn event_json(rng: &mut Rng, bounds: &EventBounds) -> Json {
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

/// One soundness case from a seed: a random filter, random bounds, and four events within
/// them (random and adversarial). `Err` describes a case whose metered cost exceeded the
/// estimate's max, with the filter and the event.
pub fn soundness_case(seed: u64) -> Result<(), String> {
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
    let source = FilterGen::new(&mut rng).bool_expr(depth);
    let env = Env::filter();
    let Ok(checked) = compile(&source, &env, &options) else {
        // Over the byte limit, or a generated shape the checker refuses: not this test's subject.
        return Ok(());
    };
    let estimate = estimate(&checked, &env, &options);
    let program = Program::from_checked(&checked).map_err(|d| format!("{source}: {d:?}"))?;
    for _ in 0..4 {
        let json = event_json(&mut rng, &bounds);
        let event = Event::from_value(&json, &bounds)
            .map_err(|e| format!("generated event out of bounds: {e}\n{json}"))?;
        let limits = Limits {
            cost: Some(estimate.cost.max),
            deadline: Duration::from_secs(3600),
            clock: Arc::new(ManualClock::new()),
            model: options.model,
        };
        let charged = match program.eval_event(&event, &limits) {
            Ok(evaluation) => evaluation.cost,
            Err(EvalError::Stopped(Stop::CostLimit { cost })) => {
                return Err(format!(
                    "metered cost {cost} exceeds the estimate {}..{}\nfilter: {source}\nevent: {json}",
                    estimate.cost.min, estimate.cost.max
                ));
            }
            Err(e) => e.cost(),
        };
        if charged > estimate.cost.max {
            return Err(format!(
                "charged {charged} > max {} for {source}\nevent: {json}",
                estimate.cost.max
            ));
        }
    }
    Ok(())
}

/// What the `cel` crate's interpreter (cel-rust) and ozcheck's evaluator disagree on, by design
/// or by a known defect of that crate; each entry is checked against the filter source.
/// `docs/decisions/0004-cel-rust-differences.md` explains them.
#[cfg(feature = "oracle")]
pub const KNOWN_INTERPRETER_DIFFERENCES: &[(&str, &str)] = &[];

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
    let ours = match program.eval_event(&event, &Limits::default()) {
        Ok(evaluation) => match evaluation.value {
            crate::eval::Value::Bool(b) => b,
            _ => return Ok(()),
        },
        Err(_) => return Ok(()),
    };
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
