//! The bracketed and suffix constructs of the parser: selections, indexes, calls and macros,
//! list, map and message literals, and the comma-separated lists inside them with their error
//! recovery.
//!
//! As in the expression core, the functions that call back into `expr` only parse; building
//! nodes and reporting errors happen in separate functions so the recursive path stays lean.

use super::{Closer, Parser};
use crate::Diagnostic;
use crate::syntax::lexer::{Token, TokenKind};
use crate::syntax::{Comprehension, ExprKind, FieldInit, MacroKind, MapEntry, NodeId, Span};

/// What the items of a comma-separated list are.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Item {
    /// Call arguments: no trailing comma.
    Argument,
    /// List elements.
    Element,
    /// Map entries `key: value`.
    Entry,
    /// Message fields `name: value`.
    Field,
}

impl<'s> Parser<'s> {
    pub(super) fn select_or_call(&mut self, operand: NodeId) -> NodeId {
        self.bump();
        let optional = self.at(TokenKind::Question);
        if optional {
            self.bump();
        }
        let name = self.peek();
        match name.kind {
            TokenKind::Ident if !optional && self.peek_at(1).kind == TokenKind::LParen => {
                self.bump();
                self.member_call(operand, name)
            }
            TokenKind::Ident if self.peek_at(1).kind == TokenKind::LParen => {
                self.optional_call(name);
                self.bump();
                self.member_call(operand, name)
            }
            TokenKind::Ident | TokenKind::EscIdent => {
                self.bump();
                self.select_node(operand, name, optional)
            }
            _ => {
                self.missing_field(name);
                // A keyword in a field's place was meant as the field: skip it, or `a.in`
                // would go on to read `in` as the operator.
                if matches!(
                    name.kind,
                    TokenKind::In | TokenKind::True | TokenKind::False | TokenKind::Null
                ) {
                    self.bump();
                }
                operand
            }
        }
    }

    #[inline(never)]
    fn optional_call(&mut self, name: Token) {
        self.report(
            Diagnostic::error(
                "cel-syntax",
                name.span,
                "`.?` selects a field; it cannot call a function",
            )
            .with_label("called after `.?`")
            .with_help("select with `a.?field`, or call with `a.f(…)`"),
        );
    }

    #[inline(never)]
    fn select_node(&mut self, operand: NodeId, name: Token, optional: bool) -> NodeId {
        let field = self.field_name(name).into();
        let span = self.span(operand).to(name.span);
        let field_span = name.span;
        let kind = if optional {
            ExprKind::OptSelect {
                operand,
                field,
                field_span,
            }
        } else {
            ExprKind::Select {
                operand,
                field,
                field_span,
            }
        };
        self.push(kind, span, &[operand])
    }

    #[inline(never)]
    fn missing_field(&mut self, name: Token) {
        let help = match name.kind {
            TokenKind::In | TokenKind::True | TokenKind::False | TokenKind::Null => Some(
                "keywords cannot be field names as written; quote the name with backticks, \
                 e.g. a.`in`",
            ),
            _ => None,
        };
        self.error(
            name,
            format!(
                "expected a field name after `.`, found {}",
                name.kind.describe()
            ),
            "expected a field name here",
            help,
        );
    }

    /// The field name a token spells: backticks are removed from a quoted name.
    #[inline(never)]
    fn field_name(&self, token: Token) -> &'s str {
        let text = self.text(token.span);
        if token.kind == TokenKind::EscIdent {
            &text[1..text.len() - 1]
        } else {
            text
        }
    }

    pub(super) fn index(&mut self, operand: NodeId) -> NodeId {
        self.bump();
        let optional = self.optional_marker();
        self.closers.push(Closer::Index);
        let index = self.expr();
        self.closers.pop();
        self.index_node(operand, index, optional)
    }

    #[inline(never)]
    fn index_node(&mut self, operand: NodeId, index: NodeId, optional: bool) -> NodeId {
        let close = self.expect(TokenKind::RBracket, Some("close the index with `]`"));
        let end = close.unwrap_or(self.span(index));
        let span = self.span(operand).to(end);
        let kind = if optional {
            ExprKind::OptIndex { operand, index }
        } else {
            ExprKind::Index { operand, index }
        };
        self.push(kind, span, &[operand, index])
    }

    /// Consumes the `?` that marks optional syntax (`a[?i]`, `[?x]`, `{?k: v}`, `T{?f: v}`);
    /// whether one was there.
    fn optional_marker(&mut self) -> bool {
        let optional = self.at(TokenKind::Question);
        if optional {
            self.bump();
        }
        optional
    }

    // ---- comma-separated lists ------------------------------------------------------------

    /// Parses the items up to `closer` (the opening bracket already consumed) onto the scratch
    /// stacks, then the closer itself; returns the closer's span when it was found.
    fn delimited(&mut self, closer: TokenKind, context: Closer, item: Item) -> Option<Span> {
        self.closers.push(context);
        let trailing = item != Item::Argument;
        // The grammar allows a lone comma in an empty list, map or message: `[,]`.
        if trailing && self.at(TokenKind::Comma) && self.peek_at(1).kind == closer {
            self.bump();
        }
        while !self.at(closer) && !self.fatal {
            self.item(item);
            if self.at(TokenKind::Comma) {
                self.bump();
                if self.at(closer) {
                    if !trailing {
                        self.trailing_comma();
                    }
                    break;
                }
            } else if self.at(closer) || !self.bad_separator(closer) {
                break;
            }
        }
        self.closers.pop();
        self.expect(closer, None)
    }

    fn item(&mut self, item: Item) {
        match item {
            Item::Argument => {
                let id = self.expr();
                self.scratch.push(id);
            }
            Item::Element => {
                let optional = self.optional_marker();
                self.optional_scratch.push(optional);
                let id = self.expr();
                self.scratch.push(id);
            }
            Item::Entry => {
                let optional = self.optional_marker();
                self.optional_scratch.push(optional);
                let key = self.expr();
                self.scratch.push(key);
                self.expect(
                    TokenKind::Colon,
                    Some("map entries are written `key: value`"),
                );
                let value = self.expr();
                self.scratch.push(value);
            }
            Item::Field => self.field(),
        }
    }

    fn field(&mut self) {
        let optional = self.optional_marker();
        let name = self.peek();
        if !matches!(name.kind, TokenKind::Ident | TokenKind::EscIdent) {
            self.missing_field_name(name);
            return;
        }
        self.bump();
        self.expect_field_colon();
        let value = self.expr();
        self.push_field(name, value, optional);
    }

    #[inline(never)]
    fn missing_field_name(&mut self, name: Token) {
        self.error(
            name,
            format!("expected a field name, found {}", name.kind.describe()),
            "expected a field name here",
            Some("message fields are written `name: value`"),
        );
        self.skip_item();
    }

    #[inline(never)]
    fn expect_field_colon(&mut self) {
        self.expect(
            TokenKind::Colon,
            Some("message fields are written `name: value`"),
        );
    }

    #[inline(never)]
    fn push_field(&mut self, name: Token, value: NodeId, optional: bool) {
        let field = FieldInit {
            name: self.field_name(name).into(),
            name_span: name.span,
            value,
            optional,
        };
        self.field_scratch.push(field);
    }

    #[inline(never)]
    fn trailing_comma(&mut self) {
        let token = self.peek();
        self.error(
            token,
            "expected an expression after `,`, found `)`".to_owned(),
            "expected an argument here",
            Some("remove the trailing comma"),
        );
    }

    /// Reports a missing separator and skips to the next `,` or `closer` at this level.
    /// Returns whether a `,` was found, so another item may follow.
    #[inline(never)]
    fn bad_separator(&mut self, closer: TokenKind) -> bool {
        let token = self.peek();
        self.error(
            token,
            format!(
                "expected `,` or {}, found {}",
                closer.describe(),
                token.kind.describe()
            ),
            "expected `,` or a closing bracket here",
            None,
        );
        self.skip_item();
        if self.at(TokenKind::Comma) {
            self.bump();
            return !self.at(closer);
        }
        false
    }

    /// Skips the rest of a malformed item, up to the `,` or closing bracket that ends it,
    /// stepping over nested brackets whole.
    #[inline(never)]
    fn skip_item(&mut self) {
        let mut nesting = 0usize;
        loop {
            match self.peek().kind {
                TokenKind::Eof => return,
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => nesting += 1,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                    if nesting == 0 {
                        return;
                    }
                    nesting -= 1;
                }
                TokenKind::Comma if nesting == 0 => return,
                _ => {}
            }
            self.bump();
        }
    }

    // ---- literals of lists, maps and messages -----------------------------------------------

    pub(super) fn list(&mut self) -> NodeId {
        let open = self.bump().span;
        let mark = (self.scratch.len(), self.optional_scratch.len());
        let close = self.delimited(TokenKind::RBracket, Closer::List, Item::Element);
        self.list_node(open, close, mark)
    }

    #[inline(never)]
    fn list_node(&mut self, open: Span, close: Option<Span>, mark: (usize, usize)) -> NodeId {
        let items: Vec<NodeId> = self.scratch.drain(mark.0..).collect();
        // One flag per element, pushed in step with the elements themselves.
        let optional_indices = self
            .optional_scratch
            .drain(mark.1..)
            .enumerate()
            .filter_map(|(i, optional)| optional.then_some(i as u32))
            .collect();
        let span = open.to(close.unwrap_or_else(|| self.peek().span));
        let kind = ExprKind::List {
            items: items.clone(),
            optional_indices,
        };
        self.push(kind, span, &items)
    }

    pub(super) fn map(&mut self) -> NodeId {
        let open = self.bump().span;
        let mark = (self.scratch.len(), self.optional_scratch.len());
        let close = self.delimited(TokenKind::RBrace, Closer::Brace, Item::Entry);
        self.map_node(open, close, mark)
    }

    #[inline(never)]
    fn map_node(&mut self, open: Span, close: Option<Span>, mark: (usize, usize)) -> NodeId {
        let ids: Vec<NodeId> = self.scratch.drain(mark.0..).collect();
        let flags: Vec<bool> = self.optional_scratch.drain(mark.1..).collect();
        let entries = ids
            .chunks_exact(2)
            .zip(flags)
            .map(|(kv, optional)| MapEntry {
                key: kv[0],
                value: kv[1],
                optional,
            })
            .collect();
        let span = open.to(close.unwrap_or_else(|| self.peek().span));
        self.push(ExprKind::Map(entries), span, &ids)
    }

    /// `ident ('.' ident)* '{' fields '}'`, possibly with a leading dot; the caller has seen
    /// the whole name and the brace ahead.
    pub(super) fn message(&mut self, rooted: bool) -> NodeId {
        let start = self.peek().span;
        let type_name = self.message_name(rooted);
        let mark = self.field_scratch.len();
        let close = self.delimited(TokenKind::RBrace, Closer::Brace, Item::Field);
        self.message_node(start, close, type_name, mark)
    }

    #[inline(never)]
    fn message_name(&mut self, rooted: bool) -> Box<str> {
        let mut type_name = String::new();
        if rooted {
            self.bump();
            type_name.push('.');
        }
        loop {
            let ident = self.bump();
            type_name.push_str(self.text(ident.span));
            if self.at(TokenKind::LBrace) || self.fatal {
                break;
            }
            self.bump();
            type_name.push('.');
        }
        self.bump();
        type_name.into()
    }

    #[inline(never)]
    fn message_node(
        &mut self,
        start: Span,
        close: Option<Span>,
        type_name: Box<str>,
        mark: usize,
    ) -> NodeId {
        let fields: Vec<FieldInit> = self.field_scratch.drain(mark..).collect();
        let values: Vec<NodeId> = fields.iter().map(|f| f.value).collect();
        let span = start.to(close.unwrap_or_else(|| self.peek().span));
        self.push(ExprKind::Struct { type_name, fields }, span, &values)
    }

    // ---- calls and macros -----------------------------------------------------------------

    pub(super) fn global_call(&mut self, start: Span, rooted: bool, name_span: Span) -> NodeId {
        let mark = self.scratch.len();
        let open = self.bump().span;
        let close = self.delimited(TokenKind::RParen, Closer::Args, Item::Argument);
        self.global_call_node(start, open, close, rooted, name_span, mark)
    }

    #[inline(never)]
    fn global_call_node(
        &mut self,
        start: Span,
        open: Span,
        close: Option<Span>,
        rooted: bool,
        name_span: Span,
        mark: usize,
    ) -> NodeId {
        let args: Vec<NodeId> = self.scratch.drain(mark..).collect();
        let span = start.to(self.call_end(open, close));
        self.check_reserved(name_span);
        let name = self.text(name_span);
        if !rooted && name == "has" && args.len() == 1 {
            return self.has(args[0], span);
        }
        let function = if rooted {
            format!(".{name}")
        } else {
            name.to_owned()
        };
        let children = args.clone();
        self.push(
            ExprKind::Call {
                target: None,
                function: function.into(),
                name_span,
                args,
            },
            span,
            &children,
        )
    }

    #[inline(never)]
    fn has(&mut self, arg: NodeId, span: Span) -> NodeId {
        let ExprKind::Select {
            operand,
            field,
            field_span,
        } = self.kind(arg).clone()
        else {
            let arg_span = self.span(arg);
            self.report(
                Diagnostic::error("cel-syntax", arg_span, "invalid argument to has() macro")
                    .with_label("not a field selection")
                    .with_help("has() tests a field: write it as has(x.field)"),
            );
            return self.placeholder(span);
        };
        self.drop_node();
        self.push(
            ExprKind::Has {
                operand,
                field,
                field_span,
            },
            span,
            &[operand],
        )
    }

    fn member_call(&mut self, target: NodeId, name: Token) -> NodeId {
        let mark = self.scratch.len();
        let open = self.bump().span;
        let close = self.delimited(TokenKind::RParen, Closer::Args, Item::Argument);
        self.member_call_node(target, name, open, close, mark)
    }

    /// Where a call ends: its `)`, or where the parse gave up on finding it.
    #[inline(never)]
    fn call_end(&self, open: Span, close: Option<Span>) -> Span {
        close.unwrap_or_else(|| open.to(self.peek().span))
    }

    #[inline(never)]
    fn member_call_node(
        &mut self,
        target: NodeId,
        name: Token,
        open: Span,
        close: Option<Span>,
        mark: usize,
    ) -> NodeId {
        let args: Vec<NodeId> = self.scratch.drain(mark..).collect();
        let function = self.text(name.span);
        let span = self.span(target).to(self.call_end(open, close));
        if let Some(kind) = macro_kind(function, args.len()) {
            return self.comprehension(kind, target, &args, span);
        }
        let mut children = vec![target];
        children.extend_from_slice(&args);
        self.push(
            ExprKind::Call {
                target: Some(target),
                function: function.into(),
                name_span: name.span,
                args,
            },
            span,
            &children,
        )
    }

    fn comprehension(
        &mut self,
        kind: MacroKind,
        range: NodeId,
        args: &[NodeId],
        span: Span,
    ) -> NodeId {
        let two_vars = args.len() == 4 || args.len() == 3 && !matches!(kind, MacroKind::Map);
        let Some((var, var_span)) = self.macro_variable(kind, args[0], two_vars) else {
            return self.placeholder(span);
        };
        let var2 = if two_vars {
            let Some((name, name_span)) = self.macro_variable(kind, args[1], true) else {
                return self.placeholder(span);
            };
            if name == var {
                self.duplicate_variable(name_span, &name);
                return self.placeholder(span);
            }
            Some((name, name_span))
        } else {
            None
        };
        let body = &args[1 + usize::from(two_vars)..];
        let (predicate, transform) = match (kind, body) {
            (MacroKind::All | MacroKind::Exists | MacroKind::ExistsOne, [p]) => (Some(*p), None),
            (MacroKind::Filter, [p]) => (Some(*p), None),
            (_, [t]) => (None, Some(*t)),
            (_, [p, t]) => (Some(*p), Some(*t)),
            _ => (None, None),
        };
        let children: Vec<NodeId> = [Some(range), predicate, transform]
            .into_iter()
            .flatten()
            .collect();
        self.push(
            ExprKind::Comprehension(Box::new(Comprehension {
                kind,
                range,
                var,
                var_span,
                var2,
                predicate,
                transform,
            })),
            span,
            &children,
        )
    }

    /// The name a macro argument declares as its variable; reports anything but a simple
    /// name. The argument's node is dropped: the variable lives in the macro node.
    #[inline(never)]
    fn macro_variable(
        &mut self,
        kind: MacroKind,
        arg: NodeId,
        two_vars: bool,
    ) -> Option<(Box<str>, Span)> {
        let var_span = self.span(arg);
        let ExprKind::Ident { name, rooted } = self.kind(arg).clone() else {
            let name = kind.name();
            let help = if two_vars {
                format!(
                    "the first two arguments of {name}() name its variables, e.g. \
                     `map.{name}(k, v, …)`"
                )
            } else {
                format!(
                    "the first argument of {name}() names the iteration variable, e.g. \
                     `list.{name}(x, …)`"
                )
            };
            self.report(
                Diagnostic::error("cel-syntax", var_span, "argument must be a simple name")
                    .with_label("expected a variable name")
                    .with_help(help),
            );
            return None;
        };
        self.drop_node();
        let var: Box<str> = if rooted {
            format!(".{name}").into()
        } else {
            name
        };
        Some((var, var_span))
    }

    #[inline(never)]
    fn duplicate_variable(&mut self, span: Span, name: &str) {
        self.report(
            Diagnostic::error(
                "cel-syntax",
                span,
                format!("both variables of the comprehension are named `{name}`"),
            )
            .with_label("the same name again")
            .with_help("give the index (or key) and the value different names, e.g. `(i, v, …)`"),
        );
    }
}

/// The macro a member call `target.function(args)` spells, by name and argument count.
fn macro_kind(function: &str, args: usize) -> Option<MacroKind> {
    Some(match (function, args) {
        ("all", 2 | 3) => MacroKind::All,
        ("exists", 2 | 3) => MacroKind::Exists,
        ("exists_one" | "existsOne", 2 | 3) => MacroKind::ExistsOne,
        ("map", 2 | 3) => MacroKind::Map,
        ("filter", 2) => MacroKind::Filter,
        ("transformList", 3 | 4) => MacroKind::TransformList,
        ("transformMap", 3 | 4) => MacroKind::TransformMap,
        ("transformMapEntry", 3 | 4) => MacroKind::TransformMapEntry,
        ("sortBy", 2) => MacroKind::SortBy,
        ("optMap", 2) => MacroKind::OptMap,
        ("optFlatMap", 2) => MacroKind::OptFlatMap,
        _ => return None,
    })
}
