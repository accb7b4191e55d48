//! The parser's plumbing: looking at and consuming tokens, reporting diagnostics (deduplicated,
//! capped, silent after a fatal error), and building nodes while tracking each one's height.

use super::{MAX_ERRORS, Parser};
use crate::Diagnostic;
use crate::syntax::lexer::{Token, TokenKind};
use crate::syntax::{ExprKind, Literal, Node, NodeId, Span};

impl<'s> Parser<'s> {
    // ---- tokens -------------------------------------------------------------------------

    pub(super) fn peek(&self) -> Token {
        self.peek_at(0)
    }

    pub(super) fn peek_at(&self, ahead: usize) -> Token {
        let last = self.tokens.len() - 1;
        if self.fatal {
            return self.tokens[last];
        }
        self.tokens[(self.pos + ahead).min(last)]
    }

    pub(super) fn at(&self, kind: TokenKind) -> bool {
        self.peek().kind == kind
    }

    pub(super) fn bump(&mut self) -> Token {
        let token = self.peek();
        if token.kind != TokenKind::Eof {
            self.pos += 1;
        }
        token
    }

    pub(super) fn text(&self, span: Span) -> &'s str {
        &self.source[span.start as usize..span.end as usize]
    }

    /// Consumes a token of `kind`, or reports what was expected and leaves the token in place.
    #[inline(never)]
    pub(super) fn expect(&mut self, kind: TokenKind, help: Option<&str>) -> Option<Span> {
        if self.at(kind) {
            return Some(self.bump().span);
        }
        let token = self.peek();
        self.error(
            token,
            format!(
                "expected {}, found {}",
                kind.describe(),
                token.kind.describe()
            ),
            format!("expected {} here", kind.describe()),
            help,
        );
        None
    }

    // ---- diagnostics ----------------------------------------------------------------------

    /// Reports a syntax error at `token`, unless the lexer already reported it, an error was
    /// already reported there, or the parse has stopped.
    #[inline(never)]
    pub(super) fn error(
        &mut self,
        token: Token,
        message: String,
        label: impl Into<String>,
        help: Option<&str>,
    ) {
        if token.kind == TokenKind::Error {
            return;
        }
        let mut diagnostic = Diagnostic::error("cel-syntax", token.span, message).with_label(label);
        if let Some(help) = help {
            diagnostic = diagnostic.with_help(help);
        }
        self.report(diagnostic);
    }

    #[inline(never)]
    pub(super) fn report(&mut self, diagnostic: Diagnostic) {
        if self.fatal {
            return;
        }
        if self
            .diagnostics
            .iter()
            .any(|d| d.span.start == diagnostic.span.start && d.code == diagnostic.code)
        {
            return;
        }
        self.diagnostics.push(diagnostic);
        if self.diagnostics.len() >= MAX_ERRORS {
            self.fatal = true;
        }
    }

    #[inline(never)]
    pub(super) fn too_deep(&mut self, span: Span, what: &str) {
        let diagnostic = Diagnostic::error(
            "nesting-too-deep",
            span,
            format!(
                "expression nests too deeply: {what} exceeds the limit of {} levels",
                self.max_depth
            ),
        )
        .with_label("nesting limit reached here")
        .with_help(
            "split the expression, or flatten long chains (e.g. use `x in [a, b, c]` instead \
             of many `||` clauses)",
        );
        self.report(diagnostic);
        self.fatal = true;
    }

    // ---- nodes ------------------------------------------------------------------------------

    /// Adds a node whose children are `children`, enforcing the height limit.
    #[inline(never)]
    pub(super) fn push(&mut self, kind: ExprKind, span: Span, children: &[NodeId]) -> NodeId {
        let height = 1 + children
            .iter()
            .map(|&c| self.heights[c as usize])
            .max()
            .unwrap_or(0);
        if height > self.max_depth && !self.fatal {
            self.too_deep(span, "the tree built here");
        }
        let id = self.nodes.len() as NodeId;
        self.nodes.push(Node { kind, span });
        self.heights.push(height);
        id
    }

    /// A stand-in for text that did not parse; the AST is discarded when any error exists.
    #[inline(never)]
    pub(super) fn placeholder(&mut self, span: Span) -> NodeId {
        self.push(ExprKind::Literal(Literal::Null), span, &[])
    }

    pub(super) fn span(&self, id: NodeId) -> Span {
        self.nodes[id as usize].span
    }

    pub(super) fn kind(&self, id: NodeId) -> &ExprKind {
        &self.nodes[id as usize].kind
    }

    /// Widens a node's span to cover the brackets or prefix operators written around it.
    #[inline(never)]
    pub(super) fn widen(&mut self, id: NodeId, span: Span) {
        let node = &mut self.nodes[id as usize];
        node.span = node.span.to(span);
    }

    #[inline(never)]
    pub(super) fn drop_node(&mut self) {
        self.orphans = true;
    }
}
