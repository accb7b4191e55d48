//! The CEL parser: precedence climbing over the token stream, building the node arena bottom-up
//! with the span of every whole sub-expression.
//!
//! The grammar is CEL.g4, optional syntax included (`a.?b`, `a[?i]`, `[?x]`, `{?k: v}`,
//! `T{?f: v}`; whether an environment allows it is the checker's business). Operator precedence, lowest first: the
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
//!   global function name (they are allowed as field and member-function names).

mod compound;
mod support;
mod tree;

use super::lexer::{Token, TokenKind, tokenize};
use super::literal::{self, LiteralError};
use super::{Ast, BinaryOp, ExprKind, Literal, Node, NodeId, ParseOptions, Span, UnaryOp};
use crate::Diagnostic;

/// Most errors reported for one expression; past this the parse stops.
pub(crate) const MAX_ERRORS: usize = 20;

/// Whether CEL reserves `name`: refused as an identifier and as a global function name.
fn is_reserved(name: &str) -> bool {
    matches!(
        name,
        "as" | "break"
            | "const"
            | "continue"
            | "else"
            | "for"
            | "function"
            | "if"
            | "import"
            | "let"
            | "loop"
            | "package"
            | "namespace"
            | "return"
            | "var"
            | "void"
            | "while"
    )
}

/// Parses `source` into an AST, or returns every error found (sorted by position).
pub fn parse(source: &str, options: &ParseOptions) -> Result<Ast, Vec<Diagnostic>> {
    if source.len() > options.max_bytes || u32::try_from(source.len()).is_err() {
        return Err(vec![too_long(source, options.max_bytes)]);
    }
    let mut diagnostics = Vec::new();
    let tokens = tokenize(source, &mut diagnostics);
    // Nearly every node consumes a token of its own, so this avoids growing the arena.
    let capacity = tokens.len();
    let mut parser = Parser {
        source,
        tokens,
        pos: 0,
        nodes: Vec::with_capacity(capacity),
        heights: Vec::with_capacity(capacity),
        diagnostics,
        depth: 0,
        max_depth: options.max_depth,
        fatal: false,
        closers: Vec::new(),
        scratch: Vec::new(),
        optional_scratch: Vec::new(),
        field_scratch: Vec::new(),
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
    let nodes = if orphans {
        tree::compact(nodes, root)
    } else {
        nodes
    };
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
    /// Items of the bracketed lists being parsed, innermost last; a list takes its own off
    /// the top when it closes (no allocation per list while parsing, and small frames).
    scratch: Vec<NodeId>,
    /// Whether each element or entry of the lists and maps being parsed was marked `?`, in step
    /// with `scratch` (one flag per list element, one per map entry).
    optional_scratch: Vec<bool>,
    /// Field initialisers of the message literals being parsed, likewise.
    field_scratch: Vec<super::FieldInit>,
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

impl Parser<'_> {
    // ---- expressions ----------------------------------------------------------------------
    //
    // Every function on the recursive path (`expr` → … → `primary` → a bracketed construct →
    // `expr`) keeps its frame small: it only parses children and hands node building and error
    // reporting to separate functions, which are not on the stack while the recursion runs.
    // Those are `#[inline(never)]`: a release build otherwise inlines them back into the
    // recursive functions, whose frames then took about 1.5 KiB a level, and
    // `f(f(f(…)))` at the maximum depth overflowed the 256 KiB stack `tests/robustness.rs`
    // parses on (it needed about 400 KiB). With them, debug and release builds both stay
    // within it.

    /// `expr : conditionalOr ('?' conditionalOr ':' expr)?`, the one recursive entry point
    /// whose depth is bounded.
    fn expr(&mut self) -> NodeId {
        self.depth += 1;
        let id = if self.depth_ok() {
            let cond = self.binary(0);
            self.conditional_tail(cond)
        } else {
            self.stopped()
        };
        self.depth -= 1;
        id
    }

    #[inline(never)]
    fn depth_ok(&mut self) -> bool {
        if self.depth > self.max_depth && !self.fatal {
            let span = self.peek().span;
            self.too_deep(span, "this sub-expression");
        }
        !self.fatal
    }

    #[inline(never)]
    fn stopped(&mut self) -> NodeId {
        let span = self.peek().span;
        self.placeholder(span)
    }

    fn conditional_tail(&mut self, cond: NodeId) -> NodeId {
        if !self.at(TokenKind::Question) {
            return cond;
        }
        self.bump();
        let then = self.binary(0);
        self.expect_colon();
        let otherwise = self.expr();
        self.conditional_node(cond, then, otherwise)
    }

    #[inline(never)]
    fn expect_colon(&mut self) {
        self.expect(
            TokenKind::Colon,
            Some("a conditional needs both branches: `cond ? a : b`"),
        );
    }

    #[inline(never)]
    fn conditional_node(&mut self, cond: NodeId, then: NodeId, otherwise: NodeId) -> NodeId {
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
            lhs = self.binary_node(op, lhs, rhs);
        }
        lhs
    }

    #[inline(never)]
    fn binary_node(&mut self, op: BinaryOp, lhs: NodeId, rhs: NodeId) -> NodeId {
        let span = self.span(lhs).to(self.span(rhs));
        self.push(ExprKind::Binary { op, lhs, rhs }, span, &[lhs, rhs])
    }

    /// `unary : member | '!'+ member | '-'+ member`.
    fn unary(&mut self) -> NodeId {
        let kind = self.peek().kind;
        // A lone minus before a number belongs to the literal (the grammar's `-1`).
        let number_next = matches!(self.peek_at(1).kind, TokenKind::Int | TokenKind::Float);
        if kind == TokenKind::Bang || kind == TokenKind::Minus && !number_next {
            return self.prefix_run();
        }
        self.member()
    }

    /// A run of `!` or of `-` and the member it applies to, consumed in one loop.
    fn prefix_run(&mut self) -> NodeId {
        let first = self.bump();
        let mut count = 1usize;
        while self.peek().kind == first.kind {
            self.bump();
            count += 1;
        }
        let operand = self.member();
        let op = if first.kind == TokenKind::Bang {
            UnaryOp::Not
        } else {
            UnaryOp::Neg
        };
        self.unary_node(op, count, first.span, operand)
    }

    /// An odd run of `op` is one operator; an even run cancels out and only widens the span.
    #[inline(never)]
    fn unary_node(&mut self, op: UnaryOp, count: usize, first: Span, operand: NodeId) -> NodeId {
        let span = first.to(self.span(operand));
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
            | TokenKind::Null => self.literal(None),
            TokenKind::Minus
                if matches!(self.peek_at(1).kind, TokenKind::Int | TokenKind::Float) =>
            {
                self.literal(Some(token.span))
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

    #[inline(never)]
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
        // Skip the stray token; if an operand follows, parse it so the rest still gets checked.
        self.bump();
        if starts_expression(self.peek().kind) {
            return self.unary();
        }
        self.placeholder(token.span)
    }

    /// A literal token, after the `-` at `sign` when there is one (only before a number: the
    /// caller sees any other `-` as an operator).
    #[inline(never)]
    fn literal(&mut self, sign: Option<Span>) -> NodeId {
        if sign.is_some() {
            self.bump();
        }
        let token = self.bump();
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

    #[inline(never)]
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
            let Some(close) = self.expect_close_paren() else {
                self.closers.truncate(self.closers.len() - opens.len());
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

    #[inline(never)]
    fn expect_close_paren(&mut self) -> Option<Span> {
        self.expect(
            TokenKind::RParen,
            Some("add the missing `)` or remove the extra `(`"),
        )
    }

    /// An identifier, a global call, or a message literal, possibly with a leading dot.
    fn name(&mut self) -> NodeId {
        let start = self.peek();
        let rooted = start.kind == TokenKind::Dot;
        let ident = self.peek_at(usize::from(rooted));
        if ident.kind != TokenKind::Ident {
            return self.missing_name(start, ident);
        }
        if self.is_message_start(usize::from(rooted)) {
            return self.message(rooted);
        }
        self.pos += 1 + usize::from(rooted);
        if self.at(TokenKind::LParen) {
            return self.global_call(start.span, rooted, ident.span);
        }
        self.ident_node(start.span, rooted, ident.span)
    }

    #[inline(never)]
    fn missing_name(&mut self, start: Token, ident: Token) -> NodeId {
        if start.kind == TokenKind::Dot {
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
        self.placeholder(start.span.to(ident.span))
    }

    #[inline(never)]
    fn ident_node(&mut self, start: Span, rooted: bool, ident: Span) -> NodeId {
        let name = self.text(ident);
        self.check_reserved(ident);
        self.push(
            ExprKind::Ident {
                name: name.into(),
                rooted,
            },
            start.to(ident),
            &[],
        )
    }

    #[inline(never)]
    fn check_reserved(&mut self, ident: Span) {
        let name = self.text(ident);
        if !is_reserved(name) {
            return;
        }
        self.report(
            Diagnostic::error(
                "reserved-word",
                ident,
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
}
