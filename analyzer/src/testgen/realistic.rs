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
