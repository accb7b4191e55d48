//! Hostile filters and events for the `hostile` fuzz target, its test and its runner (feature
//! `testgen`): expressions drawn from the whole grammar, typed or not (every operator, literal
//! kind, macro, conversion and function, with shapes that amplify work: doubling, nested
//! comprehensions, long literals), `matches` patterns drawn from the whole RE2 syntax (classes,
//! Unicode properties, case folding, counted repetitions up to past RE2's limit), used as
//! literals and read from the event, and events that fill their bounds with what such filters
//! feed on.
//!
//! Choices come from the input bytes one at a time (a fuzzer steers them); past the end every
//! choice is 0, the smallest leaf, so every input gives a finite case.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Map, Value as Json, json};

use crate::eval::{EvalError, Event, Limits, Program, Stop, SystemClock};
use crate::syntax::{self, ParseOptions};
use crate::{EventBounds, Options, Verdict, check_filter};

/// The deadline every hostile evaluation runs under, as on the edge.
pub const DEADLINE: Duration = Duration::from_millis(250);

/// Choices read from bytes; 0 once they run out.
pub struct Choices<'a> {
    data: &'a [u8],
    at: usize,
}

impl<'a> Choices<'a> {
    /// Choices from `data`.
    pub fn new(data: &'a [u8]) -> Self {
        Choices { data, at: 0 }
    }

    fn byte(&mut self) -> u8 {
        let b = self.data.get(self.at).copied().unwrap_or(0);
        self.at += 1;
        b
    }

    /// A number below `n` (0 when `n` is 0).
    pub fn below(&mut self, n: usize) -> usize {
        if n <= 1 {
            return 0;
        }
        let wide = if n > 256 {
            usize::from(self.byte()) << 8 | usize::from(self.byte())
        } else {
            usize::from(self.byte())
        };
        wide % n
    }

    fn pick<'s>(&mut self, items: &[&'s str]) -> &'s str {
        items[self.below(items.len())]
    }

    fn exhausted(&self) -> bool {
        self.at >= self.data.len()
    }
}

const COUNTS: &[&str] = &[
    "0", "1", "2", "3", "10", "30", "100", "120", "500", "999", "1000", "1001", "5000",
];
const ATOMS: &[&str] = &[
    "a",
    "b",
    "ñ",
    "é",
    "K",
    ".",
    "\\.",
    "[a-z]",
    "[^a]",
    "[a-zA-Z0-9_]",
    "[[:alpha:]]",
    "[^[:space:]]",
    "\\d",
    "\\w",
    "\\s",
    "\\D",
    "\\W",
    "\\S",
    "\\pL",
    "\\p{Greek}",
    "\\PN",
    "\\p{Any}",
    "\\p{Lu}",
    "[\\p{L}\\p{N}]",
    "\\x{10FFFF}",
    "\\Q*+\\E",
    "\\n",
    "\\t",
];
const ANCHORS: &[&str] = &["^", "$", "\\b", "\\B", "\\A", "\\z", "(?m)^", "(?s)."];
const FLAGS: &[&str] = &["(?i)", "(?i:", "(?U)", "(?is)", "(?-i)"];

/// A pattern from the RE2 grammar, at most `budget` bytes (roughly).
pub fn pattern(c: &mut Choices<'_>, depth: u32, budget: usize) -> String {
    let mut out = String::new();
    let parts = 1 + c.below(6);
    for _ in 0..parts {
        if out.len() >= budget {
            break;
        }
        let piece = match c.below(10) {
            0 if depth > 0 => {
                let inner = pattern(c, depth - 1, budget / 2);
                let other = pattern(c, depth - 1, budget / 4);
                format!("(?:{inner}|{other})")
            }
            1 if depth > 0 => format!("({})", pattern(c, depth - 1, budget / 2)),
            2 if depth > 0 => {
                let flag = c.pick(FLAGS);
                let inner = pattern(c, depth - 1, budget / 2);
                if flag.ends_with(':') {
                    format!("{flag}{inner})")
                } else {
                    format!("{flag}{inner}")
                }
            }
            3 => c.pick(ANCHORS).to_owned(),
            _ => c.pick(ATOMS).to_owned(),
        };
        out.push_str(&piece);
        if c.below(3) != 0 {
            let repeat = match c.below(9) {
                0 => "*".to_owned(),
                1 => "+".to_owned(),
                2 => "?".to_owned(),
                3 => "*?".to_owned(),
                4 => format!("{{{}}}", c.pick(COUNTS)),
                5 => format!("{{{},}}", c.pick(COUNTS)),
                _ => format!("{{{},{}}}", c.pick(COUNTS), c.pick(COUNTS)),
            };
            // Wrap so a repetition applies to the whole piece.
            out = format!("(?:{out}){repeat}");
        }
    }
    out
}

/// A CEL string literal for `text` (raw, so backslashes stay; `'` never occurs in patterns).
fn raw_literal(text: &str) -> String {
    format!("r'{}'", text.replace('\'', ""))
}

/// Expressions over `event` from the whole grammar, within a byte budget.
struct ExprGen<'c, 'd> {
    c: &'c mut Choices<'d>,
    vars: Vec<&'static str>,
}

const LEAVES: &[&str] = &[
    "event.text",
    "event.subject",
    "event.attributes",
    "event.attributes.pats",
    "event.attributes.nums",
    "event.attributes.strs",
    "event.attributes.deep",
    "event.attributes.k",
    "event",
    "0",
    "-9223372036854775808",
    "9223372036854775807",
    "18446744073709551615u",
    "1.7976931348623157e308",
    "-0.0",
    "''",
    "'aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa'",
    "'ñ'",
    "b'\\xff\\x00'",
    "true",
    "null",
    "[]",
    "{}",
    "'2024-01-01T00:00:00Z'",
    "'1h'",
    "'NaN'",
    "'9999-12-31T23:59:59.999999999Z'",
];
const BINARY: &[&str] = &[
    "+", "+", "+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=", "&&", "||", "in",
];
const CALLS: &[&str] = &[
    "size",
    "string",
    "int",
    "uint",
    "double",
    "bytes",
    "bool",
    "dyn",
    "type",
    "timestamp",
    "duration",
];
const METHODS: &[&str] = &["contains", "startsWith", "endsWith", "matches"];
const TIME_PARTS: &[&str] = &[
    "getFullYear()",
    "getMonth('America/New_York')",
    "getDayOfYear()",
    "getHours('+05:30')",
    "getMilliseconds()",
    "getSeconds()",
];
const MACROS: &[&str] = &["all", "exists", "exists_one", "map", "filter"];
/// `format` patterns: every clause, the widest precisions, several uses of the arguments.
const FORMATS: &[&str] = &[
    "'%s'",
    "'%s%s%s'",
    "'%.100f'",
    "'%.100e'",
    "'%d %x %X %o %b'",
    "'%s %s %s %s %s %s %s %s'",
    "'%f'",
];
const MAX_SOURCE: usize = 1024;

impl ExprGen<'_, '_> {
    fn leaf(&mut self) -> String {
        if !self.vars.is_empty() && self.c.below(3) == 0 {
            return self.vars[self.c.below(self.vars.len())].to_owned();
        }
        self.c.pick(LEAVES).to_owned()
    }

    fn expr(&mut self, depth: u32) -> String {
        if depth == 0 || self.c.exhausted() {
            return self.leaf();
        }
        let d = depth - 1;
        match self.c.below(19) {
            0 => self.leaf(),
            1 => format!(
                "{}({})",
                ["!", "-", "!!", "--"][self.c.below(4)],
                self.expr(d)
            ),
            2 | 3 => {
                let op = self.c.pick(BINARY);
                format!("({} {op} {})", self.expr(d), self.expr(d))
            }
            4 => format!("({} ? {} : {})", self.expr(d), self.expr(d), self.expr(d)),
            5 => {
                let n = 1 + self.c.below(8);
                let items: Vec<String> = (0..n).map(|_| self.expr(d)).collect();
                format!("[{}]", items.join(", "))
            }
            6 => format!("{{{}: {}}}", self.expr(d), self.expr(d)),
            7 => format!("{}[{}]", self.expr(d), self.expr(d)),
            8 => format!("{}({})", self.c.pick(CALLS), self.expr(d)),
            9 => self.method(d),
            10 | 11 => self.comprehension(d),
            12 => self.amplifier(d),
            13 => format!("has({}.k)", self.expr(d)),
            14 => format!("{}.{}", self.expr(d), self.c.pick(TIME_PARTS)),
            15 => format!("{}.size()", self.expr(d)),
            _ => self.extension(d),
        }
    }

    /// A function, macro or piece of syntax of the extension libraries the default environment
    /// enables (strings, lists, sets, optional types, two-variable comprehensions).
    fn extension(&mut self, d: u32) -> String {
        let a = self.expr(d);
        match self.c.below(26) {
            0 => format!(
                "{a}.{}()",
                self.c
                    .pick(&["lowerAscii", "upperAscii", "trim", "reverse"])
            ),
            1 => format!("{a}.replace({}, {})", self.expr(d), self.expr(d)),
            2 => format!(
                "{a}.replace({}, {}, {})",
                self.expr(d),
                self.expr(d),
                self.expr(d)
            ),
            3 => format!("{a}.split({})", self.expr(d)),
            4 => format!("{a}.join({})", self.expr(d)),
            5 => format!("{a}.substring({}, {})", self.expr(d), self.expr(d)),
            6 => {
                let f = self
                    .c
                    .pick(&["charAt", "indexOf", "lastIndexOf", "join", "split"]);
                format!("{a}.{f}({})", self.expr(d))
            }
            7 | 8 => format!("{}.format({a})", self.c.pick(FORMATS)),
            9 => format!("strings.quote({a})"),
            10 => format!(
                "{a}.{}()",
                self.c
                    .pick(&["sort", "distinct", "flatten", "first", "last"])
            ),
            11 => {
                let var = self.var();
                self.vars.push(var);
                let key = self.expr(d);
                self.vars.pop();
                format!("{a}.sortBy({var}, {key})")
            }
            12 => format!("{a}.slice({}, {})", self.expr(d), self.expr(d)),
            13 => format!("{a}.flatten({})", self.expr(d)),
            14 => format!("lists.range({a})"),
            15 => {
                let f = self.c.pick(&["contains", "equivalent", "intersects"]);
                format!("sets.{f}({a}, {})", self.expr(d))
            }
            16 => format!("{a}.?k.orValue({})", self.expr(d)),
            17 => format!("{a}[?{}].orValue({})", self.expr(d), self.expr(d)),
            18 => format!("[?optional.of({a}), ?optional.none()]"),
            19 => format!(
                "optional.ofNonZeroValue({a}).optMap(o, {}).hasValue()",
                self.expr(d)
            ),
            _ => self.two_variables(&a, d),
        }
    }

    /// `all`, `exists` and `existsOne` over two variables, and the transform macros.
    fn two_variables(&mut self, range: &str, d: u32) -> String {
        let (first, second) = (self.var(), ["v", "w", "u"][self.vars.len().min(2)]);
        let name = self.c.pick(&[
            "all",
            "exists",
            "existsOne",
            "transformList",
            "transformMap",
            "transformMapEntry",
        ]);
        self.vars.push(first);
        self.vars.push(second);
        let body = if name == "transformMapEntry" {
            format!("{{{}: {}}}", self.expr(d), self.expr(d))
        } else {
            self.expr(d)
        };
        let out = if name.starts_with("transform") && self.c.below(2) == 0 {
            let keep = self.expr(d);
            format!("{range}.{name}({first}, {second}, {keep}, {body})")
        } else {
            format!("{range}.{name}({first}, {second}, {body})")
        };
        self.vars.truncate(self.vars.len() - 2);
        out
    }

    /// The name of the next iteration variable.
    fn var(&self) -> &'static str {
        ["x", "y", "z"][self.vars.len().min(2)]
    }

    fn method(&mut self, d: u32) -> String {
        let name = self.c.pick(METHODS);
        let argument = if name == "matches" {
            match self.c.below(4) {
                0 => "event.subject".to_owned(),
                1 => "event.text".to_owned(),
                2 => self.expr(d),
                _ => {
                    let p = pattern(self.c, 3, 200);
                    raw_literal(&p)
                }
            }
        } else {
            self.expr(d)
        };
        format!("{}.{name}({argument})", self.expr(d))
    }

    fn comprehension(&mut self, d: u32) -> String {
        let var = ["x", "y", "z"][self.vars.len().min(2)];
        let range = self.expr(d);
        let name = self.c.pick(MACROS);
        self.vars.push(var);
        let body = self.expr(d);
        let out = if name == "map" && self.c.below(2) == 0 {
            let pred = self.expr(d);
            format!("{range}.map({var}, {pred}, {body})")
        } else {
            format!("{range}.{name}({var}, {body})")
        };
        self.vars.pop();
        out
    }

    /// Shapes that multiply work or size: doubling chains, comprehensions over big ranges,
    /// patterns from the event applied in loops.
    fn amplifier(&mut self, d: u32) -> String {
        match self.c.below(15) {
            0 => {
                let n = 1 + self.c.below(12);
                let mut s = format!("[{}]", self.expr(d));
                for _ in 0..n {
                    s = format!("{s}.map(x, x + x)");
                }
                s
            }
            1 => "event.attributes.pats.exists(p, event.text.matches(p))".to_owned(),
            2 => "event.attributes.nums.map(x, event.attributes.nums.map(y, [x, y])) \
                  == event.attributes.nums.map(x, event.attributes.nums.map(y, [x, y]))"
                .to_owned(),
            3 => format!(
                "event.attributes.strs.map(s, {}).exists(v, v in event.attributes.strs)",
                self.expr(d)
            ),
            4 => "event.text.matches(event.subject)".to_owned(),
            // Many references to a few long built strings: each comparison of a sort or a
            // membership test reads megabytes.
            5 => format!(
                "[event.text + event.text + event.text].all(a, [a + a + a].all(b, \
                 lists.range({}).map(i, i % 2 == 0 ? b + 'a' : b + 'b').{}))",
                self.c.pick(&["1000", "50000", "100000"]),
                self.c.pick(&[
                    "sort().size() > 0",
                    "sortBy(s, s).size() > 0",
                    "distinct().size() > 0",
                    "join('').size() > 0",
                    "exists(s, s == b)",
                ])
            ),
            // Numbers that print long: `%s` of `1e308` is 309 digits.
            6 => format!(
                "{}.format([event.attributes.nums, event.attributes.nums]).size() > 0",
                self.c.pick(FORMATS)
            ),
            // Key-heavy shapes: long keys built from the text, looked up (`in`, `[k]`, `[?k]`)
            // in a map of long keys that share their prefix with it, many times.
            7 => {
                let keys: Vec<String> = (0..=self.c.below(8))
                    .map(|i| format!("event.text + '{i}': {i}"))
                    .collect();
                format!(
                    "[{{{}}}].all(m, lists.range({}).all(i, {}))",
                    keys.join(", "),
                    self.c.pick(&["1000", "100000", "230000"]),
                    self.c.pick(&[
                        "event.text in m",
                        "!(event.text + 'x' in m)",
                        "m[?event.text].orValue(0) == 0",
                        "has(m.k) || (event.text + '0') in m",
                    ])
                )
            }
            // Map literals of long keys built in a loop: the check for repeated keys and the
            // index compare them.
            8 => {
                let n = 2 + self.c.below(8);
                let keys: Vec<String> = (0..n).map(|i| format!("event.text + '{i}'")).collect();
                let entries: Vec<String> = (0..n).map(|i| format!("ks[{i}]: {i}")).collect();
                format!(
                    "[[{}]].all(ks, lists.range({}).all(i, {{{}}}.size() == {n}))",
                    keys.join(", "),
                    self.c.pick(&["100", "10000", "50000"]),
                    entries.join(", ")
                )
            }
            // Many keys: maps built from a loop, then looked up with keys from the text.
            9 => format!(
                "lists.range({}).transformMapEntry(i, v, {{{} + string(v): v}}).exists(k, {})",
                self.c.pick(&["100", "2000", "20000"]),
                self.c.pick(&["event.text", "event.subject", "'k'"]),
                self.c.pick(&[
                    "k in event.attributes",
                    "event.attributes[?k].hasValue()",
                    "k == event.text",
                ])
            ),
            // A list read at the indices of a long range (cost-model version 7 sums the
            // elements its variable reaches over the list), beside other indices of it.
            10 => format!(
                "lists.range({}).{}(i, {})",
                self.c.pick(&["100", "4096", "100000", "size(event.attributes.strs)", "size(event.text)"]),
                self.c.pick(&["exists", "all", "exists_one"]),
                self.c.pick(&[
                    "event.text.contains(event.attributes.strs[i])",
                    "event.attributes.strs[i] + event.text == event.attributes.strs[i + 1]",
                    "lists.range(4096).exists(j, event.attributes.strs[i] == event.attributes.strs[j])",
                    "event.attributes.nums[i] == event.attributes.strs[i]",
                    "event.attributes.strs[i].matches(event.subject)",
                ])
            ),
            // A filter over the parts of a split that keeps only parts of some least size
            // (cost-model version 8 counts those), and what iterates the kept parts.
            11 => format!(
                "event.text.split({}).filter(w, {}).{}",
                self.c.pick(&["' '", "''", "'a'", "'é'", "event.subject"]),
                self.c.pick(&[
                    "w.startsWith('#')",
                    "w.size() > 3",
                    "w != ''",
                    "w == 'é' || w.endsWith('a')",
                    "w.contains('K') && size(w) >= 2",
                ]),
                self.c.pick(&[
                    "map(w, w + w).exists(t, t == 'x')",
                    "map(w, w + w + event.text).exists(t, t in event.text.split(' '))",
                    "size() > 0",
                    "all(t, t.size() > 1)",
                    "filter(t, t.size() > 5).map(t, t.substring(1)).size() > 0",
                ])
            ),
            // An `all` over such parts whose predicate cannot fail goes on only past parts it
            // holds on.
            12 => format!(
                "event.text.split({}).all(w, {})",
                self.c.pick(&["' '", "''", "'a'", "event.subject"]),
                self.c.pick(&[
                    "w.size() > 2",
                    "w.startsWith('#') || w.size() >= 5",
                    "w != '' && w.endsWith(' ')",
                ])
            ),
            // A loop that stops at its body's first error over a list of small objects (or of
            // strings, or numbers, on which the body fails): cost-model version 9 counts only
            // the elements the body can run on, each as large as what it selects needs.
            13 => format!(
                "event.attributes.{}.{}",
                self.c.pick(&["objs", "objs", "strs", "nums"]),
                self.c.pick(&[
                    "map(o, o.a + o.a).exists(t, t == 'x')",
                    "filter(o, o.a.size() > 0).map(o, o.a + event.text).exists(t, t in event.text.split(' '))",
                    "map(o, o.a.matches(event.subject)).exists(t, t)",
                    "filter(o, o.size() > 0).map(o, o + o).size() > 0",
                    "sortBy(o, o.a).size() > 0",
                    "exists_one(o, event.text.contains(o.a))",
                    "map(o, event.text.contains(o.a) ? o.a : event.text).exists(t, t == 'x')",
                    // Every element the same object: its needs say nothing of the range's
                    // bytes (the black-box attack on version 9).
                    "map(o, event.attributes.objs[0]).map(p, p.a + event.text).size() > 0",
                ])
            ),
            _ => {
                let p = pattern(self.c, 3, 300);
                format!(
                    "(event.text + event.text + event.text).matches({})",
                    raw_literal(&p)
                )
            }
        }
    }
}

/// A hostile expression of at most 1024 bytes (the filter limit) from `c`.
pub fn expression(c: &mut Choices<'_>) -> String {
    let depth = 1 + c.below(5) as u32;
    let mut generator = ExprGen {
        c,
        vars: Vec::new(),
    };
    let source = generator.expr(depth);
    if source.len() > MAX_SOURCE {
        // Too long for a filter: keep a prefix that is a whole expression where possible.
        return generator.leaf();
    }
    source
}

/// An event at the default bounds, filled with what hostile filters feed on.
pub fn event(c: &mut Choices<'_>) -> Json {
    let bounds = EventBounds::DEFAULT;
    let unit = match c.below(7) {
        0 => "a".to_owned(),
        1 => "aaaaaaaaaaaaaaab".to_owned(),
        2 => "ñé K_9 ".to_owned(),
        3 => pattern(c, 2, 64),
        // The parts a filter over a split keeps, as many as fit.
        4 => "#a ".to_owned(),
        5 => "éa ".to_owned(),
        _ => "\\w{30}(?i)\\pL".to_owned(),
    };
    let text = fill(&unit, bounds.text as usize);
    let subject = {
        let p = pattern(c, 4, 240);
        truncate(&p, bounds.header_field as usize).to_owned()
    };
    let mut pats = Vec::new();
    for _ in 0..=c.below(12) {
        pats.push(Json::String(pattern(c, 3, 120)));
    }
    let mut attributes = Map::new();
    attributes.insert("pats".into(), Json::Array(pats));
    attributes.insert("k".into(), Json::String(unit.clone()));
    attributes.insert("deep".into(), nested(32));
    attributes.insert("strs".into(), Json::Array(vec![]));
    attributes.insert("nums".into(), Json::Array(vec![]));
    attributes.insert("objs".into(), Json::Array(vec![]));
    let budget = bounds.attributes as usize;
    while compact(&Json::Object(attributes.clone())) > budget {
        if let Some(Json::Array(p)) = attributes.get_mut("pats") {
            p.pop();
        }
    }
    // Pour the rest of the attribute budget into the list a choice favours: each element adds
    // its own bytes and a comma (the first no comma).
    let key = match c.below(3) {
        0 => "nums",
        1 => "strs",
        _ => "objs",
    };
    let (item, item_len) = match (key, c.below(2)) {
        ("nums", 0) => (json!(7), 1),
        // The number with the longest `%s` text per byte of JSON: `1e308`, 309 digits.
        ("nums", _) => (json!(1e308), 5),
        // The smallest object a body selecting `a` runs on.
        ("objs", _) => (json!({"a": "é"}), 10),
        _ => (json!("a"), 3),
    };
    let room = budget.saturating_sub(compact(&Json::Object(attributes.clone())));
    let count = (room + 1) / (item_len + 1);
    attributes.insert(key.into(), Json::Array(vec![item; count]));
    json!({"id": "1", "source": "s", "type": "t", "action": "opened",
           "subject": subject, "text": text, "attributes": attributes})
}

fn compact(json: &Json) -> usize {
    serde_json::to_string(json).map_or(usize::MAX, |s| s.len())
}

fn fill(unit: &str, bytes: usize) -> String {
    let mut out = String::with_capacity(bytes);
    while out.len() + unit.len() <= bytes && !unit.is_empty() {
        out.push_str(unit);
    }
    out
}

fn truncate(s: &str, bytes: usize) -> &str {
    let mut end = s.len().min(bytes);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

fn nested(levels: usize) -> Json {
    (0..levels).fold(json!(1), |inner, _| json!([inner]))
}

/// What one hostile case did.
#[derive(Debug)]
pub struct Outcome {
    /// The expression.
    pub source: String,
    /// The longest evaluation of the case, by the real clock.
    pub elapsed: Duration,
    /// How each evaluation ended (`value`, `error`, `cost`, `deadline`, `memory`).
    pub ends: Vec<&'static str>,
}

fn run(program: &Program, event: &Event, limits: &Limits) -> (Duration, &'static str) {
    let started = Instant::now();
    let result = program.eval_event(event, limits);
    let elapsed = started.elapsed();
    let end = match result {
        Ok(_) => "value",
        Err(EvalError::Runtime { .. }) => "error",
        Err(EvalError::Stopped(Stop::CostLimit { .. })) => "cost",
        Err(EvalError::Stopped(Stop::Deadline { .. })) => "deadline",
        Err(EvalError::Stopped(Stop::Memory { .. })) => "memory",
    };
    (elapsed, end)
}

/// One hostile case from `data`: the expression is evaluated over the event with the cost limit
/// off (the deadline alone) and on, by the real clock; when the static check accepts it, the
/// evaluation at that limit must not stop on cost (the estimate bounds the charge).
///
/// Returns what happened (the caller judges the elapsed time: tests may not), or why the case
/// failed.
pub fn hostile_case(data: &[u8]) -> Result<Outcome, String> {
    hostile_case_freeing_at(data, crate::eval::FREE_NANOS_PER_BYTE)
}

/// [`hostile_case`] with the evaluations reserving `free_nanos_per_byte` before their deadline
/// for freeing what they built ([`Limits::free_nanos_per_byte`]): a build that frees more slowly
/// than a release build, such as the fuzz build, passes what it measured.
///
/// # Errors
/// As [`hostile_case`].
pub fn hostile_case_freeing_at(data: &[u8], free_nanos_per_byte: u64) -> Result<Outcome, String> {
    let mut c = Choices::new(data);
    let source = expression(&mut c);
    let json = event(&mut c);
    let event = Event::from_value(&json, &EventBounds::DEFAULT)
        .map_err(|e| format!("generated event out of bounds: {e}"))?;
    let mut outcome = Outcome {
        source: source.clone(),
        elapsed: Duration::ZERO,
        ends: Vec::new(),
    };
    let Ok(program) = syntax::parse(&source, &ParseOptions::default()).and_then(Program::new)
    else {
        return Ok(outcome);
    };
    let clock = Arc::new(SystemClock::new());
    let accepted = check_filter(&source, &Options::default()).verdict == Verdict::Accepted;
    for cost in [None, Some(crate::cost::table::DEFAULT_COST_LIMIT)] {
        let limits = Limits::default()
            .with_cost(cost)
            .with_deadline(DEADLINE)
            .with_clock(clock.clone())
            .with_free_nanos_per_byte(free_nanos_per_byte);
        let (elapsed, end) = run(&program, &event, &limits);
        outcome.elapsed = outcome.elapsed.max(elapsed);
        outcome.ends.push(end);
        if cost.is_some() && accepted && end == "cost" {
            return Err(format!(
                "accepted by the static check, stopped on cost\nfilter: {source}\nevent: {json}"
            ));
        }
        // Memory follows cost: an accepted filter's estimate buys at most
        // `MAX_BYTES_PER_UNIT · DEFAULT_COST_LIMIT` bytes, under the cap, with or without the
        // cost limit.
        if accepted && end == "memory" {
            return Err(format!(
                "accepted by the static check, stopped on memory\nfilter: {source}\nevent: {json}"
            ));
        }
    }
    Ok(outcome)
}
