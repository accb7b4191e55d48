//! The static worst-case estimator: a `{min, max}` cost for every node of a checked expression,
//! with the max as a polynomial over the sizes of event parts, maximised over every event
//! within bounds. `docs/cost-model.md` derives each rule.

use super::calls;
use super::model::{CostModel, SizeModel};
use super::parts::{Part, Parts};
use super::poly::{Mono, Poly, Var};
use super::shape::{Shape, UNBOUNDED};
use super::table;
use crate::Options;
use crate::check::{Checked, Env};
use crate::syntax::{Ast, ExprKind, Literal, NodeId, Span};
use crate::types::Type;

mod access;
mod loops;
mod needs;
mod nodes;

/// Recursion deeper than this gives up on the subtree (an unbounded estimate), so hostile
/// nesting can never overflow the stack; the parser's own limit is far lower.
const MAX_DEPTH: u32 = 300;

/// The most extra passes over comprehension bodies one estimate spends on ranges of several
/// possible values (`loops.rs`, `comprehension_per_alternative`): each pass is one more walk of
/// a body, so this keeps an estimate linear in the expression's size.
const MAX_EXTRA_PASSES: usize = 32;

/// The most shapes one value's shape may hold ([`Shape::nodes`]); a larger one becomes
/// [`Shape::Unknown`] (`Walker::visit`).
const MAX_SHAPE_NODES: usize = 256;

/// The most terms, and the highest degree, of a bound inside a shape; past either the shape
/// becomes [`Shape::Unknown`] (`Walker::visit`), as a cost polynomial past the same is
/// coarsened (`Parts::coarsen`).
const MAX_BOUND_TERMS: usize = 48;
const MAX_BOUND_DEGREE: u32 = 12;

/// A `{min, max}` cost range in cost units.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct CostRange {
    /// Least cost of any evaluation.
    pub min: u64,
    /// Greatest cost of any evaluation over events within bounds.
    pub max: u64,
}

/// The estimate of one expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Estimate {
    /// The cost range of the whole expression.
    pub cost: CostRange,
    /// The estimate of each node, indexed by node id; `None` for nodes the estimator did not
    /// visit on their own (the parts of a qualified variable name).
    pub nodes: Vec<Option<NodeCost>>,
    /// The root node.
    pub root: NodeId,
    /// The size assumption behind the root's max, in words.
    pub assumption: String,
    /// How the estimate was derived (read by the witness builder).
    pub derivation: Derivation,
}

/// How an estimate was derived, for the witness builder: the parts of the event it reasons
/// about with the uses the expression makes of each, and the monomial of its largest term,
/// whose exponents say how the worst case splits a shared budget (AM-GM, docs/cost-model.md
/// §4).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Derivation {
    pub(crate) parts: Vec<Part>,
    pub(crate) worst: Mono,
}

/// The estimate of one node.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NodeCost {
    /// Least cost of one evaluation of the node (its whole sub-expression).
    pub min: u64,
    /// Greatest cost of one evaluation of the node over events within bounds.
    pub max: u64,
    /// How many times the node may be evaluated per evaluation of the whole expression (the
    /// product of the iteration bounds of the comprehensions it sits in).
    pub multiplier: u64,
    /// The size assumption this node introduces, if any (`event.text ≤ 16384 bytes`).
    pub assumption: Option<String>,
    /// The node's source bytes.
    pub span: Span,
    /// The children the estimator visited, in source order.
    pub children: Vec<NodeId>,
}

/// Estimates the cost of a checked expression in `env` under `options` (limit, event bounds,
/// cost model, size model). Never panics; unknown sizes give an unbounded (saturated) max.
pub fn estimate(checked: &Checked, env: &Env, options: &Options) -> Estimate {
    let ast = &checked.ast;
    let mut walker = walker(checked, env, options);
    let root = ast.root();
    let val = walker.visit(root);
    let max = units(walker.parts.maximize(&val.max));
    let assumption = walker.parts.describe_worst_case(&val.max);
    let derivation = Derivation {
        worst: walker.parts.dominant_term(&val.max).unwrap_or_default(),
        parts: walker.parts.all().to_vec(),
    };
    Estimate {
        cost: CostRange {
            min: val.min.min(max),
            max,
        },
        nodes: walker.nodes,
        root,
        assumption,
        derivation,
    }
}

fn walker<'a>(checked: &'a Checked, env: &'a Env, options: &Options) -> Walker<'a> {
    let ast = &checked.ast;
    Walker {
        ast,
        types: &checked.types,
        env,
        model: options.model,
        sizes: options.sizes,
        parts: {
            let mut parts = Parts::new(options.bounds, options.sizes);
            parts.share_linear = options.model.shares_linear_terms();
            parts
        },
        scopes: Vec::new(),
        multipliers: vec![(Poly::constant(1.0), 1)],
        summing: Vec::new(),
        ranges: Vec::new(),
        extra_passes: MAX_EXTRA_PASSES,
        body_reads_element: false,
        probe_body: false,
        nodes: vec![None; ast.len()],
        depth: 0,
        last_list_items: None,
        last_size: None,
    }
}

/// Converts a real upper bound of an integer-valued cost to whole units. Costs are integers,
/// so rounding down is sound; the small relative margin absorbs floating-point error.
pub(crate) fn units(x: f64) -> u64 {
    if x.is_nan() || x <= 0.0 {
        0
    } else if x >= UNBOUNDED {
        u64::MAX
    } else {
        (x * (1.0 + 1e-10) + 1e-9).floor() as u64
    }
}

/// What the walk knows about one node.
pub(crate) struct Val {
    /// Upper bound of the cost, symbolic in part sizes.
    pub(crate) max: Poly,
    /// Lower bound of the cost.
    pub(crate) min: u64,
    /// Bound on the value.
    pub(crate) shape: Shape,
}

impl Val {
    fn constant(cost: u64, shape: Shape) -> Self {
        Val {
            max: Poly::constant(cost as f64),
            min: cost,
            shape,
        }
    }
}

/// A loop over `lists.range(n)` whose variable, used bare as the index of a JSON list, names
/// an element the loop sums over (cost-model version 7, docs/cost-model.md §4).
struct RangeLoop {
    /// The positions in [`Walker::scopes`] of the variables it binds (the index and, in the
    /// two-variable form, the element: both are `i` at the `i`-th iteration).
    scopes: std::ops::Range<usize>,
    /// Its frame in [`Walker::summing`], which collects the elements it indexes.
    frame: usize,
}

pub(crate) struct Walker<'a> {
    ast: &'a Ast,
    /// The checker's type of every node.
    types: &'a [Type],
    env: &'a Env,
    pub(crate) model: CostModel,
    pub(crate) sizes: SizeModel,
    pub(crate) parts: Parts,
    scopes: Vec<(&'a str, Shape)>,
    /// The joint iteration bound of the comprehensions around the current node.
    multipliers: Vec<(Poly, u64)>,
    /// The element variables of the comprehensions around the current node that sum over
    /// their elements (outermost first), one frame per such comprehension: one element for a
    /// loop over a part, and for a loop over `lists.range(n)` (version 7) the elements its
    /// variable indexes, one per list, added as the body meets them.
    summing: Vec<Vec<Var>>,
    /// The loops over `lists.range(n)` around the current node whose variable indexes a list
    /// as an element the loop sums over (version 7), innermost last.
    ranges: Vec<RangeLoop>,
    /// How many more passes over comprehension bodies the per-alternative rule may spend
    /// ([`MAX_EXTRA_PASSES`] per estimate); past it, alternatives are merged.
    extra_passes: usize,
    /// Whether the body of the loop priced last costs more on a larger element (a term of its
    /// per-element cost in the element's size): where it does not, pricing numbers and the rest
    /// apart (version 10, `loops.rs`) cannot lower the figure, and is not tried.
    body_reads_element: bool,
    /// Set just before the loop of [`Walker::body_reads_element`] is priced whole, so that only
    /// that loop (not every loop, nor the loops inside its body) works it out.
    probe_body: bool,
    nodes: Vec<Option<NodeCost>>,
    depth: u32,
    /// The element shapes of the list literal visited last, in order (read by `format` on a
    /// literal pattern, whose argument is visited last).
    last_list_items: Option<Vec<Shape>>,
    /// The operand of the `size` call visited last and a bound of its value (read by
    /// `lists.range(size(x))`, whose argument is visited last; version 7).
    last_size: Option<(NodeId, Option<Poly>)>,
}

impl Walker<'_> {
    /// How deep the innermost summing loop whose element holds a variable of `p` sits: 1 for
    /// the outermost loop around the current node, 0 when no such loop holds any of `p`'s
    /// variables.
    pub(crate) fn loop_depth(&self, p: &Poly) -> usize {
        p.vars()
            .into_iter()
            .filter_map(|v| {
                self.summing
                    .iter()
                    .rposition(|xs| xs.iter().any(|x| self.parts.encloses(*x, v)))
                    .map(|i| i + 1)
            })
            .max()
            .unwrap_or(0)
    }

    /// The checker's type of a node (`dyn` when the checker left none).
    fn static_type(&self, id: NodeId) -> &Type {
        self.types.get(id as usize).unwrap_or(&Type::Dyn)
    }

    fn visit(&mut self, id: NodeId) -> Val {
        if self.depth >= MAX_DEPTH {
            return Val {
                max: Poly::constant(UNBOUNDED),
                min: 0,
                shape: Shape::Unknown,
            };
        }
        self.depth += 1;
        let (mut val, assumption) = self.visit_kind(id);
        self.depth -= 1;
        // A shape that holds another twice (`{dyn(x): x}`, `[x, {'k': x}]`) doubles at every
        // step of a chain of `map`s; past a bounded size nothing is kept of it (a value of any
        // shape: sound, and such a filter is refused), so an estimate stays linear in the
        // expression.
        // Likewise a bound that grows in degree at every step (`split(' ').join(',')` repeated:
        // the parts of a join of parts of a join …) is let go past the size the cost's own
        // polynomials are kept to (`Parts::coarsen`).
        if val.shape.nodes(MAX_SHAPE_NODES + 1) > MAX_SHAPE_NODES
            || val.shape.has_large_bound(MAX_BOUND_TERMS, MAX_BOUND_DEGREE)
        {
            val.shape = Shape::Unknown;
        }
        let max = self.parts.coarsen(val.max);
        let multiplier = self.multipliers.last().map_or(1, |(_, n)| *n);
        let max_units = units(self.parts.maximize(&max));
        self.nodes[id as usize] = Some(NodeCost {
            min: val.min.min(max_units),
            max: max_units,
            multiplier,
            assumption,
            span: self.ast.span(id),
            children: self
                .ast
                .kind(id)
                .children()
                .into_iter()
                .filter(|c| self.nodes[*c as usize].is_some())
                .collect(),
        });
        Val { max, ..val }
    }

    /// The estimate of one node, dispatched to the function of its kind (those live in
    /// `nodes.rs` and `loops.rs`, so this frame, paid at every level, stays small).
    fn visit_kind(&mut self, id: NodeId) -> (Val, Option<String>) {
        let ast = self.ast;
        match ast.kind(id) {
            ExprKind::Literal(lit) => (Val::constant(table::CONST, literal_shape(lit)), None),
            ExprKind::Ident { name, rooted } => (
                Val::constant(table::SELECT, self.resolve(name, *rooted)),
                None,
            ),
            ExprKind::Select { operand, field, .. } => self.visit_select(id, *operand, field),
            ExprKind::Has { operand, .. } => {
                let op = self.visit(*operand);
                (add_cost(&op, table::SELECT, Shape::Scalar), None)
            }
            ExprKind::OptSelect { .. } | ExprKind::OptIndex { .. } => {
                (self.optional_access(id), None)
            }
            ExprKind::Index { operand, index } => {
                let val = self.visit_index(*operand, *index);
                let assumption = self.describe_shape(&val.shape);
                (val, assumption)
            }
            ExprKind::Call {
                target,
                function,
                args,
                ..
            } => (self.visit_call(*target, function, args), None),
            ExprKind::Unary { operand, .. } => {
                let op = self.visit(*operand);
                (add_cost(&op, table::CALL, Shape::Scalar), None)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.visit(*lhs);
                let r = self.visit(*rhs);
                (calls::binary(self, *op, &l, &r), None)
            }
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => (self.visit_conditional(*cond, *then, *otherwise), None),
            ExprKind::List {
                items,
                optional_indices,
            } => (self.visit_list(items, optional_indices.len()), None),
            ExprKind::Map(entries) => (self.visit_map(entries), None),
            ExprKind::Struct { fields, .. } => (self.visit_struct(fields), None),
            ExprKind::Comprehension(c) => self.comprehension(c),
        }
    }

    /// `a.?f` and `a[?i]`: priced as a selection and an index, and the optional they may build
    /// (`ALLOC_PER_OPTIONAL`). An optional's shape is the shape of the value it may hold (an
    /// empty one holds nothing to size). (Kept out of `visit_kind`, whose frame every level of
    /// the recursion pays.)
    fn optional_access(&mut self, id: NodeId) -> Val {
        let made = self.model.optional_alloc() as f64;
        match self.ast.kind(id) {
            ExprKind::OptIndex { operand, index } => {
                let val = self.visit_index(*operand, *index);
                Val {
                    max: val.max.add_const(made),
                    ..val
                }
            }
            ExprKind::OptSelect { operand, field, .. } => {
                let op = self.visit(*operand);
                let shape = self.select(&op.shape, field);
                let val = add_cost(&op, table::SELECT, shape);
                Val {
                    max: val.max.add_const(made),
                    ..val
                }
            }
            _ => Val::constant(0, Shape::Unknown),
        }
    }
}

fn add_cost(val: &Val, cost: u64, shape: Shape) -> Val {
    Val {
        max: val.max.add_const(cost as f64),
        min: val.min.saturating_add(cost),
        shape,
    }
}

/// The compiled size of the pattern of a `matches` call whose pattern is a literal, as the
/// evaluator's program compiles it (an invalid one has been refused by the checker).
fn constant_pattern(
    ast: &Ast,
    function: &str,
    target: Option<NodeId>,
    args: &[NodeId],
) -> Option<u64> {
    let pattern = match (function, target, args) {
        ("matches", Some(_), [p]) | ("matches", None, [_, p]) => *p,
        _ => return None,
    };
    match ast.kind(pattern) {
        ExprKind::Literal(Literal::String(text)) => {
            Some(crate::regex::compiled_size(text).unwrap_or(table::REGEX_MAX_SIZE))
        }
        _ => None,
    }
}

/// The value of an int literal (`-1` included).
fn int_literal(ast: &Ast, id: NodeId) -> Option<i64> {
    match ast.kind(id) {
        ExprKind::Literal(Literal::Int(i)) => Some(*i),
        ExprKind::Unary {
            op: crate::syntax::UnaryOp::Neg,
            operand,
        } => match ast.kind(*operand) {
            ExprKind::Literal(Literal::Int(i)) => i.checked_neg(),
            _ => None,
        },
        _ => None,
    }
}

fn literal_shape(lit: &Literal) -> Shape {
    match lit {
        Literal::String(s) => Shape::str_const(s.len() as u64),
        Literal::Bytes(b) => Shape::str_const(b.len() as u64),
        _ => Shape::Scalar,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::check::Reference;
    use crate::syntax::{Node, UnaryOp};
    use crate::types::Type;

    /// Nesting deeper than the estimator's own limit (the parser refuses it far earlier, so the
    /// tree is built by hand) gives an unbounded estimate rather than a stack overflow.
    #[test]
    fn deep_trees_give_up_instead_of_overflowing() {
        let mut nodes = vec![Node {
            kind: ExprKind::Literal(Literal::Bool(true)),
            span: Span::new(0, 4),
        }];
        for i in 0..(MAX_DEPTH + 10) {
            nodes.push(Node {
                kind: ExprKind::Unary {
                    op: UnaryOp::Not,
                    operand: i,
                },
                span: Span::new(0, 4),
            });
        }
        let ast = Ast::from_nodes(nodes).expect("nodes");
        let n = ast.len();
        let checked = Checked {
            ast,
            types: vec![Type::Dyn; n],
            refs: vec![Reference::None; n],
        };
        let e = estimate(&checked, &Env::filter(), &Options::default());
        assert_eq!(e.cost.max, u64::MAX);
    }

    /// The shape of the value of `source` (a filter's subexpression), as the estimator builds
    /// it.
    fn shape_of(source: &str) -> Shape {
        let filter = format!("({source}).size() >= 0");
        let checked = crate::compile(&filter, &Env::filter(), &Options::default())
            .unwrap_or_else(|d| panic!("{source}: {d:?}"));
        let ExprKind::Binary { lhs, .. } = checked.ast.kind(checked.ast.root()) else {
            panic!("not a comparison");
        };
        let ExprKind::Call {
            target: Some(list), ..
        } = checked.ast.kind(*lhs)
        else {
            panic!("not a size");
        };
        let env = Env::filter();
        let options = Options::default();
        let mut w = walker(&checked, &env, &options);
        w.visit(*list).shape
    }

    /// A chain of `map`s whose body holds its variable twice in different shapes doubles the
    /// shape at every step: past [`MAX_SHAPE_NODES`] it is unknown, so an estimate stays
    /// linear in the expression (without the bound, 20 steps of `{dyn(x): x}` took 16 s and
    /// 40 did not end).
    #[test]
    fn shapes_that_double_down_a_chain_stay_bounded() {
        for body in ["{dyn(x): x}", "[x, {'k': x}]", "x + x", "[x, [x]]"] {
            let chain = format!(".map(x, {body})").repeat(14);
            let source = format!("event.attributes.a{chain}");
            let shape = shape_of(&source);
            assert!(
                shape.nodes(MAX_SHAPE_NODES + 1) <= MAX_SHAPE_NODES,
                "{source}: {} shapes",
                shape.nodes(usize::MAX)
            );
        }
        // A bound whose degree grows at every step: the parts of a join of the parts of a join.
        let joins = format!("event.text{}", ".split(' ').join(',')".repeat(10));
        let shape = shape_of(&format!("{joins}.split(' ')"));
        assert!(
            !shape.has_large_bound(MAX_BOUND_TERMS, MAX_BOUND_DEGREE),
            "{joins}: {shape:?}"
        );
        // A short chain keeps what it knows.
        let short = shape_of("event.attributes.a.map(x, {dyn(x): x}).map(y, [y, {'k': y}])");
        assert!(!matches!(short, Shape::Unknown), "{short:?}");
    }

    #[test]
    fn units_round_down_with_a_margin() {
        assert_eq!(units(302.0), 302);
        assert_eq!(units(301.999_999_999_99), 302);
        assert_eq!(units(302.4), 302);
        assert_eq!(units(f64::NAN), 0);
        assert_eq!(units(1e30), u64::MAX);
    }
}
