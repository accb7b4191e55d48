//! The realistic filter generator: the shapes plugin authors write (comparisons of headers and
//! attributes, string tests, loops over attribute lists), for the differential test against
//! the `cel` crate, which knows only the common part of the language.

use super::{KEYS, Rng};

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
