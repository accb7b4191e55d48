//! The CEL abstract syntax tree: an arena of nodes, each with the byte span of its whole
//! sub-expression.
//!
//! Nodes live in one `Vec` and refer to each other by [`NodeId`]. The parser creates every
//! child before its parent, so a child's id is always smaller than its parent's and the root is
//! the last node. Later passes (checker, estimator) keep per-node data in side tables indexed by
//! the same id, which keeps the tree itself immutable and cheap to share.
//!
//! Macros (`has`, `all`, `exists`, `exists_one`, `map`, `filter`, their two-variable forms,
//! `transformList`, `transformMap`, `transformMapEntry`, `sortBy`, `optMap`, `optFlatMap`) are
//! first-class nodes rather than cel-go's expanded comprehensions: the estimator and the
//! diagnostics reason about the macro the user wrote, not about an accumulator they never saw.
//! Optional syntax (`a.?b`, `a[?i]`, `[?x]`, `{?k: v}`) is first-class too.

use std::fmt;

/// Index of a node in its [`Ast`].
pub type NodeId = u32;

/// A half-open byte range `start..end` into the expression source.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    /// First byte of the range.
    pub start: u32,
    /// One past the last byte of the range.
    pub end: u32,
}

impl Span {
    /// A span from `start` to `end` (exclusive).
    pub const fn new(start: u32, end: u32) -> Self {
        Self { start, end }
    }

    /// The smallest span covering both `self` and `other`.
    #[must_use]
    pub fn to(self, other: Span) -> Span {
        Span::new(self.start.min(other.start), self.end.max(other.end))
    }

    /// Length in bytes.
    pub fn len(self) -> u32 {
        self.end - self.start
    }

    /// Whether the span covers no byte.
    pub fn is_empty(self) -> bool {
        self.end == self.start
    }
}

impl From<Span> for miette::SourceSpan {
    fn from(span: Span) -> Self {
        miette::SourceSpan::new((span.start as usize).into(), span.len() as usize)
    }
}

/// A parsed expression.
#[derive(Clone, Debug, PartialEq)]
pub struct Ast {
    nodes: Vec<Node>,
}

impl Ast {
    /// Builds an AST from nodes in creation order (children before parents); the last node is
    /// the root. Returns `None` for an empty node list.
    pub fn from_nodes(nodes: Vec<Node>) -> Option<Self> {
        if nodes.is_empty() {
            None
        } else {
            Some(Self { nodes })
        }
    }

    /// The root node's id.
    pub fn root(&self) -> NodeId {
        (self.nodes.len() - 1) as NodeId
    }

    /// The node with this id.
    ///
    /// Ids come from this AST; an id from another AST may panic.
    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id as usize]
    }

    /// The kind of the node with this id.
    pub fn kind(&self, id: NodeId) -> &ExprKind {
        &self.nodes[id as usize].kind
    }

    /// The span of the node with this id.
    pub fn span(&self, id: NodeId) -> Span {
        self.nodes[id as usize].span
    }

    /// All nodes, children before parents.
    pub fn nodes(&self) -> &[Node] {
        &self.nodes
    }

    /// Number of nodes.
    pub fn len(&self) -> usize {
        self.nodes.len()
    }

    /// Always false: an AST has at least its root.
    pub fn is_empty(&self) -> bool {
        self.nodes.is_empty()
    }
}

/// One node: what it is and the bytes it covers (the whole sub-expression, including the
/// parentheses of a parenthesised operand and the closing bracket of a call).
#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    /// What the node is.
    pub kind: ExprKind,
    /// Byte range of the whole sub-expression.
    pub span: Span,
}

/// The kinds of expression.
#[derive(Clone, Debug, PartialEq)]
pub enum ExprKind {
    /// A literal value.
    Literal(Literal),
    /// An identifier: `name`, or `.name` when `rooted` (resolved from the root scope only).
    Ident {
        /// The identifier without any leading dot.
        name: Box<str>,
        /// Whether it was written with a leading `.`.
        rooted: bool,
    },
    /// A field selection `operand.field` (backtick-quoted field names arrive without backticks).
    Select {
        /// The selected-from expression.
        operand: NodeId,
        /// The field name.
        field: Box<str>,
        /// Span of the field name as written (backticks included).
        field_span: Span,
    },
    /// An optional field selection `operand.?field`: an optional of the field's value, empty
    /// when the field or key is absent.
    OptSelect {
        /// The selected-from expression.
        operand: NodeId,
        /// The field name.
        field: Box<str>,
        /// Span of the field name as written (backticks included).
        field_span: Span,
    },
    /// The presence test `has(operand.field)`.
    Has {
        /// The selected-from expression.
        operand: NodeId,
        /// The field name.
        field: Box<str>,
        /// Span of the field name as written.
        field_span: Span,
    },
    /// A function call, global (`f(x)`) or receiver-style (`x.f(y)`).
    Call {
        /// The receiver of a member call.
        target: Option<NodeId>,
        /// The function name, possibly qualified (`a.b.f` written as a global call).
        function: Box<str>,
        /// Span of the function name.
        name_span: Span,
        /// Arguments in order.
        args: Vec<NodeId>,
    },
    /// A unary operator.
    Unary {
        /// Which operator.
        op: UnaryOp,
        /// The operand.
        operand: NodeId,
    },
    /// A binary operator (`&&` and `||` included; they short-circuit).
    Binary {
        /// Which operator.
        op: BinaryOp,
        /// Left operand.
        lhs: NodeId,
        /// Right operand.
        rhs: NodeId,
    },
    /// `cond ? then : otherwise`.
    Conditional {
        /// The condition.
        cond: NodeId,
        /// Value when the condition is true.
        then: NodeId,
        /// Value when the condition is false.
        otherwise: NodeId,
    },
    /// `operand[index]`.
    Index {
        /// The indexed list or map.
        operand: NodeId,
        /// The index or key.
        index: NodeId,
    },
    /// An optional index `operand[?index]`: an optional of the element, empty when the index or
    /// key is absent.
    OptIndex {
        /// The indexed list or map.
        operand: NodeId,
        /// The index or key.
        index: NodeId,
    },
    /// A list literal `[a, ?b]`.
    List {
        /// The elements in order.
        items: Vec<NodeId>,
        /// Positions (ascending) of the elements written `?x`: optionals whose value is added
        /// only when present.
        optional_indices: Vec<u32>,
    },
    /// A map literal `{k: v}`.
    Map(Vec<MapEntry>),
    /// A message literal `T{f: v}`.
    Struct {
        /// The message type name as written (possibly qualified, possibly with a leading dot).
        type_name: Box<str>,
        /// Field initialisers in order.
        fields: Vec<FieldInit>,
    },
    /// A comprehension macro: `range.all(var, …)`, `exists`, `exists_one`, `map`, `filter`.
    Comprehension(Box<Comprehension>),
}

impl ExprKind {
    /// Calls `f` with the id of every child, in source order (no allocation).
    pub fn for_each_child(&self, mut f: impl FnMut(NodeId)) {
        match self {
            ExprKind::Literal(_) | ExprKind::Ident { .. } => {}
            ExprKind::Select { operand, .. }
            | ExprKind::OptSelect { operand, .. }
            | ExprKind::Has { operand, .. }
            | ExprKind::Unary { operand, .. } => f(*operand),
            ExprKind::Call { target, args, .. } => {
                target.iter().copied().for_each(&mut f);
                args.iter().copied().for_each(f);
            }
            ExprKind::Binary { lhs, rhs, .. } => {
                f(*lhs);
                f(*rhs);
            }
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => {
                f(*cond);
                f(*then);
                f(*otherwise);
            }
            ExprKind::Index { operand, index } | ExprKind::OptIndex { operand, index } => {
                f(*operand);
                f(*index);
            }
            ExprKind::List { items, .. } => items.iter().copied().for_each(f),
            ExprKind::Map(entries) => entries.iter().for_each(|e| {
                f(e.key);
                f(e.value);
            }),
            ExprKind::Struct { fields, .. } => fields.iter().for_each(|field| f(field.value)),
            ExprKind::Comprehension(c) => {
                f(c.range);
                c.predicate.into_iter().for_each(&mut f);
                c.transform.into_iter().for_each(f);
            }
        }
    }

    /// The ids of the children, in source order.
    pub fn children(&self) -> Vec<NodeId> {
        let mut out = Vec::new();
        self.for_each_child(|c| out.push(c));
        out
    }
}

/// A literal constant, decoded exactly.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// `null`.
    Null,
    /// `true` or `false`.
    Bool(bool),
    /// A signed 64-bit integer.
    Int(i64),
    /// An unsigned 64-bit integer (`1u`).
    Uint(u64),
    /// A double.
    Double(f64),
    /// A string (already unescaped).
    String(Box<str>),
    /// A bytes literal (already unescaped).
    Bytes(Box<[u8]>),
}

/// Unary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// `!x`.
    Not,
    /// `-x`.
    Neg,
}

/// Binary operators.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    /// `||`
    Or,
    /// `&&`
    And,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `in`
    In,
    /// `+`
    Add,
    /// `-`
    Sub,
    /// `*`
    Mul,
    /// `/`
    Div,
    /// `%`
    Rem,
}

impl BinaryOp {
    /// The operator as written in source.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Or => "||",
            BinaryOp::And => "&&",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::In => "in",
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::Rem => "%",
        }
    }
}

impl UnaryOp {
    /// The operator as written in source.
    pub fn symbol(self) -> &'static str {
        match self {
            UnaryOp::Not => "!",
            UnaryOp::Neg => "-",
        }
    }
}

/// One `key: value` (or `?key: value`) entry of a map literal.
#[derive(Clone, Debug, PartialEq)]
pub struct MapEntry {
    /// The key expression.
    pub key: NodeId,
    /// The value expression.
    pub value: NodeId,
    /// Written `?key: value`: the value is an optional and the entry is added only when it is
    /// present.
    pub optional: bool,
}

/// One `field: value` initialiser of a message literal.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldInit {
    /// The field name (backticks removed).
    pub name: Box<str>,
    /// Span of the field name as written.
    pub name_span: Span,
    /// The value expression.
    pub value: NodeId,
    /// Written `?name: value`: the field is set only when the optional value is present.
    pub optional: bool,
}

/// Which comprehension macro.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum MacroKind {
    /// `range.all(x, predicate)`.
    All,
    /// `range.exists(x, predicate)`.
    Exists,
    /// `range.exists_one(x, predicate)` (also spelled `existsOne`).
    ExistsOne,
    /// `range.map(x, transform)` or `range.map(x, predicate, transform)`.
    Map,
    /// `range.filter(x, predicate)`.
    Filter,
    /// `range.transformList(i, v, [predicate,] transform)`: a list of the transformed entries.
    TransformList,
    /// `range.transformMap(k, v, [predicate,] transform)`: a map from the same keys (list
    /// indices) to the transformed values.
    TransformMap,
    /// `range.transformMapEntry(k, v, [predicate,] transform)`: a map merged from the one-entry
    /// maps the transform builds; a repeated key is an error.
    TransformMapEntry,
    /// `list.sortBy(x, key)`: the list sorted by the key each element maps to.
    SortBy,
    /// `opt.optMap(x, transform)`: an optional of the transformed value, empty when `opt` is.
    OptMap,
    /// `opt.optFlatMap(x, transform)`: the transform's optional, empty when `opt` is.
    OptFlatMap,
}

impl MacroKind {
    /// The macro's name as usually written.
    pub fn name(self) -> &'static str {
        match self {
            MacroKind::All => "all",
            MacroKind::Exists => "exists",
            MacroKind::ExistsOne => "exists_one",
            MacroKind::Map => "map",
            MacroKind::Filter => "filter",
            MacroKind::TransformList => "transformList",
            MacroKind::TransformMap => "transformMap",
            MacroKind::TransformMapEntry => "transformMapEntry",
            MacroKind::SortBy => "sortBy",
            MacroKind::OptMap => "optMap",
            MacroKind::OptFlatMap => "optFlatMap",
        }
    }

    /// Whether the macro runs its body once per element of the range, in order, with nothing
    /// that grows faster than the count of elements (no sorting, no map built from the
    /// results): `all`, `exists`, `exists_one`, `map`, `filter`, `transformList`.
    pub fn runs_once_per_element(self) -> bool {
        matches!(
            self,
            MacroKind::All
                | MacroKind::Exists
                | MacroKind::ExistsOne
                | MacroKind::Map
                | MacroKind::Filter
                | MacroKind::TransformList
        )
    }

    /// Whether the macro's result is a bool that may stop iterating early or not at all.
    pub fn is_quantifier(self) -> bool {
        matches!(
            self,
            MacroKind::All | MacroKind::Exists | MacroKind::ExistsOne
        )
    }
}

/// A comprehension macro over a list (its elements) or a map (its keys); with two variables,
/// over a list's indices and elements or a map's keys and values. `optMap` and `optFlatMap`
/// "iterate" over an optional: at most once, over its value.
#[derive(Clone, Debug, PartialEq)]
pub struct Comprehension {
    /// Which macro.
    pub kind: MacroKind,
    /// The iterated list, map or optional.
    pub range: NodeId,
    /// The iteration variable: the element or key, or, with two variables, the index or key.
    pub var: Box<str>,
    /// Span of the iteration variable.
    pub var_span: Span,
    /// The second variable of a two-variable comprehension (the list element or map value),
    /// with its span.
    pub var2: Option<(Box<str>, Span)>,
    /// The predicate: present for `all`, `exists`, `exists_one`, `filter`, and for the
    /// filtering forms of `map` and the `transform…` macros.
    pub predicate: Option<NodeId>,
    /// The transform: present for `map`, the `transform…` macros, `sortBy` (its key),
    /// `optMap` and `optFlatMap`.
    pub transform: Option<NodeId>,
}

impl fmt::Display for Literal {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Literal::Null => f.write_str("null"),
            Literal::Bool(b) => write!(f, "{b}"),
            Literal::Int(i) => write!(f, "{i}"),
            Literal::Uint(u) => write!(f, "{u}u"),
            Literal::Double(d) => write!(f, "{d:?}"),
            Literal::String(s) => write!(f, "{s:?}"),
            Literal::Bytes(b) => write!(f, "b{:?}", String::from_utf8_lossy(b)),
        }
    }
}
