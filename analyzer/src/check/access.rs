//! Field selection and indexing, plain and optional: `a.f`, `a.?f`, `a[i]`, `a[?i]`, the
//! dotted names a select chain may spell, and the viral optionals of cel-go (once a chain
//! holds an optional, every later selection and index is optional too).

use std::sync::Arc;

use super::functions::{compatible, operator_overloads};
use super::{Checker, Reference, messages, type_name};
use crate::syntax::{ExprKind, Literal, NodeId, Span};
use crate::types::{ObjectType, Type};

impl Checker<'_> {
    /// Resolves a select chain `a.b.c` as one dotted name: a variable the environment declares
    /// under that name, or a qualified type name (`google.protobuf.Timestamp`). Only tried when
    /// the first segment is not an iteration variable, and (for speed) only when the environment
    /// has dotted names or the first segment is not a declared variable.
    pub(super) fn qualified(&mut self, id: NodeId) -> Option<Type> {
        let mut segments = Vec::new();
        let mut cursor = id;
        let rooted = loop {
            match self.ast.kind(cursor) {
                ExprKind::Select { operand, field, .. } => {
                    segments.push(&**field);
                    cursor = *operand;
                }
                ExprKind::Ident { name, rooted } => {
                    segments.push(&**name);
                    break *rooted;
                }
                _ => return None,
            }
        };
        let first = *segments.last()?;
        if !rooted && self.scopes.iter().any(|s| &*s.name == first) {
            return None;
        }
        if !self.has_dotted_vars && self.env.var(first).is_some() {
            return None;
        }
        segments.reverse();
        let name = segments.join(".");
        let (ty, reference) =
            if let Some(index) = self.env.vars().iter().position(|v| *v.name == name) {
                (
                    self.env.vars()[index].ty.clone(),
                    Reference::Var(index as u32),
                )
            } else {
                let ty = type_name(&name, self.env)?;
                (
                    Type::Type(Some(Arc::new(ty.clone()))),
                    Reference::TypeName(ty),
                )
            };
        // The nodes inside the chain are not evaluated on their own; give them `dyn`.
        let mut cursor = id;
        while let ExprKind::Select { operand, .. } = self.ast.kind(cursor) {
            cursor = *operand;
            self.types[cursor as usize] = Type::Dyn;
        }
        self.refs[id as usize] = reference;
        Some(ty)
    }

    /// `operand.field`; on an optional, an optional of the field (cel-go's viral optionals).
    pub(super) fn select(&mut self, operand: &Type, field: &str, field_span: Span) -> Type {
        match operand {
            Type::Optional(inner) => {
                let inner = (**inner).clone();
                match self.select(&inner, field, field_span) {
                    Type::Error => Type::Error,
                    ty => Type::optional(ty),
                }
            }
            Type::Object(object) => self.object_field(object, field, field_span),
            Type::Map(key, value) => {
                if !compatible(&Type::String, key) {
                    self.error(
                        "no-matching-overload",
                        field_span,
                        format!("`.{field}` needs a map with string keys, not {operand}"),
                        "not a string-keyed map",
                    );
                }
                (**value).clone()
            }
            Type::Dyn | Type::Error | Type::Param(_) => Type::Dyn,
            other => {
                self.error(
                    "unknown-field",
                    field_span,
                    format!("a value of type {other} has no field `{field}`"),
                    "no such field",
                );
                Type::Error
            }
        }
    }

    pub(super) fn object_field(
        &mut self,
        object: &ObjectType,
        field: &str,
        field_span: Span,
    ) -> Type {
        if let Some(f) = object.field(field) {
            return f.ty.clone();
        }
        self.diagnostics
            .push(messages::unknown_field(object, field, field_span));
        Type::Error
    }

    /// `operand.?field`: an optional of what `operand.field` would be.
    pub(super) fn opt_select(&mut self, operand: &Type, field: &str, field_span: Span) -> Type {
        let inner = match operand {
            Type::Optional(inner) => (**inner).clone(),
            other => other.clone(),
        };
        match self.select(&inner, field, field_span) {
            Type::Error => Type::Error,
            ty => Type::optional(ty),
        }
    }

    /// `operand[index]`; on an optional list or map, an optional of the element.
    pub(super) fn index(&mut self, span: Span, o: &Type, i: &Type, index: NodeId) -> Type {
        match o {
            Type::Optional(inner) => {
                let inner = (**inner).clone();
                match self.index(span, &inner, i, index) {
                    Type::Error => Type::Error,
                    ty => Type::optional(ty),
                }
            }
            // The inner type of `optional.none()` is not known yet.
            Type::Param(_) => Type::Dyn,
            // Indexing a host object by a string reads a field, like a map.
            Type::Object(object) => match (i, self.ast.kind(index)) {
                (_, ExprKind::Literal(Literal::String(key))) => {
                    self.object_field(object, key, self.ast.span(index))
                }
                (Type::String | Type::Dyn | Type::Error, _) => Type::Dyn,
                _ => self.operator(
                    span,
                    "[]",
                    operator_overloads("[]"),
                    &[o.clone(), i.clone()],
                ),
            },
            _ => self.operator(
                span,
                "[]",
                operator_overloads("[]"),
                &[o.clone(), i.clone()],
            ),
        }
    }

    /// `operand[?index]`: an optional of what `operand[index]` would be.
    pub(super) fn opt_index(&mut self, span: Span, o: &Type, i: &Type, index: NodeId) -> Type {
        let inner = match o {
            Type::Optional(inner) => (**inner).clone(),
            other => other.clone(),
        };
        match self.index(span, &inner, i, index) {
            Type::Error => Type::Error,
            ty => Type::optional(ty),
        }
    }
}
