//! The metered evaluator: runs a parsed (checked or not) expression over an [`Activation`],
//! charging every operation to a [`Meter`] before doing it.
//!
//! A [`Program`] is built once per expression: literals are turned into values, constant
//! `matches()` patterns are compiled (an invalid or oversized one is an `invalid-regex`
//! diagnostic), and qualified names are precomputed. It then evaluates any number of times,
//! typically over an [`Event`] bound once. Values dispatch dynamically, so an unchecked AST
//! evaluates too (cel-spec's `disable_check` tests).
//!
//! CEL errors are values that `&&`, `||` and `all`/`exists` may absorb; a [`Stop`] (cost limit or
//! deadline) is not, and ends the evaluation.

pub mod base64;
mod bulk;
mod event;
mod event_json;
mod format;
mod functions;
mod interp;
mod json;
mod lists;
mod loops;
mod map;
pub mod meter;
mod optional;
mod strings;
pub mod time;
mod value;

use std::sync::Arc;

pub use event::{Event, EventError, HEADER_FIELDS, MAX_NESTING};
pub use event_json::check_json;
pub use map::{Key, MapError, MapValue};
pub use meter::{
    Clock, FREE_NANOS_PER_BYTE, Limits, ManualClock, Meter, Stop, SystemClock, teardown,
};
pub use value::{ListValue, TypeValue, Value};

use crate::Diagnostic;
use crate::check::Checked;
use crate::regex::CelRegex;
use crate::syntax::{Ast, ExprKind, Literal, NodeId};

/// Deepest expression tree a program accepts; evaluation recurses once per level.
pub const MAX_DEPTH: u32 = 512;

/// Variables an evaluation sees: name (possibly dotted, `a.b.c`) to value.
#[derive(Clone, Debug, Default)]
pub struct Activation {
    vars: Vec<(Box<str>, Value)>,
    dotted: bool,
}

impl Activation {
    /// An empty activation.
    pub fn new() -> Self {
        Self::default()
    }

    /// The event environment: `event` bound to the shared event value (no copy).
    pub fn event(event: &Event) -> Self {
        let mut activation = Self::new();
        activation.bind("event", event.value().clone());
        activation
    }

    /// Binds (or rebinds) a variable.
    pub fn bind(&mut self, name: &str, value: Value) {
        self.dotted |= name.contains('.');
        if let Some(slot) = self.vars.iter_mut().find(|(n, _)| &**n == name) {
            slot.1 = value;
        } else {
            self.vars.push((name.into(), value));
        }
    }

    /// The value bound to a name.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.vars.iter().find(|(n, _)| &**n == name).map(|(_, v)| v)
    }

    /// Whether some bound name is dotted (qualified-name resolution is only tried then).
    pub fn has_dotted(&self) -> bool {
        self.dotted
    }
}

/// A completed evaluation.
#[derive(Clone, Debug)]
pub struct Evaluation {
    /// The result.
    pub value: Value,
    /// The cost charged, in units.
    pub cost: u64,
    /// The bytes counted against the memory cap (`cost::table::MEMORY_LIMIT`): never more than
    /// `cost::table::MAX_BYTES_PER_UNIT` a unit charged, in the full cost model.
    pub built: u64,
}

/// Why an evaluation produced no value.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum EvalError {
    /// Stopped by the cost limit or the deadline.
    #[error(transparent)]
    Stopped(#[from] Stop),
    /// A CEL runtime error (no such key, division by zero, no matching overload, …).
    #[error("{message}")]
    Runtime {
        /// What went wrong.
        message: String,
        /// The cost charged until then.
        cost: u64,
    },
}

impl EvalError {
    /// The cost charged before the evaluation ended.
    pub fn cost(&self) -> u64 {
        match self {
            EvalError::Stopped(
                Stop::CostLimit { cost } | Stop::Deadline { cost } | Stop::Memory { cost, .. },
            )
            | EvalError::Runtime { cost, .. } => *cost,
        }
    }
}

/// An expression prepared for repeated evaluation.
#[derive(Debug)]
pub struct Program {
    ast: Ast,
    /// The value of each literal node.
    consts: Vec<Option<Value>>,
    /// The compiled pattern of each `matches` call whose pattern is a literal.
    regexes: Vec<Option<Arc<CelRegex>>>,
    /// For a select chain `a.b.c` rooted in an identifier: the dotted name and the root ident.
    qualified: Vec<Option<(Box<str>, NodeId)>>,
    /// For a namespaced call (`optional.of(x)`, parsed as `of` on `optional`): its qualified
    /// name.
    namespaced: Vec<Option<Box<str>>>,
}

impl Program {
    /// Prepares an expression: compiles constant regexes and refuses over-deep trees.
    pub fn new(ast: Ast) -> Result<Program, Vec<Diagnostic>> {
        let n = ast.len();
        let mut consts = vec![None; n];
        let mut regexes = vec![None; n];
        let mut qualified: Vec<Option<(Box<str>, NodeId)>> = vec![None; n];
        let mut namespaced: Vec<Option<Box<str>>> = vec![None; n];
        let mut depth = vec![0u32; n];
        let mut diagnostics = Vec::new();
        for (i, node) in ast.nodes().iter().enumerate() {
            // Children come before parents; an AST built otherwise could loop or index out of
            // range, so it is refused here rather than trusted during evaluation.
            let mut d = 0;
            let mut well_formed = true;
            node.kind.for_each_child(|c| match depth.get(c as usize) {
                Some(&cd) if (c as usize) < i => d = d.max(cd),
                _ => well_formed = false,
            });
            if !well_formed {
                return Err(vec![Diagnostic::error(
                    "malformed-ast",
                    node.span,
                    "the expression tree refers to a node that is not one of its children",
                )]);
            }
            depth[i] = d + 1;
            match &node.kind {
                ExprKind::Literal(lit) => consts[i] = Some(literal_value(lit)),
                ExprKind::Select { operand, field, .. } => {
                    qualified[i] = match ast.kind(*operand) {
                        ExprKind::Ident { name, .. } => {
                            Some((format!("{name}.{field}").into(), *operand))
                        }
                        _ => qualified[*operand as usize]
                            .as_ref()
                            .map(|(q, root)| (format!("{q}.{field}").into(), *root)),
                    };
                }
                ExprKind::Call {
                    function, target, ..
                } if crate::check::namespaced(&ast, *target, function).is_some() => {
                    namespaced[i] =
                        crate::check::namespaced(&ast, *target, function).map(Into::into);
                }
                ExprKind::Call {
                    function,
                    args,
                    target,
                    ..
                } if &**function == "matches" => {
                    let pattern = match (target, args.as_slice()) {
                        (Some(_), [p]) | (None, [_, p]) => *p,
                        _ => continue,
                    };
                    if let ExprKind::Literal(Literal::String(text)) = ast.kind(pattern) {
                        match CelRegex::new(text) {
                            Ok(re) => regexes[i] = Some(Arc::new(re)),
                            Err(refused) => diagnostics.push(refused.diagnostic(ast.span(pattern))),
                        }
                    }
                }
                _ => {}
            }
        }
        if depth[ast.root() as usize] > MAX_DEPTH {
            diagnostics.push(Diagnostic::error(
                "expression-too-deep",
                ast.span(ast.root()),
                format!("the expression nests deeper than {MAX_DEPTH} levels"),
            ));
        }
        if !diagnostics.is_empty() {
            return Err(diagnostics);
        }
        Ok(Program {
            ast,
            consts,
            regexes,
            qualified,
            namespaced,
        })
    }

    /// Prepares a checked expression.
    pub fn from_checked(checked: &Checked) -> Result<Program, Vec<Diagnostic>> {
        Program::new(checked.ast.clone())
    }

    /// The expression.
    pub fn ast(&self) -> &Ast {
        &self.ast
    }

    /// Evaluates over `activation` within `limits`.
    pub fn eval(&self, activation: &Activation, limits: &Limits) -> Result<Evaluation, EvalError> {
        let mut interp = interp::Interp::new(self, activation, Meter::new(limits));
        let result = interp.eval(self.ast.root());
        let cost = interp.meter.cost();
        let built = interp.meter.built();
        match result {
            Ok(value) => Ok(Evaluation { value, cost, built }),
            Err(interp::Fault::Stop(stop)) => Err(EvalError::Stopped(stop)),
            Err(interp::Fault::Error(message)) => Err(EvalError::Runtime {
                message: message.into_string(),
                cost,
            }),
        }
    }

    /// Evaluates a filter over one event (binds `event` only).
    pub fn eval_event(&self, event: &Event, limits: &Limits) -> Result<Evaluation, EvalError> {
        self.eval(&Activation::event(event), limits)
    }
}

/// Cost units a constant sub-expression may take to be folded at check time.
const FOLD_COST: u64 = 100_000;

/// The value of the sub-expression `id` of `ast` when it reads nothing (no identifier: no
/// variable, iteration variable or namespace), evaluated with nothing bound under a small cost
/// limit; `None` when it reads something, fails or costs more. The checker folds `matches`
/// patterns with it, so that `'(' + ''` is refused as the literal `'('` is.
pub(crate) fn constant_value(ast: &Ast, id: NodeId) -> Option<Value> {
    fn closed(ast: &Ast, id: NodeId) -> bool {
        if matches!(
            ast.kind(id),
            ExprKind::Ident { .. } | ExprKind::Comprehension(_)
        ) {
            return false;
        }
        let mut all = true;
        ast.kind(id).for_each_child(|c| all = all && closed(ast, c));
        all
    }
    if !closed(ast, id) {
        return None;
    }
    let program = Program::new(ast.clone()).ok()?;
    let limits = Limits {
        cost: Some(FOLD_COST),
        deadline: std::time::Duration::from_secs(3600),
        clock: Arc::new(ManualClock::new()),
        model: crate::cost::CostModel::default(),
        ..Limits::with_clock_of(Arc::new(ManualClock::new()))
    };
    let activation = Activation::new();
    let mut interp = interp::Interp::new(&program, &activation, Meter::new(&limits));
    interp.eval(id).ok()
}

fn literal_value(lit: &Literal) -> Value {
    match lit {
        Literal::Null => Value::Null,
        Literal::Bool(b) => Value::Bool(*b),
        Literal::Int(i) => Value::Int(*i),
        Literal::Uint(u) => Value::Uint(*u),
        Literal::Double(d) => Value::Double(*d),
        Literal::String(s) => Value::string(s),
        Literal::Bytes(b) => Value::Bytes(Arc::from(&**b)),
    }
}

#[cfg(test)]
mod tests;
