//! The CEL parser: precedence climbing over the token stream, building the node arena bottom-up
//! with the span of every whole sub-expression.
//!
//! The grammar is CEL.g4 without optional syntax. Operator precedence, lowest first: the
//! conditional `? :` (right-associative; its middle operand may not itself be a conditional
//! without parentheses), `||`, `&&`, the relations `< <= >= > == != in`, `+ -`, `* / %`, the
//! prefix runs `!…` and `-…` (which apply to a member expression, so `-!a` is refused), and the
//! member suffixes `.f`, `.f(…)`, `[…]`. Even runs of `!` or `-` cancel out and odd runs become
//! one operator, as in cel-go; a single `-` directly before a number is part of the literal, so
//! `-9223372036854775808` and `-0x8000000000000000` are valid ints.
//!
//! Hostile input is bounded three ways: the source length is checked before anything else; the
//! parser's own recursion and the height of the tree it builds are both capped by
//! [`ParseOptions::max_depth`] (member chains and operator chains count, because later passes
//! recurse on the tree); runs of `(`, `!` and `-` are consumed in loops, not one call per
//! character. After a syntax error the parser skips to the next `,` `)` `]` `}` it can use and
//! goes on, so one run reports several independent errors (at most [`MAX_ERRORS`]).
//!
//! Diagnostic codes:
//! - `expression-too-long`: the source exceeds `max_bytes` (nothing else is checked);
//! - `nesting-too-deep`: the expression nests deeper than `max_depth`;
//! - `cel-syntax`: a token the grammar does not allow here, an unterminated string, a character
//!   with no token, or a misused macro (`has(x)`, `l.all(x.y, p)`);
//! - `invalid-literal`: a literal that lexes but does not decode (bad escape, out-of-range int);
//! - `reserved-word`: a reserved word (`if`, `as`, `while`, …) used as an identifier or a
//!   global function name (they are allowed as field and member-function names);
//! - `unsupported-syntax`: optional syntax (`a.?b`, `a[?0]`, `[?x]`, `{?k: v}`), which the
//!   hosts we check do not enable.

use super::lexer::{Token, TokenKind, tokenize};
use super::literal::{self, LiteralError};
use super::{
    Ast, BinaryOp, Comprehension, ExprKind, FieldInit, Literal, MacroKind, MapEntry, Node, NodeId,
    ParseOptions, Span, UnaryOp,
};
use crate::Diagnostic;

/// Most errors reported for one expression; past this the parse stops.
pub(crate) const MAX_ERRORS: usize = 20;

/// Words CEL reserves: refused as identifiers and global function names.
const RESERVED: [&str; 17] = [
    "as",
    "break",
    "const",
    "continue",
    "else",
    "for",
    "function",
    "if",
    "import",
    "let",
    "loop",
    "package",
    "namespace",
    "return",
    "var",
    "void",
    "while",
];

/// Parses `source` into an AST, or returns every error found (sorted by position).
pub fn parse(source: &str, options: &ParseOptions) -> Result<Ast, Vec<Diagnostic>> {
    if source.len() > options.max_bytes || u32::try_from(source.len()).is_err() {
        return Err(vec![too_long(source, options.max_bytes)]);
    }
    let mut diagnostics = Vec::new();
    let tokens = tokenize(source, &mut diagnostics);
    let mut parser = Parser {
        source,
        tokens,
        pos: 0,
        nodes: Vec::new(),
        heights: Vec::new(),
        diagnostics,
        depth: 0,
        max_depth: options.max_depth,
        fatal: false,
        closers: Vec::new(),
        orphans: false,
    };
    let root = parser.expr();
    if !parser.at(TokenKind::Eof) {
        let token = parser.peek();
        let help = match token.kind {
            TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => {
                "remove the unmatched closing bracket"
            }
            _ => "join the two parts with an operator such as `&&` or `||`",
        };
        parser.error(
            token,
            format!(
                "unexpected {} after a complete expression",
                token.kind.describe()
            ),
            "unexpected here",
            Some(help),
        );
    }
    let Parser {
        nodes,
        mut diagnostics,
        orphans,
        ..
    } = parser;
    if !diagnostics.is_empty() {
        diagnostics.sort_by_key(|d| d.span.start);
        return Err(diagnostics);
    }
    let nodes = if orphans { compact(nodes, root) } else { nodes };
    Ok(Ast::from_nodes(nodes).expect("a successful parse builds at least one node"))
}

fn too_long(source: &str, max: usize) -> Diagnostic {
    // Label the bytes past the limit, starting on a character boundary.
    let mut start = max.min(source.len());
    while !source.is_char_boundary(start) {
        start -= 1;
    }
    let span = Span::new(
        u32::try_from(start).unwrap_or(u32::MAX),
        u32::try_from(source.len()).unwrap_or(u32::MAX),
    );
    Diagnostic::error(
        "expression-too-long",
        span,
        format!(
            "expression is {} bytes long, over the limit of {max} bytes",
            source.len()
        ),
    )
    .with_label("bytes past the limit")
    .with_help(format!(
        "shorten the expression to at most {max} bytes (the `max_bytes` limit)"
    ))
}

/// What an open bracket is waiting for; a stray closer is left for the construct that wants it.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Closer {
    /// A parenthesised expression.
    Paren,
    /// A call's argument list.
    Args,
    /// A list literal.
    List,
    /// An index.
    Index,
    /// A map or message literal.
    Brace,
}

impl Closer {
    fn accepts(self, kind: TokenKind) -> bool {
        match self {
            Closer::Paren => kind == TokenKind::RParen,
            Closer::Args => matches!(kind, TokenKind::RParen | TokenKind::Comma),
            Closer::List => matches!(kind, TokenKind::RBracket | TokenKind::Comma),
            Closer::Index => kind == TokenKind::RBracket,
            Closer::Brace => matches!(kind, TokenKind::RBrace | TokenKind::Comma),
        }
    }
}

struct Parser<'s> {
    source: &'s str,
    tokens: Vec<Token>,
    pos: usize,
    nodes: Vec<Node>,
    heights: Vec<u32>,
    diagnostics: Vec<Diagnostic>,
    /// Current recursion depth of [`Parser::expr`].
    depth: u32,
    max_depth: u32,
    /// Set when parsing cannot usefully go on: every token then reads as the end.
    fatal: bool,
    closers: Vec<Closer>,
    /// Whether a macro dropped a node it had parsed (the `has` argument, a comprehension's
    /// variable), so the arena needs compacting.
    orphans: bool,
}

/// Binding power of a binary operator (higher binds tighter).
fn binary_op(kind: TokenKind) -> Option<(BinaryOp, u8)> {
    Some(match kind {
        TokenKind::OrOr => (BinaryOp::Or, 1),
        TokenKind::AndAnd => (BinaryOp::And, 2),
        TokenKind::EqEq => (BinaryOp::Eq, 3),
        TokenKind::NotEq => (BinaryOp::Ne, 3),
        TokenKind::Less => (BinaryOp::Lt, 3),
        TokenKind::LessEq => (BinaryOp::Le, 3),
        TokenKind::Greater => (BinaryOp::Gt, 3),
        TokenKind::GreaterEq => (BinaryOp::Ge, 3),
        TokenKind::In => (BinaryOp::In, 3),
        TokenKind::Plus => (BinaryOp::Add, 4),
        TokenKind::Minus => (BinaryOp::Sub, 4),
        TokenKind::Star => (BinaryOp::Mul, 5),
        TokenKind::Slash => (BinaryOp::Div, 5),
        TokenKind::Percent => (BinaryOp::Rem, 5),
        _ => return None,
    })
}

fn starts_expression(kind: TokenKind) -> bool {
    matches!(
        kind,
        TokenKind::Ident
            | TokenKind::Int
            | TokenKind::Uint
            | TokenKind::Float
            | TokenKind::String
            | TokenKind::Bytes
            | TokenKind::True
            | TokenKind::False
            | TokenKind::Null
            | TokenKind::Dot
            | TokenKind::LParen
            | TokenKind::LBracket
            | TokenKind::LBrace
            | TokenKind::Bang
            | TokenKind::Minus
    )
}

impl<'s> Parser<'s> {
    // ---- tokens -------------------------------------------------------------------------

    fn peek(&self) -> Token {
        self.peek_at(0)
    }

    fn peek_at(&self, ahead: usize) -> Token {
        let last = self.tokens.len() - 1;
        if self.fatal {
            return self.tokens[last];
        }
        self.tokens[(self.pos + ahead).min(last)]
    }

    fn at(&self, kind: TokenKind) -> bool {
        self.peek().kind == kind
    }

    fn bump(&mut self) -> Token {
        let token = self.peek();
        if token.kind != TokenKind::Eof {
            self.pos += 1;
        }
        token
    }

    fn text(&self, span: Span) -> &'s str {
        &self.source[span.start as usize..span.end as usize]
    }

    /// Consumes a token of `kind`, or reports what was expected and leaves the token in place.
    fn expect(&mut self, kind: TokenKind, help: Option<&str>) -> Option<Span> {
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
    fn error(
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

    fn report(&mut self, diagnostic: Diagnostic) {
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

    fn too_deep(&mut self, span: Span, what: &str) {
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
    fn push(&mut self, kind: ExprKind, span: Span, children: &[NodeId]) -> NodeId {
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
    fn placeholder(&mut self, span: Span) -> NodeId {
        self.push(ExprKind::Literal(Literal::Null), span, &[])
    }

    fn span(&self, id: NodeId) -> Span {
        self.nodes[id as usize].span
    }

    fn kind(&self, id: NodeId) -> &ExprKind {
        &self.nodes[id as usize].kind
    }

    /// Widens a node's span to cover the brackets or prefix operators written around it.
    fn widen(&mut self, id: NodeId, span: Span) {
        let node = &mut self.nodes[id as usize];
        node.span = node.span.to(span);
    }

    fn drop_node(&mut self) {
        self.orphans = true;
    }

    // ---- expressions ----------------------------------------------------------------------

    /// `expr : conditionalOr ('?' conditionalOr ':' expr)?`, the one recursive entry point
    /// whose depth is bounded.
    fn expr(&mut self) -> NodeId {
        self.depth += 1;
        if self.depth > self.max_depth && !self.fatal {
            let span = self.peek().span;
            self.too_deep(span, "this sub-expression");
        }
        let id = if self.fatal {
            let span = self.peek().span;
            self.placeholder(span)
        } else {
            let cond = self.binary(0);
            self.conditional_tail(cond)
        };
        self.depth -= 1;
        id
    }

    fn conditional_tail(&mut self, cond: NodeId) -> NodeId {
        if !self.at(TokenKind::Question) {
            return cond;
        }
        self.bump();
        let then = self.binary(0);
        self.expect(
            TokenKind::Colon,
            Some("a conditional needs both branches: `cond ? a : b`"),
        );
        let otherwise = self.expr();
        let span = self.span(cond).to(self.span(otherwise));
        self.push(
            ExprKind::Conditional {
                cond,
                then,
                otherwise,
            },
            span,
            &[cond, then, otherwise],
        )
    }

    fn binary(&mut self, min_power: u8) -> NodeId {
        let lhs = self.unary();
        self.binary_tail(lhs, min_power)
    }

    /// Continues a binary expression whose left operand is already parsed; left-associative.
    fn binary_tail(&mut self, mut lhs: NodeId, min_power: u8) -> NodeId {
        while let Some((op, power)) = binary_op(self.peek().kind) {
            if power < min_power {
                break;
            }
            self.bump();
            let rhs = self.binary(power + 1);
            let span = self.span(lhs).to(self.span(rhs));
            lhs = self.push(ExprKind::Binary { op, lhs, rhs }, span, &[lhs, rhs]);
        }
        lhs
    }

    /// `unary : member | '!'+ member | '-'+ member`.
    fn unary(&mut self) -> NodeId {
        let first = self.peek();
        let op = match first.kind {
            TokenKind::Bang => UnaryOp::Not,
            // A lone minus before a number belongs to the literal (the grammar's `-1`).
            TokenKind::Minus
                if !matches!(self.peek_at(1).kind, TokenKind::Int | TokenKind::Float) =>
            {
                UnaryOp::Neg
            }
            _ => return self.member(),
        };
        let mut count = 0usize;
        while self.peek().kind == first.kind {
            self.bump();
            count += 1;
        }
        let operand = self.member();
        let span = first.span.to(self.span(operand));
        if count % 2 == 0 {
            self.widen(operand, span);
            return operand;
        }
        self.push(ExprKind::Unary { op, operand }, span, &[operand])
    }

    /// `member : primary ('.' field | '.' name '(' args ')' | '[' expr ']')*`.
    fn member(&mut self) -> NodeId {
        let primary = self.primary();
        self.member_tail(primary)
    }

    fn member_tail(&mut self, mut operand: NodeId) -> NodeId {
        loop {
            match self.peek().kind {
                TokenKind::Dot => operand = self.select_or_call(operand),
                TokenKind::LBracket => operand = self.index(operand),
                _ => return operand,
            }
        }
    }

    fn select_or_call(&mut self, operand: NodeId) -> NodeId {
        self.bump();
        self.optional_marker("`.?` (optional field selection)");
        let name = self.peek();
        match name.kind {
            TokenKind::Ident if self.peek_at(1).kind == TokenKind::LParen => {
                self.bump();
                self.member_call(operand, name)
            }
            TokenKind::Ident | TokenKind::EscIdent => {
                self.bump();
                let field = self.field_name(name);
                let span = self.span(operand).to(name.span);
                self.push(
                    ExprKind::Select {
                        operand,
                        field: field.into(),
                        field_span: name.span,
                    },
                    span,
                    &[operand],
                )
            }
            _ => {
                let help = match name.kind {
                    TokenKind::In | TokenKind::True | TokenKind::False | TokenKind::Null => Some(
                        "keywords cannot be field names as written; quote the name with \
                         backticks, e.g. a.`in`",
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
                operand
            }
        }
    }

    /// The field name a token spells: backticks are removed from a quoted name.
    fn field_name(&self, token: Token) -> &'s str {
        let text = self.text(token.span);
        if token.kind == TokenKind::EscIdent {
            &text[1..text.len() - 1]
        } else {
            text
        }
    }

    fn index(&mut self, operand: NodeId) -> NodeId {
        self.bump();
        self.optional_marker("`[?` (optional index)");
        self.closers.push(Closer::Index);
        let index = self.expr();
        self.closers.pop();
        let close = self.expect(TokenKind::RBracket, Some("close the index with `]`"));
        let end = close.unwrap_or(self.span(index));
        let span = self.span(operand).to(end);
        self.push(ExprKind::Index { operand, index }, span, &[operand, index])
    }

    /// Reports and skips the `?` of optional syntax, which is parsed as if absent.
    fn optional_marker(&mut self, what: &str) {
        if !self.at(TokenKind::Question) {
            return;
        }
        let token = self.bump();
        self.report(
            Diagnostic::error(
                "unsupported-syntax",
                token.span,
                format!("optional syntax {what} is not supported"),
            )
            .with_label("optional marker")
            .with_help("remove the `?`; test presence with `has(…)` or `in` instead"),
        );
    }

    fn primary(&mut self) -> NodeId {
        let token = self.peek();
        match token.kind {
            TokenKind::Int
            | TokenKind::Uint
            | TokenKind::Float
            | TokenKind::String
            | TokenKind::Bytes
            | TokenKind::True
            | TokenKind::False
            | TokenKind::Null => {
                self.bump();
                self.literal(token, None)
            }
            TokenKind::Minus
                if matches!(self.peek_at(1).kind, TokenKind::Int | TokenKind::Float) =>
            {
                self.bump();
                let number = self.bump();
                self.literal(number, Some(token.span))
            }
            TokenKind::Ident | TokenKind::Dot => self.name(),
            TokenKind::LParen => self.parenthesised(),
            TokenKind::LBracket => self.list(),
            TokenKind::LBrace => self.map(),
            TokenKind::Error => {
                self.bump();
                self.placeholder(token.span)
            }
            _ => self.missing_operand(token),
        }
    }

    fn missing_operand(&mut self, token: Token) -> NodeId {
        let help = match token.kind {
            TokenKind::Eof => Some("the expression ends too early; complete it"),
            TokenKind::EscIdent => {
                Some("backtick-quoted names are only allowed as field names after `.`")
            }
            _ => None,
        };
        self.error(
            token,
            format!("expected an expression, found {}", token.kind.describe()),
            "expected an expression here",
            help,
        );
        let wanted = self.closers.iter().any(|c| c.accepts(token.kind));
        if token.kind == TokenKind::Eof || wanted {
            return self.placeholder(token.span);
        }
        self.bump();
        if starts_expression(self.peek().kind) {
            return self.unary();
        }
        self.placeholder(token.span)
    }

    fn literal(&mut self, token: Token, sign: Option<Span>) -> NodeId {
        let text = self.text(token.span);
        let negative = sign.is_some();
        let span = sign.map_or(token.span, |s| s.to(token.span));
        let decoded = match token.kind {
            TokenKind::Int => literal::decode_int(text, negative).map(Literal::Int),
            TokenKind::Uint => literal::decode_uint(text).map(Literal::Uint),
            TokenKind::Float => literal::decode_double(text, negative).map(Literal::Double),
            TokenKind::String => literal::decode_string(text).map(|s| Literal::String(s.into())),
            TokenKind::Bytes => literal::decode_bytes(text).map(|b| Literal::Bytes(b.into())),
            TokenKind::True => Ok(Literal::Bool(true)),
            TokenKind::False => Ok(Literal::Bool(false)),
            _ => Ok(Literal::Null),
        };
        match decoded {
            Ok(value) => self.push(ExprKind::Literal(value), span, &[]),
            Err(error) => {
                self.invalid_literal(token.span, &error);
                self.placeholder(span)
            }
        }
    }

    fn invalid_literal(&mut self, token: Span, error: &LiteralError) {
        let span = Span::new(
            token.start + error.start as u32,
            token.start + error.end as u32,
        );
        let mut diagnostic = Diagnostic::error("invalid-literal", span, error.message.clone())
            .with_label("invalid literal");
        if !error.help.is_empty() {
            diagnostic = diagnostic.with_help(error.help);
        }
        self.report(diagnostic);
    }

    /// `( … )`: a run of opening parentheses is consumed in one loop, and each level's
    /// remaining operators are parsed as that level closes, so `((((x))))` costs one recursion.
    fn parenthesised(&mut self) -> NodeId {
        let mut opens = Vec::new();
        while self.at(TokenKind::LParen) {
            opens.push(self.bump().span);
            self.closers.push(Closer::Paren);
        }
        let mut inner = self.expr();
        while let Some(open) = opens.pop() {
            self.closers.pop();
            let Some(close) = self.expect(
                TokenKind::RParen,
                Some("add the missing `)` or remove the extra `(`"),
            ) else {
                for _ in 0..opens.len() {
                    self.closers.pop();
                }
                return inner;
            };
            self.widen(inner, open.to(close));
            if !opens.is_empty() {
                inner = self.member_tail(inner);
                inner = self.binary_tail(inner, 0);
                inner = self.conditional_tail(inner);
            }
        }
        inner
    }

    /// An identifier, a global call, or a message literal, possibly with a leading dot.
    fn name(&mut self) -> NodeId {
        let start = self.peek();
        let rooted = start.kind == TokenKind::Dot;
        let ident = self.peek_at(usize::from(rooted));
        if ident.kind != TokenKind::Ident {
            if rooted {
                self.bump();
            }
            self.error(
                ident,
                format!(
                    "expected an identifier after a leading `.`, found {}",
                    ident.kind.describe()
                ),
                "expected an identifier here",
                None,
            );
            return self.placeholder(start.span.to(ident.span));
        }
        if self.is_message_start(usize::from(rooted)) {
            return self.message(rooted);
        }
        if rooted {
            self.bump();
        }
        self.bump();
        let name = self.text(ident.span);
        let span = start.span.to(ident.span);
        if RESERVED.contains(&name) {
            self.reserved(ident.span, name);
        }
        if self.at(TokenKind::LParen) {
            return self.global_call(span, rooted, ident.span);
        }
        self.push(
            ExprKind::Ident {
                name: name.into(),
                rooted,
            },
            span,
            &[],
        )
    }

    fn reserved(&mut self, span: Span, name: &str) {
        self.report(
            Diagnostic::error(
                "reserved-word",
                span,
                format!("`{name}` is a reserved word and cannot be used as an identifier"),
            )
            .with_label("reserved word")
            .with_help("choose another name; reserved words are allowed only as field names"),
        );
    }

    /// Whether `ident ('.' ident)* '{'` starts at `ahead` tokens from here.
    fn is_message_start(&self, ahead: usize) -> bool {
        let mut i = ahead + 1;
        loop {
            match self.peek_at(i).kind {
                TokenKind::LBrace => return true,
                TokenKind::Dot if self.peek_at(i + 1).kind == TokenKind::Ident => i += 2,
                _ => return false,
            }
        }
    }

    fn enter(&mut self, closer: Closer) {
        self.closers.push(closer);
    }

    fn leave(&mut self) {
        self.closers.pop();
    }

    /// After an error inside brackets, skips to the next `,` or `closer` at this level.
    /// Returns whether a `,` was found (so another element may follow).
    fn synchronise(&mut self, closer: TokenKind) -> bool {
        let mut nesting = 0usize;
        loop {
            let token = self.peek();
            match token.kind {
                TokenKind::Eof => return false,
                TokenKind::LParen | TokenKind::LBracket | TokenKind::LBrace => nesting += 1,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace if nesting > 0 => {
                    nesting -= 1;
                }
                TokenKind::Comma if nesting == 0 => {
                    self.bump();
                    return true;
                }
                kind if nesting == 0 && kind == closer => return false,
                TokenKind::RParen | TokenKind::RBracket | TokenKind::RBrace => return false,
                _ => {}
            }
            self.bump();
        }
    }

    /// Parses comma-separated items up to `closer` (already past the opening bracket), with
    /// an optional trailing comma when `trailing` allows it. Returns the closing span.
    fn delimited(
        &mut self,
        closer: TokenKind,
        context: Closer,
        trailing: bool,
        mut item: impl FnMut(&mut Self),
    ) -> Option<Span> {
        self.enter(context);
        // The grammar allows a lone comma in an empty list, map or message: `[,]`.
        if trailing && self.at(TokenKind::Comma) && self.peek_at(1).kind == closer {
            self.bump();
        }
        if !self.at(closer) {
            loop {
                item(self);
                if self.at(TokenKind::Comma) {
                    self.bump();
                    if self.at(closer) {
                        if !trailing {
                            self.error(
                                self.peek(),
                                "expected an expression after `,`, found `)`".to_owned(),
                                "expected an argument here",
                                Some("remove the trailing comma"),
                            );
                        }
                        break;
                    }
                    continue;
                }
                if self.at(closer) || self.fatal {
                    break;
                }
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
                if !self.synchronise(closer) {
                    break;
                }
            }
        }
        self.leave();
        self.expect(closer, None)
    }

    fn list(&mut self) -> NodeId {
        let open = self.bump().span;
        let mut items = Vec::new();
        let close = self.delimited(TokenKind::RBracket, Closer::List, true, |p| {
            p.optional_marker("`[?x]` (optional list element)");
            items.push(p.expr());
        });
        let end = close
            .or(items.last().map(|&i| self.span(i)))
            .unwrap_or(open);
        self.push(ExprKind::List(items.clone()), open.to(end), &items)
    }

    fn map(&mut self) -> NodeId {
        let open = self.bump().span;
        let mut entries = Vec::new();
        let close = self.delimited(TokenKind::RBrace, Closer::Brace, true, |p| {
            p.optional_marker("`{?k: v}` (optional map entry)");
            let key = p.expr();
            p.expect(
                TokenKind::Colon,
                Some("map entries are written `key: value`"),
            );
            let value = p.expr();
            entries.push(MapEntry { key, value });
        });
        let end = close.unwrap_or(self.peek().span);
        let children: Vec<NodeId> = entries.iter().flat_map(|e| [e.key, e.value]).collect();
        self.push(ExprKind::Map(entries), open.to(end), &children)
    }

    fn message(&mut self, rooted: bool) -> NodeId {
        let start = self.peek().span;
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
        let mut fields = Vec::new();
        let close = self.delimited(TokenKind::RBrace, Closer::Brace, true, |p| {
            p.optional_marker("`T{?f: v}` (optional field)");
            let name = p.peek();
            if !matches!(name.kind, TokenKind::Ident | TokenKind::EscIdent) {
                p.error(
                    name,
                    format!("expected a field name, found {}", name.kind.describe()),
                    "expected a field name here",
                    Some("message fields are written `name: value`"),
                );
                p.synchronise_item();
                return;
            }
            p.bump();
            p.expect(
                TokenKind::Colon,
                Some("message fields are written `name: value`"),
            );
            let value = p.expr();
            fields.push(FieldInit {
                name: p.field_name(name).into(),
                name_span: name.span,
                value,
            });
        });
        let end = close.unwrap_or(self.peek().span);
        let children: Vec<NodeId> = fields.iter().map(|f| f.value).collect();
        self.push(
            ExprKind::Struct {
                type_name: type_name.into(),
                fields,
            },
            start.to(end),
            &children,
        )
    }

    /// Skips the rest of a malformed list item, up to the `,` or closer that ends it.
    fn synchronise_item(&mut self) {
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

    fn arguments(&mut self) -> (Vec<NodeId>, Span) {
        let open = self.bump().span;
        let mut args = Vec::new();
        let close = self.delimited(TokenKind::RParen, Closer::Args, false, |p| {
            args.push(p.expr());
        });
        let end = close.or(args.last().map(|&a| self.span(a))).unwrap_or(open);
        (args, end)
    }

    fn global_call(&mut self, start: Span, rooted: bool, name_span: Span) -> NodeId {
        let name = self.text(name_span);
        let (args, end) = self.arguments();
        let span = start.to(end);
        if !rooted && name == "has" && args.len() == 1 {
            return self.has(args[0], span);
        }
        let function = if rooted {
            format!(".{name}")
        } else {
            name.to_owned()
        };
        self.push(
            ExprKind::Call {
                target: None,
                function: function.into(),
                name_span,
                args: args.clone(),
            },
            span,
            &args,
        )
    }

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
        let function = self.text(name.span);
        let (args, end) = self.arguments();
        let span = self.span(target).to(end);
        let kind = match (function, args.len()) {
            ("all", 2) => Some(MacroKind::All),
            ("exists", 2) => Some(MacroKind::Exists),
            ("exists_one" | "existsOne", 2) => Some(MacroKind::ExistsOne),
            ("map", 2 | 3) => Some(MacroKind::Map),
            ("filter", 2) => Some(MacroKind::Filter),
            _ => None,
        };
        if let Some(kind) = kind {
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
        let var_span = self.span(args[0]);
        let ExprKind::Ident { name, rooted } = self.kind(args[0]).clone() else {
            self.report(
                Diagnostic::error("cel-syntax", var_span, "argument must be a simple name")
                    .with_label("expected a variable name")
                    .with_help(format!(
                        "the first argument of {}() names the iteration variable, e.g. \
                         `list.{}(x, …)`",
                        kind.name(),
                        kind.name()
                    )),
            );
            return self.placeholder(span);
        };
        self.drop_node();
        let var: Box<str> = if rooted {
            format!(".{name}").into()
        } else {
            name
        };
        let (predicate, transform) = match (kind, args.len()) {
            (MacroKind::Map, 2) => (None, Some(args[1])),
            (MacroKind::Map, _) => (Some(args[1]), Some(args[2])),
            _ => (Some(args[1]), None),
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
                predicate,
                transform,
            })),
            span,
            &children,
        )
    }
}

/// The ids of a node's children, in source order.
pub(crate) fn children(kind: &ExprKind) -> Vec<NodeId> {
    match kind {
        ExprKind::Literal(_) | ExprKind::Ident { .. } => Vec::new(),
        ExprKind::Select { operand, .. }
        | ExprKind::Has { operand, .. }
        | ExprKind::Unary { operand, .. } => vec![*operand],
        ExprKind::Call { target, args, .. } => target.iter().chain(args).copied().collect(),
        ExprKind::Binary { lhs, rhs, .. } => vec![*lhs, *rhs],
        ExprKind::Conditional {
            cond,
            then,
            otherwise,
        } => vec![*cond, *then, *otherwise],
        ExprKind::Index { operand, index } => vec![*operand, *index],
        ExprKind::List(items) => items.clone(),
        ExprKind::Map(entries) => entries.iter().flat_map(|e| [e.key, e.value]).collect(),
        ExprKind::Struct { fields, .. } => fields.iter().map(|f| f.value).collect(),
        ExprKind::Comprehension(c) => [Some(c.range), c.predicate, c.transform]
            .into_iter()
            .flatten()
            .collect(),
    }
}

/// Rewrites every child id of `kind` through `map`.
fn remap(kind: &mut ExprKind, map: &[NodeId]) {
    let m = |id: &mut NodeId| *id = map[*id as usize];
    match kind {
        ExprKind::Literal(_) | ExprKind::Ident { .. } => {}
        ExprKind::Select { operand, .. }
        | ExprKind::Has { operand, .. }
        | ExprKind::Unary { operand, .. } => m(operand),
        ExprKind::Call { target, args, .. } => {
            target.iter_mut().for_each(m);
            args.iter_mut().for_each(m);
        }
        ExprKind::Binary { lhs, rhs, .. } => {
            m(lhs);
            m(rhs);
        }
        ExprKind::Conditional {
            cond,
            then,
            otherwise,
        } => {
            m(cond);
            m(then);
            m(otherwise);
        }
        ExprKind::Index { operand, index } => {
            m(operand);
            m(index);
        }
        ExprKind::List(items) => items.iter_mut().for_each(m),
        ExprKind::Map(entries) => entries.iter_mut().for_each(|e| {
            m(&mut e.key);
            m(&mut e.value);
        }),
        ExprKind::Struct { fields, .. } => fields.iter_mut().for_each(|f| m(&mut f.value)),
        ExprKind::Comprehension(c) => {
            m(&mut c.range);
            c.predicate.iter_mut().for_each(m);
            c.transform.iter_mut().for_each(m);
        }
    }
}

/// Drops the nodes a macro discarded, keeping children before parents and the root last.
fn compact(nodes: Vec<Node>, root: NodeId) -> Vec<Node> {
    let mut reachable = vec![false; nodes.len()];
    reachable[root as usize] = true;
    for id in (0..nodes.len()).rev() {
        if reachable[id] {
            for child in children(&nodes[id].kind) {
                reachable[child as usize] = true;
            }
        }
    }
    let mut map = vec![0; nodes.len()];
    let mut kept = Vec::with_capacity(nodes.len());
    for (id, mut node) in nodes.into_iter().enumerate() {
        if reachable[id] {
            remap(&mut node.kind, &map);
            map[id] = kept.len() as NodeId;
            kept.push(node);
        }
    }
    kept
}
