//! The type checker: gives every node a type, resolves identifiers against an [`Env`], and
//! reports unknown names, fields and functions with "did you mean" help.
//!
//! Diagnostic codes: `unknown-variable`, `unknown-field`, `unknown-function`,
//! `no-matching-overload`, `not-iterable`, `unknown-type`, `invalid-regex` (a literal pattern
//! `matches` would refuse), `wrong-result-type` (a filter that is not a `bool`, a `sender` that
//! is not a `string`), and `unsupported-syntax` for optional syntax or a macro form whose
//! extension the environment does not enable. An unknown function that an extension provides
//! says which one.
//!
//! The walk recurses once per AST level; the parser bounds the depth
//! ([`crate::syntax::ParseOptions::max_depth`]), so the stack use is bounded too.

mod access;
mod comprehension;
mod env;
pub(crate) mod functions;
mod messages;
pub mod suggest;

use std::sync::Arc;

pub use env::{Env, EnvKind, Expected, SizeHint, StepDecl, StepKind, VarDecl, event_type};

pub(crate) use functions::namespaced;

use crate::Diagnostic;
use crate::extensions::Extension;
use crate::syntax::{Ast, BinaryOp, ExprKind, Literal, MapEntry, NodeId, Span, UnaryOp};
use crate::types::Type;
use functions::{
    Overload, available, compatible, join, missing_extension, operator_overloads, overloads,
    resolve,
};

/// What an identifier or qualified name resolved to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Reference {
    /// Not a name (or not resolved).
    None,
    /// A declared variable, by index into [`Env::vars`].
    Var(u32),
    /// The iteration variable of an enclosing comprehension (the node id of that comprehension).
    IterVar(u32),
    /// A type name used as a value (`int`, `google.protobuf.Timestamp`).
    TypeName(Type),
}

/// A checked expression: the AST plus a type and a reference per node (indexed by node id).
#[derive(Clone, Debug)]
pub struct Checked {
    /// The parsed expression.
    pub ast: Ast,
    /// The type of each node.
    pub types: Vec<Type>,
    /// What each identifier or select chain resolved to.
    pub refs: Vec<Reference>,
}

impl Checked {
    /// The type of the whole expression.
    pub fn result_type(&self) -> &Type {
        &self.types[self.ast.root() as usize]
    }
}

/// Type-checks `ast` in `env`. Returns the checked expression, or every error found.
pub fn check(ast: Ast, env: &Env) -> Result<Checked, Vec<Diagnostic>> {
    let n = ast.len();
    let mut checker = Checker {
        ast: &ast,
        env,
        types: vec![Type::Error; n],
        refs: vec![Reference::None; n],
        scopes: Vec::new(),
        diagnostics: Vec::new(),
        has_dotted_vars: env.vars().iter().any(|v| v.name.contains('.')),
    };
    let result = checker.visit(ast.root());
    if checker.diagnostics.is_empty() {
        if let Some(wrong) = messages::wrong_result(&result, env, ast.span(ast.root())) {
            checker.diagnostics.push(wrong);
        }
    }
    let Checker {
        types,
        refs,
        diagnostics,
        ..
    } = checker;
    if diagnostics.is_empty() {
        Ok(Checked { ast, types, refs })
    } else {
        Err(diagnostics)
    }
}

/// Names usable as type values (`optional_type` only where optional types are enabled).
fn type_name(name: &str, env: &Env) -> Option<Type> {
    if name == "optional_type" && env.extensions().contains(Extension::Optional) {
        return Some(Type::optional(Type::Dyn));
    }
    Some(match name {
        "bool" => Type::Bool,
        "int" => Type::Int,
        "uint" => Type::Uint,
        "double" => Type::Double,
        "string" => Type::String,
        "bytes" => Type::Bytes,
        "null_type" => Type::Null,
        "list" => Type::list(Type::Dyn),
        "map" => Type::map(Type::Dyn, Type::Dyn),
        "type" => Type::Type(None),
        "dyn" => Type::Dyn,
        "google.protobuf.Timestamp" => Type::Timestamp,
        "google.protobuf.Duration" => Type::Duration,
        _ => return None,
    })
}

struct Scope {
    name: Box<str>,
    comprehension: NodeId,
    ty: Type,
}

struct Checker<'a> {
    ast: &'a Ast,
    env: &'a Env,
    types: Vec<Type>,
    refs: Vec<Reference>,
    scopes: Vec<Scope>,
    diagnostics: Vec<Diagnostic>,
    has_dotted_vars: bool,
}

impl Checker<'_> {
    fn visit(&mut self, id: NodeId) -> Type {
        let ty = self.visit_kind(id);
        self.types[id as usize] = ty.clone();
        ty
    }

    fn visit_kind(&mut self, id: NodeId) -> Type {
        let ast = self.ast;
        let span = ast.span(id);
        match ast.kind(id) {
            ExprKind::Literal(lit) => literal_type(lit),
            ExprKind::Ident { name, rooted } => self.ident(id, name, *rooted, span),
            ExprKind::Select {
                operand,
                field,
                field_span,
            } => {
                if let Some(ty) = self.qualified(id) {
                    return ty;
                }
                let operand_ty = self.visit(*operand);
                self.select(&operand_ty, field, *field_span)
            }
            ExprKind::OptSelect {
                operand,
                field,
                field_span,
            } => {
                self.require_optional(span, "`a.?b` (optional field selection)");
                let operand_ty = self.visit(*operand);
                self.opt_select(&operand_ty, field, *field_span)
            }
            ExprKind::Has {
                operand,
                field,
                field_span,
            } => {
                let operand_ty = self.visit(*operand);
                self.select(&operand_ty, field, *field_span);
                Type::Bool
            }
            ExprKind::Call {
                target,
                function,
                name_span,
                args,
            } => self.call(id, *target, function, *name_span, args),
            ExprKind::Unary { op, operand } => {
                let ty = self.visit(*operand);
                let symbol = match op {
                    UnaryOp::Not => "!",
                    UnaryOp::Neg => "-_",
                };
                self.operator(span, symbol, operator_overloads(symbol), &[ty])
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let l = self.visit(*lhs);
                let r = self.visit(*rhs);
                self.binary(span, *op, l, r)
            }
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            } => {
                let c = self.visit(*cond);
                if !compatible(&Type::Bool, &c) {
                    self.error(
                        "no-matching-overload",
                        ast.span(*cond),
                        format!("the condition of `? :` must be a bool, not {c}"),
                        "not a bool",
                    );
                }
                let t = self.visit(*then);
                let f = self.visit(*otherwise);
                if !compatible(&t, &f) {
                    self.diagnostics.push(messages::branches_disagree(
                        &t,
                        &f,
                        ast.span(*otherwise),
                    ));
                    return Type::Error;
                }
                join(&t, &f)
            }
            ExprKind::Index { operand, index } => {
                let o = self.visit(*operand);
                let i = self.visit(*index);
                self.index(span, &o, &i, *index)
            }
            ExprKind::OptIndex { operand, index } => {
                self.require_optional(span, "`a[?i]` (optional index)");
                let o = self.visit(*operand);
                let i = self.visit(*index);
                self.opt_index(span, &o, &i, *index)
            }
            ExprKind::List {
                items,
                optional_indices,
            } => self.list(items, optional_indices),
            ExprKind::Map(entries) => self.map(entries),
            ExprKind::Struct { type_name, fields } => {
                for field in fields {
                    self.visit(field.value);
                }
                self.diagnostics.push(
                    Diagnostic::error(
                        "unknown-type",
                        span,
                        format!("unknown message type `{type_name}`"),
                    )
                    .with_label("no such type")
                    .with_help("message types are not available in this environment; use a map literal `{'field': value}`"),
                );
                Type::Error
            }
            ExprKind::Comprehension(comp) => self.comprehension(id, comp),
        }
    }

    fn error(&mut self, code: &'static str, span: Span, message: String, label: &str) {
        self.diagnostics
            .push(Diagnostic::error(code, span, message).with_label(label));
    }

    fn ident(&mut self, id: NodeId, name: &str, rooted: bool, span: Span) -> Type {
        if !rooted {
            if let Some(scope) = self.scopes.iter().rev().find(|s| &*s.name == name) {
                self.refs[id as usize] = Reference::IterVar(scope.comprehension);
                return scope.ty.clone();
            }
        }
        if let Some(index) = self.env.vars().iter().position(|v| &*v.name == name) {
            self.refs[id as usize] = Reference::Var(index as u32);
            return self.env.vars()[index].ty.clone();
        }
        if let Some(ty) = type_name(name, self.env) {
            self.refs[id as usize] = Reference::TypeName(ty.clone());
            return Type::Type(Some(Arc::new(ty)));
        }
        self.unknown_variable(name, span);
        Type::Error
    }

    fn unknown_variable(&mut self, name: &str, span: Span) {
        let visible: Vec<&str> = self
            .scopes
            .iter()
            .map(|s| &*s.name)
            .chain(self.env.vars().iter().map(|v| &*v.name))
            .collect();
        self.diagnostics.push(messages::unknown_variable(
            name,
            span,
            &visible,
            self.env.kind(),
        ));
    }

    /// `[a, ?b]`: the element type joins every element's type (an optional element's inner
    /// type).
    fn list(&mut self, items: &[NodeId], optional_indices: &[u32]) -> Type {
        let mut elem = Type::Param(0);
        for (i, &item) in items.iter().enumerate() {
            let mut ty = self.visit(item);
            if optional_indices.contains(&(i as u32)) {
                ty = self.optional_entry(item, ty, "`[?x]` (optional list element)");
            }
            elem = join(&elem, &ty);
        }
        Type::list(elem)
    }

    /// `{k: v, ?k2: v2}`: keys must be bools, ints, uints or strings.
    fn map(&mut self, entries: &[MapEntry]) -> Type {
        let (mut key, mut value) = (Type::Param(0), Type::Param(0));
        for entry in entries {
            let k = self.visit(entry.key);
            let mut v = self.visit(entry.value);
            if entry.optional {
                v = self.optional_entry(entry.value, v, "`{?k: v}` (optional map entry)");
            }
            let valid = matches!(
                k,
                Type::Bool
                    | Type::Int
                    | Type::Uint
                    | Type::String
                    | Type::Dyn
                    | Type::Error
                    | Type::Param(_)
            );
            if !valid {
                self.error(
                    "no-matching-overload",
                    self.ast.span(entry.key),
                    format!("a map key must be a bool, int, uint or string, not {k}"),
                    "not a valid key",
                );
            }
            // An invalid key is reported once: the map's key type then says nothing more
            // (`{x: x}` down a chain of `map`s would otherwise hold its operand twice at every
            // step).
            key = join(&key, if valid { &k } else { &Type::Error });
            value = join(&value, &v);
        }
        Type::map(key, value)
    }

    /// The value type an optional element or entry contributes: the inner type of its optional.
    fn optional_entry(&mut self, item: NodeId, ty: Type, what: &str) -> Type {
        let span = self.ast.span(item);
        self.require_optional(span, what);
        match ty {
            Type::Optional(inner) => (*inner).clone(),
            Type::Dyn | Type::Error | Type::Param(_) => ty,
            other => {
                self.error(
                    "no-matching-overload",
                    span,
                    format!("an element marked `?` must be an optional, not {other}"),
                    "not an optional",
                );
                Type::Error
            }
        }
    }

    /// Reports optional syntax in an environment without optional types.
    fn require_optional(&mut self, span: Span, what: &str) {
        self.require(
            Extension::Optional,
            span,
            &format!("optional syntax {what}"),
        );
    }

    /// Reports syntax or a macro form whose extension the environment does not enable.
    fn require(&mut self, extension: Extension, span: Span, what: &str) {
        if self.env.extensions().contains(extension) {
            return;
        }
        self.diagnostics
            .push(messages::extension_disabled(extension, span, what));
    }

    fn call(
        &mut self,
        id: NodeId,
        target: Option<NodeId>,
        function: &str,
        name_span: Span,
        args: &[NodeId],
    ) -> Type {
        let qualified = namespaced(self.ast, target, function);
        let (target, function) = match &qualified {
            Some(name) => (None, name.as_str()),
            None => (target, function),
        };
        let mut types = Vec::with_capacity(args.len() + 1);
        if let Some(target) = target {
            types.push(self.visit(target));
        }
        for arg in args {
            types.push(self.visit(*arg));
        }
        let enabled = self.env.extensions();
        let Some(overloads) = overloads(function).filter(|o| available(o, enabled)) else {
            self.diagnostics
                .push(messages::unknown_function(function, name_span, enabled));
            return Type::Error;
        };
        if types.contains(&Type::Error) {
            return Type::Error;
        }
        if function == "matches" {
            self.constant_pattern(target, args);
        }
        if let Some(ty) = resolve(overloads, target.is_some(), &types, enabled) {
            return ty;
        }
        let span = self.ast.span(id);
        let shown = messages::describe_call(function, target.is_some(), &types);
        let help = match missing_extension(overloads, target.is_some(), &types) {
            Some(extension) => messages::enable_help(extension, &shown),
            None => messages::signatures(function, overloads),
        };
        self.diagnostics.push(
            Diagnostic::error(
                "no-matching-overload",
                span,
                format!("no overload of `{function}` accepts {shown}"),
            )
            .with_label("wrong argument types")
            .with_help(help),
        );
        Type::Error
    }

    /// A `matches` pattern written as a literal is compiled now, under the evaluator's limits,
    /// so that a pattern the program would refuse is refused here in the same words.
    fn constant_pattern(&mut self, target: Option<NodeId>, args: &[NodeId]) {
        let pattern = match (target, args) {
            (Some(_), [p]) | (None, [_, p]) => *p,
            _ => return,
        };
        let refused = match self.ast.kind(pattern) {
            ExprKind::Literal(Literal::String(text)) => crate::regex::compiled_size(text).err(),
            // A pattern computed from constants alone is the same at every run: folded now.
            ExprKind::Literal(_) => None,
            _ => match crate::eval::constant_value(self.ast, pattern) {
                Some(crate::eval::Value::String(text)) => crate::regex::compiled_size(&text).err(),
                _ => None,
            },
        };
        if let Some(refused) = refused {
            self.diagnostics
                .push(refused.diagnostic(self.ast.span(pattern)));
        }
    }

    fn binary(&mut self, span: Span, op: BinaryOp, l: Type, r: Type) -> Type {
        let symbol = op.symbol();
        if matches!(op, BinaryOp::Eq | BinaryOp::Ne)
            && (matches!(l, Type::Null) || matches!(r, Type::Null))
        {
            // Anything may be compared with null (it is simply unequal to non-null values).
            return Type::Bool;
        }
        self.operator(span, symbol, operator_overloads(symbol), &[l, r])
    }

    fn operator(
        &mut self,
        span: Span,
        lookup: &str,
        overloads: &[Overload],
        args: &[Type],
    ) -> Type {
        let symbol = lookup.trim_end_matches('_');
        if args.contains(&Type::Error) {
            return Type::Error;
        }
        if let Some(ty) = resolve(overloads, false, args, self.env.extensions()) {
            return ty;
        }
        let shown = args
            .iter()
            .map(ToString::to_string)
            .collect::<Vec<_>>()
            .join(", ");
        let (message, help) = match symbol {
            "==" | "!=" => (
                format!(
                    "`{symbol}` compares values of one type, not {} and {}",
                    args[0], args[1]
                ),
                "values of different types are never equal; convert one side (`string(…)`, `int(…)`, `double(…)`) or wrap it in `dyn(…)`".to_owned(),
            ),
            "[]" => (
                format!("cannot index {shown}"),
                "index a list with an int, a map with a key of its key type".to_owned(),
            ),
            _ => (
                format!("no overload of `{symbol}` accepts ({shown})"),
                format!("`{symbol}` is defined for {}", messages::operand_kinds(lookup)),
            ),
        };
        self.diagnostics.push(
            Diagnostic::error("no-matching-overload", span, message)
                .with_label("wrong operand types")
                .with_help(help),
        );
        Type::Error
    }
}

fn literal_type(lit: &Literal) -> Type {
    match lit {
        Literal::Null => Type::Null,
        Literal::Bool(_) => Type::Bool,
        Literal::Int(_) => Type::Int,
        Literal::Uint(_) => Type::Uint,
        Literal::Double(_) => Type::Double,
        Literal::String(_) => Type::String,
        Literal::Bytes(_) => Type::Bytes,
    }
}
