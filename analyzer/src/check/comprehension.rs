//! Typing the comprehension macros: what their variables range over (elements or keys; with
//! two variables, indices and elements or keys and values; the value of an optional for
//! `optMap` and `optFlatMap`), the types their predicate and transform must have, and the type
//! of their result.

use super::functions::{compatible, orderable};
use super::{Checker, Scope};
use crate::extensions::Extension;
use crate::syntax::{Comprehension, MacroKind, NodeId};
use crate::types::Type;

impl<'a> Checker<'a> {
    pub(super) fn comprehension(&mut self, id: NodeId, comp: &'a Comprehension) -> Type {
        self.require_macro(id, comp);
        let range = self.visit(comp.range);
        let (first, second) = self.variables(comp, &range);
        self.scopes.push(Scope {
            name: comp.var.clone(),
            comprehension: id,
            ty: first.clone(),
        });
        if let Some((name, _)) = &comp.var2 {
            self.scopes.push(Scope {
                name: name.clone(),
                comprehension: id,
                ty: second.clone(),
            });
        }
        if let Some(predicate) = comp.predicate {
            let p = self.visit(predicate);
            if !compatible(&Type::Bool, &p) {
                self.error(
                    "no-matching-overload",
                    self.ast.span(predicate),
                    format!(
                        "the predicate of `{}` must be a bool, not {p}",
                        comp.kind.name()
                    ),
                    "not a bool",
                );
            }
        }
        let transformed = comp.transform.map(|t| (t, self.visit(t)));
        self.scopes
            .truncate(self.scopes.len() - 1 - usize::from(comp.var2.is_some()));
        let element = if comp.var2.is_some() {
            second
        } else {
            first.clone()
        };
        match comp.kind {
            MacroKind::All | MacroKind::Exists | MacroKind::ExistsOne => Type::Bool,
            MacroKind::Map | MacroKind::TransformList => {
                Type::list(transformed.map_or(Type::Dyn, |(_, t)| t))
            }
            MacroKind::Filter => Type::list(element),
            MacroKind::TransformMap => Type::map(first, transformed.map_or(Type::Dyn, |(_, t)| t)),
            MacroKind::TransformMapEntry => self.entry_result(comp, transformed),
            MacroKind::SortBy => self.sort_by_result(comp, &range, transformed),
            MacroKind::OptMap => Type::optional(transformed.map_or(Type::Dyn, |(_, t)| t)),
            MacroKind::OptFlatMap => self.flat_map_result(comp, transformed),
        }
    }

    /// Reports a macro form whose extension the environment does not enable.
    fn require_macro(&mut self, id: NodeId, comp: &Comprehension) {
        let span = self.ast.span(id);
        let name = comp.kind.name();
        match comp.kind {
            MacroKind::TransformList | MacroKind::TransformMap | MacroKind::TransformMapEntry => {
                self.require(Extension::TwoVarComprehensions, span, &format!("`{name}`"));
            }
            MacroKind::SortBy => self.require(Extension::Lists, span, "`sortBy`"),
            MacroKind::OptMap | MacroKind::OptFlatMap => {
                self.require(Extension::Optional, span, &format!("`{name}`"));
            }
            _ if comp.var2.is_some() => self.require(
                Extension::TwoVarComprehensions,
                span,
                &format!("the two-variable form of `{name}`"),
            ),
            _ => {}
        }
    }

    /// The types of the first and second variable.
    fn variables(&mut self, comp: &Comprehension, range: &Type) -> (Type, Type) {
        let two = comp.var2.is_some();
        let vars = match (comp.kind, range) {
            (MacroKind::OptMap | MacroKind::OptFlatMap, Type::Optional(inner)) => {
                Some(((**inner).clone(), Type::Dyn))
            }
            (MacroKind::OptMap | MacroKind::OptFlatMap, Type::Dyn | Type::Error) => {
                Some((Type::Dyn, Type::Dyn))
            }
            (MacroKind::OptMap | MacroKind::OptFlatMap, _) => None,
            (MacroKind::SortBy, Type::List(elem)) => Some(((**elem).clone(), Type::Dyn)),
            (MacroKind::SortBy, Type::Dyn | Type::Error | Type::Param(_)) => {
                Some((Type::Dyn, Type::Dyn))
            }
            (MacroKind::SortBy, _) => None,
            (_, Type::List(elem)) if two => Some((Type::Int, (**elem).clone())),
            (_, Type::List(elem)) => Some(((**elem).clone(), Type::Dyn)),
            (_, Type::Map(key, value)) => Some(((**key).clone(), (**value).clone())),
            (_, Type::Object(_)) => Some((Type::String, Type::Dyn)),
            (_, Type::Dyn | Type::Error | Type::Param(_)) => Some((Type::Dyn, Type::Dyn)),
            _ => None,
        };
        let Some((first, second)) = vars else {
            let (wants, label) = match comp.kind {
                MacroKind::OptMap | MacroKind::OptFlatMap => ("an optional", "not an optional"),
                MacroKind::SortBy => ("a list", "not a list"),
                _ => ("a list or a map", "not a list or map"),
            };
            self.error(
                "not-iterable",
                self.ast.span(comp.range),
                format!("`{}` needs {wants}, not {range}", comp.kind.name()),
                label,
            );
            return (Type::Error, Type::Error);
        };
        let concrete = |t: Type| {
            if matches!(t, Type::Param(_)) {
                Type::Dyn
            } else {
                t
            }
        };
        (concrete(first), concrete(second))
    }

    /// `transformMapEntry`: the transform must build a map; the result merges them.
    fn entry_result(&mut self, comp: &Comprehension, transformed: Option<(NodeId, Type)>) -> Type {
        match transformed {
            Some((_, Type::Map(k, v))) => Type::Map(k, v),
            Some((_, Type::Dyn | Type::Error | Type::Param(_))) | None => {
                Type::map(Type::Dyn, Type::Dyn)
            }
            Some((t, other)) => {
                self.error(
                    "no-matching-overload",
                    self.ast.span(t),
                    format!(
                        "the transform of `{}` must build a map entry such as `{{k: v}}`, not {other}",
                        comp.kind.name()
                    ),
                    "not a map",
                );
                Type::Error
            }
        }
    }

    /// `sortBy`: the key must have an order; the result is the list itself.
    fn sort_by_result(
        &mut self,
        comp: &Comprehension,
        range: &Type,
        transformed: Option<(NodeId, Type)>,
    ) -> Type {
        if let Some((t, key)) = transformed {
            let ordered = orderable(&key);
            if !ordered {
                self.error(
                    "no-matching-overload",
                    self.ast.span(t),
                    format!(
                        "the key of `{}` must be a number, bool, string, bytes, timestamp or duration, not {key}",
                        comp.kind.name()
                    ),
                    "not orderable",
                );
            }
        }
        match range {
            Type::List(_) => range.clone(),
            _ => Type::list(Type::Dyn),
        }
    }

    /// `optFlatMap`: the transform must itself be an optional.
    fn flat_map_result(
        &mut self,
        comp: &Comprehension,
        transformed: Option<(NodeId, Type)>,
    ) -> Type {
        match transformed {
            Some((_, t @ Type::Optional(_))) => t,
            Some((_, Type::Dyn | Type::Error | Type::Param(_))) | None => Type::optional(Type::Dyn),
            Some((t, other)) => {
                self.error(
                    "no-matching-overload",
                    self.ast.span(t),
                    format!(
                        "the transform of `{}` must be an optional, not {other}",
                        comp.kind.name()
                    ),
                    "not an optional",
                );
                Type::Error
            }
        }
    }
}
