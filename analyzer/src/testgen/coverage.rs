//! What a run of generated filters produced: how often each node kind, operator, macro and
//! literal kind occurs in the filters that compiled, and how often each entry of the overload
//! catalogue was selected with exactly its parameter types (not through `dyn`). The soundness
//! test prints this report and fails when an entry or a kind was never produced.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use crate::check::Checked;
use crate::check::functions::{Entry, catalogue};
use crate::syntax::{BinaryOp, ExprKind, Literal, MacroKind, UnaryOp};
use crate::types::Type;

/// Counts of produced node kinds and overloads.
#[derive(Clone, Debug)]
pub struct Coverage {
    entries: Vec<Entry>,
    /// Per catalogue entry: how many generated calls selected it exactly.
    pub overloads: Vec<u64>,
    /// Per node kind name (`Literal(string)`, `Binary(+)`, `Comprehension(map)`…).
    pub kinds: BTreeMap<String, u64>,
}

impl Default for Coverage {
    fn default() -> Self {
        Self::new()
    }
}

impl Coverage {
    /// Empty counts over the whole catalogue and every node kind.
    pub fn new() -> Self {
        let entries = catalogue();
        let kinds = all_kinds().into_iter().map(|k| (k, 0)).collect();
        Coverage {
            overloads: vec![0; entries.len()],
            entries,
            kinds,
        }
    }

    /// Counts one node kind by name (for shapes the checker refuses, such as messages).
    pub fn count_kind(&mut self, kind: &str) {
        *self.kinds.entry(kind.to_owned()).or_default() += 1;
    }

    /// Counts the nodes and calls of a compiled filter.
    pub fn count(&mut self, checked: &Checked) {
        let ast = &checked.ast;
        for node in ast.nodes() {
            let kind = kind_name(&node.kind);
            self.count_kind(&kind);
            let (name, member, operator, args): (&str, bool, bool, Vec<u32>) = match &node.kind {
                ExprKind::Call {
                    target,
                    function,
                    args,
                    ..
                } => (
                    function,
                    target.is_some(),
                    false,
                    target.iter().chain(args).copied().collect(),
                ),
                ExprKind::Binary { op, lhs, rhs } => (op.symbol(), false, true, vec![*lhs, *rhs]),
                ExprKind::Unary { op, operand } => {
                    let symbol = match op {
                        UnaryOp::Not => "!",
                        UnaryOp::Neg => "-_",
                    };
                    (symbol, false, true, vec![*operand])
                }
                ExprKind::Index { operand, index } => ("[]", false, true, vec![*operand, *index]),
                _ => continue,
            };
            let types: Vec<Type> = args
                .iter()
                .map(|&a| checked.types[a as usize].clone())
                .collect();
            for (i, entry) in self.entries.iter().enumerate() {
                if entry.name == name
                    && entry.operator == operator
                    && entry.matches_exactly(member, &types)
                {
                    self.overloads[i] += 1;
                }
            }
        }
    }

    /// The catalogue entries never produced, by label.
    pub fn missing_overloads(&self) -> Vec<String> {
        self.entries
            .iter()
            .zip(&self.overloads)
            .filter(|(_, n)| **n == 0)
            .map(|(e, _)| e.label())
            .collect()
    }

    /// The node kinds never produced.
    pub fn missing_kinds(&self) -> Vec<String> {
        self.kinds
            .iter()
            .filter(|(_, n)| **n == 0)
            .map(|(k, _)| k.clone())
            .collect()
    }

    /// The report: every node kind and every overload with its count.
    pub fn report(&self) -> String {
        let mut out = String::new();
        let _ = writeln!(out, "node kinds ({} kinds):", self.kinds.len());
        for (kind, n) in &self.kinds {
            let _ = writeln!(out, "  {n:>7}  {kind}");
        }
        let _ = writeln!(out, "overloads ({} entries):", self.entries.len());
        for (entry, n) in self.entries.iter().zip(&self.overloads) {
            let _ = writeln!(out, "  {n:>7}  {}", entry.label());
        }
        out
    }
}

/// The name a node kind is counted under.
fn kind_name(kind: &ExprKind) -> String {
    match kind {
        ExprKind::Literal(lit) => format!("Literal({})", literal_name(lit)),
        ExprKind::Ident { .. } => "Ident".to_owned(),
        ExprKind::Select { .. } => "Select".to_owned(),
        ExprKind::Has { .. } => "Has".to_owned(),
        ExprKind::Call { .. } => "Call".to_owned(),
        ExprKind::Unary { op, .. } => format!("Unary({})", op.symbol()),
        ExprKind::Binary { op, .. } => format!("Binary({})", op.symbol()),
        ExprKind::Conditional { .. } => "Conditional".to_owned(),
        ExprKind::Index { .. } => "Index".to_owned(),
        ExprKind::List { .. } => "List".to_owned(),
        ExprKind::OptSelect { .. } => "OptSelect".to_owned(),
        ExprKind::OptIndex { .. } => "OptIndex".to_owned(),
        ExprKind::Map(_) => "Map".to_owned(),
        ExprKind::Struct { .. } => "Struct".to_owned(),
        ExprKind::Comprehension(c) => format!("Comprehension({})", c.kind.name()),
    }
}

fn literal_name(lit: &Literal) -> &'static str {
    match lit {
        Literal::Null => "null",
        Literal::Bool(_) => "bool",
        Literal::Int(_) => "int",
        Literal::Uint(_) => "uint",
        Literal::Double(_) => "double",
        Literal::String(_) => "string",
        Literal::Bytes(_) => "bytes",
    }
}

/// Every node kind name, so that a kind never produced shows up with a zero count. The match
/// in `kind_name` and the lists here must grow together with the syntax.
fn all_kinds() -> Vec<String> {
    let literals = ["null", "bool", "int", "uint", "double", "string", "bytes"]
        .map(|l| format!("Literal({l})"));
    let unary = [UnaryOp::Not, UnaryOp::Neg].map(|op| format!("Unary({})", op.symbol()));
    let binary = [
        BinaryOp::And,
        BinaryOp::Or,
        BinaryOp::Eq,
        BinaryOp::Ne,
        BinaryOp::Lt,
        BinaryOp::Le,
        BinaryOp::Gt,
        BinaryOp::Ge,
        BinaryOp::In,
        BinaryOp::Add,
        BinaryOp::Sub,
        BinaryOp::Mul,
        BinaryOp::Div,
        BinaryOp::Rem,
    ]
    .map(|op| format!("Binary({})", op.symbol()));
    let macros = [
        MacroKind::All,
        MacroKind::Exists,
        MacroKind::ExistsOne,
        MacroKind::Map,
        MacroKind::Filter,
    ]
    .map(|m| format!("Comprehension({})", m.name()));
    let plain = [
        "Ident",
        "Select",
        "Has",
        "Call",
        "Conditional",
        "Index",
        "List",
        "Map",
        "Struct",
    ]
    .map(str::to_owned);
    literals
        .into_iter()
        .chain(unary)
        .chain(binary)
        .chain(macros)
        .chain(plain)
        .collect()
}
