//! The CEL lexer: turns source text into tokens with byte spans, following the lexer rules of
//! the CEL grammar (CEL.g4) exactly, including its longest-match quirks.
//!
//! The grammar's lexer is context-free, so `a.5` is the identifier `a` followed by the float
//! `.5`, `1in.0` is `1 in .0`, and `0XFF` is `0` followed by the identifier `XFF`; we reproduce
//! those splits because the differential oracle does, and because accepting anything else would
//! make our dialect drift from every other CEL implementation.
//!
//! String and bytes tokens are recognised leniently (a backslash always escapes the next
//! character) and decoded later by [`super::literal`], which reports a bad escape with its exact
//! position instead of the grammar's opaque "token recognition error". A character the grammar
//! has no token for, and an unterminated string, become [`TokenKind::Error`] tokens whose
//! diagnostics the lexer reports itself; the parser stays silent about them.

use super::Span;
use crate::Diagnostic;

/// What a token is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum TokenKind {
    /// `[A-Za-z_][A-Za-z0-9_]*` that is not a keyword.
    Ident,
    /// A backtick-quoted identifier, valid only as a field name.
    EscIdent,
    /// A signed integer literal without its sign.
    Int,
    /// An unsigned integer literal (`1u`, `0x1u`).
    Uint,
    /// A floating-point literal without its sign.
    Float,
    /// A string literal, quotes and any raw prefix included.
    String,
    /// A bytes literal, prefix and quotes included.
    Bytes,
    /// `true`.
    True,
    /// `false`.
    False,
    /// `null`.
    Null,
    /// `in`.
    In,
    /// `(`.
    LParen,
    /// `)`.
    RParen,
    /// `[`.
    LBracket,
    /// `]`.
    RBracket,
    /// `{`.
    LBrace,
    /// `}`.
    RBrace,
    /// `.`.
    Dot,
    /// `,`.
    Comma,
    /// `:`.
    Colon,
    /// `?`.
    Question,
    /// `+`.
    Plus,
    /// `-`.
    Minus,
    /// `*`.
    Star,
    /// `/`.
    Slash,
    /// `%`.
    Percent,
    /// `!`.
    Bang,
    /// `==`.
    EqEq,
    /// `!=`.
    NotEq,
    /// `<`.
    Less,
    /// `<=`.
    LessEq,
    /// `>`.
    Greater,
    /// `>=`.
    GreaterEq,
    /// `&&`.
    AndAnd,
    /// `||`.
    OrOr,
    /// Text the grammar has no token for; already reported by the lexer.
    Error,
    /// The end of the source.
    Eof,
}

impl TokenKind {
    /// How the token reads in a message.
    pub(crate) fn describe(self) -> &'static str {
        match self {
            TokenKind::Ident => "identifier",
            TokenKind::EscIdent => "quoted identifier",
            TokenKind::Int | TokenKind::Uint | TokenKind::Float => "number",
            TokenKind::String => "string",
            TokenKind::Bytes => "bytes literal",
            TokenKind::True => "`true`",
            TokenKind::False => "`false`",
            TokenKind::Null => "`null`",
            TokenKind::In => "`in`",
            TokenKind::LParen => "`(`",
            TokenKind::RParen => "`)`",
            TokenKind::LBracket => "`[`",
            TokenKind::RBracket => "`]`",
            TokenKind::LBrace => "`{`",
            TokenKind::RBrace => "`}`",
            TokenKind::Dot => "`.`",
            TokenKind::Comma => "`,`",
            TokenKind::Colon => "`:`",
            TokenKind::Question => "`?`",
            TokenKind::Plus => "`+`",
            TokenKind::Minus => "`-`",
            TokenKind::Star => "`*`",
            TokenKind::Slash => "`/`",
            TokenKind::Percent => "`%`",
            TokenKind::Bang => "`!`",
            TokenKind::EqEq => "`==`",
            TokenKind::NotEq => "`!=`",
            TokenKind::Less => "`<`",
            TokenKind::LessEq => "`<=`",
            TokenKind::Greater => "`>`",
            TokenKind::GreaterEq => "`>=`",
            TokenKind::AndAnd => "`&&`",
            TokenKind::OrOr => "`||`",
            TokenKind::Error => "invalid text",
            TokenKind::Eof => "end of expression",
        }
    }
}

/// One token: its kind and the bytes it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Token {
    /// What the token is.
    pub kind: TokenKind,
    /// Where it is.
    pub span: Span,
}

/// Splits `source` into tokens, ending with one [`TokenKind::Eof`]; lexical errors are appended
/// to `diagnostics` and leave a [`TokenKind::Error`] token in the stream.
pub(crate) fn tokenize(source: &str, diagnostics: &mut Vec<Diagnostic>) -> Vec<Token> {
    let mut lexer = Lexer {
        src: source.as_bytes(),
        text: source,
        pos: 0,
        diagnostics,
        no_close: Default::default(),
    };
    let mut tokens = Vec::with_capacity(source.len() / 3 + 2);
    while let Some(token) = lexer.next_token() {
        tokens.push(token);
    }
    let end = source.len() as u32;
    tokens.push(Token {
        kind: TokenKind::Eof,
        span: Span::new(end, end),
    });
    tokens
}

struct Lexer<'a, 'd> {
    src: &'a [u8],
    text: &'a str,
    pos: usize,
    diagnostics: &'d mut Vec<Diagnostic>,
    /// Positions from which a search for a closing triple quote is known to fail, one map per
    /// quote character and rawness (allocated on the first failure). A later search that
    /// reaches such a position in step stops there, so failed searches cost linear time in
    /// total instead of rescanning the rest of the source once per unclosed opening.
    no_close: [Vec<bool>; 4],
}

impl Lexer<'_, '_> {
    fn peek_at(&self, offset: usize) -> u8 {
        self.src.get(self.pos + offset).copied().unwrap_or(0)
    }

    fn at_end(&self) -> bool {
        self.pos >= self.src.len()
    }

    /// Skips whitespace (the grammar's set: space, tab, CR, LF, form feed) and `//` comments.
    fn skip_trivia(&mut self) {
        while !self.at_end() {
            match self.src[self.pos] {
                b' ' | b'\t' | b'\r' | b'\n' | 0x0C => self.pos += 1,
                b'/' if self.peek_at(1) == b'/' => {
                    while !self.at_end() && self.src[self.pos] != b'\n' {
                        self.pos += 1;
                    }
                }
                _ => return,
            }
        }
    }

    fn next_token(&mut self) -> Option<Token> {
        self.skip_trivia();
        if self.at_end() {
            return None;
        }
        let start = self.pos;
        let kind = self.scan(start);
        Some(Token {
            kind,
            span: Span::new(start as u32, self.pos as u32),
        })
    }

    fn scan(&mut self, start: usize) -> TokenKind {
        let c = self.src[start];
        match c {
            b'0'..=b'9' => self.number(),
            b'.' if self.peek_at(1).is_ascii_digit() => self.number(),
            b'r' | b'R' if is_quote(self.peek_at(1)) => {
                self.pos += 1;
                self.string(start, true, TokenKind::String)
            }
            b'b' | b'B' if is_quote(self.peek_at(1)) => {
                self.pos += 1;
                self.string(start, false, TokenKind::Bytes)
            }
            b'b' | b'B' if matches!(self.peek_at(1), b'r' | b'R') && is_quote(self.peek_at(2)) => {
                self.pos += 2;
                self.string(start, true, TokenKind::Bytes)
            }
            b'"' | b'\'' => self.string(start, false, TokenKind::String),
            b'a'..=b'z' | b'A'..=b'Z' | b'_' => self.word(start),
            b'`' => self.escaped_ident(start),
            _ => self.punctuation(start),
        }
    }

    fn word(&mut self, start: usize) -> TokenKind {
        while self.peek_at(0).is_ascii_alphanumeric() || self.peek_at(0) == b'_' {
            self.pos += 1;
        }
        match &self.text[start..self.pos] {
            "in" => TokenKind::In,
            "true" => TokenKind::True,
            "false" => TokenKind::False,
            "null" => TokenKind::Null,
            _ => TokenKind::Ident,
        }
    }

    /// Numbers by longest match over `NUM_FLOAT`, `NUM_INT` and `NUM_UINT`.
    fn number(&mut self) -> TokenKind {
        let start = self.pos;
        if self.src[start] == b'0' && self.peek_at(1) == b'x' && self.peek_at(2).is_ascii_hexdigit()
        {
            self.pos += 2;
            while self.peek_at(0).is_ascii_hexdigit() {
                self.pos += 1;
            }
            return self.uint_suffix();
        }
        let mut float = false;
        self.digits();
        // A fraction needs digits on both sides of the dot in the grammar (`1.` is `1` `.`).
        if self.peek_at(0) == b'.' && self.peek_at(1).is_ascii_digit() {
            float = true;
            self.pos += 1;
            self.digits();
        }
        if matches!(self.peek_at(0), b'e' | b'E') {
            let sign = usize::from(matches!(self.peek_at(1), b'+' | b'-'));
            if self.peek_at(1 + sign).is_ascii_digit() {
                float = true;
                self.pos += 1 + sign;
                self.digits();
            }
        }
        if float {
            TokenKind::Float
        } else {
            self.uint_suffix()
        }
    }

    fn digits(&mut self) {
        while self.peek_at(0).is_ascii_digit() {
            self.pos += 1;
        }
    }

    fn uint_suffix(&mut self) -> TokenKind {
        if matches!(self.peek_at(0), b'u' | b'U') {
            self.pos += 1;
            TokenKind::Uint
        } else {
            TokenKind::Int
        }
    }

    /// A string or bytes literal whose opening quote is at `self.pos`; `start` is where its
    /// prefix began.
    fn string(&mut self, start: usize, raw: bool, kind: TokenKind) -> TokenKind {
        let quote = self.src[self.pos];
        let triple = self.peek_at(1) == quote && self.peek_at(2) == quote;
        // Two quotes not followed by a third are an empty single-quoted string.
        if triple && self.has_triple_close(quote, raw) {
            self.pos += 3;
            return self.triple_body(quote, raw, kind);
        }
        self.pos += 1;
        while !self.at_end() {
            let c = self.src[self.pos];
            if c == quote {
                self.pos += 1;
                return kind;
            }
            if c == b'\n' || c == b'\r' {
                break;
            }
            if c == b'\\' && !raw {
                self.pos += 1;
                if self.at_end() || matches!(self.src[self.pos], b'\n' | b'\r') {
                    break;
                }
            }
            self.advance_char();
        }
        let hint = if self.at_end() {
            "unterminated string: add the closing quote"
        } else {
            "unterminated string: add the closing quote on this line, or use a triple-quoted \
             string for text that spans lines"
        };
        self.unterminated(start, hint)
    }

    /// Whether a triple-quoted literal opened at `self.pos` is closed somewhere; otherwise the
    /// grammar reads its first two quotes as an empty string.
    fn has_triple_close(&mut self, quote: u8, raw: bool) -> bool {
        let map = usize::from(quote == b'"') * 2 + usize::from(raw);
        let mut visited = Vec::new();
        let mut i = self.pos + 3;
        while i < self.src.len() {
            if self.no_close[map].get(i).copied().unwrap_or(false) {
                break;
            }
            visited.push(i);
            if self.src[i] == b'\\' && !raw {
                i += 2;
                continue;
            }
            if self.src[i] == quote
                && self.src.get(i + 1) == Some(&quote)
                && self.src.get(i + 2) == Some(&quote)
            {
                return true;
            }
            i += 1;
        }
        // Every position this search passed through leads to the same failure.
        let known = &mut self.no_close[map];
        if known.is_empty() {
            known.resize(self.src.len(), false);
        }
        for v in visited {
            known[v] = true;
        }
        false
    }

    fn triple_body(&mut self, quote: u8, raw: bool, kind: TokenKind) -> TokenKind {
        while !self.at_end() {
            let c = self.src[self.pos];
            if c == quote && self.peek_at(1) == quote && self.peek_at(2) == quote {
                self.pos += 3;
                return kind;
            }
            if c == b'\\' && !raw {
                self.pos += 1;
                if self.at_end() {
                    break;
                }
            }
            self.advance_char();
        }
        // Unreachable in practice: `has_triple_close` found the close first.
        kind
    }

    fn advance_char(&mut self) {
        // ASCII is the common case; otherwise step over the whole UTF-8 sequence.
        let width = if self.src[self.pos] < 0x80 {
            1
        } else {
            self.text[self.pos..]
                .chars()
                .next()
                .map_or(1, char::len_utf8)
        };
        self.pos += width;
    }

    fn unterminated(&mut self, start: usize, hint: &str) -> TokenKind {
        let span = Span::new(start as u32, self.pos as u32);
        self.diagnostics.push(
            Diagnostic::error("cel-syntax", span, "unterminated string literal")
                .with_label("this string has no closing quote")
                .with_help(hint),
        );
        TokenKind::Error
    }

    fn escaped_ident(&mut self, start: usize) -> TokenKind {
        let mut i = start + 1;
        while i < self.src.len()
            && (self.src[i].is_ascii_alphanumeric()
                || matches!(self.src[i], b'_' | b'.' | b'-' | b'/' | b' '))
        {
            i += 1;
        }
        if i > start + 1 && self.src.get(i) == Some(&b'`') {
            self.pos = i + 1;
            return TokenKind::EscIdent;
        }
        self.pos = start + 1;
        self.invalid(
            start,
            "a quoted field name needs letters, digits, `_ . - /` or spaces between two backticks",
        )
    }

    fn punctuation(&mut self, start: usize) -> TokenKind {
        let c = self.src[start];
        let next = self.peek_at(1);
        let (kind, len) = match (c, next) {
            (b'=', b'=') => (TokenKind::EqEq, 2),
            (b'!', b'=') => (TokenKind::NotEq, 2),
            (b'<', b'=') => (TokenKind::LessEq, 2),
            (b'>', b'=') => (TokenKind::GreaterEq, 2),
            (b'&', b'&') => (TokenKind::AndAnd, 2),
            (b'|', b'|') => (TokenKind::OrOr, 2),
            (b'(', _) => (TokenKind::LParen, 1),
            (b')', _) => (TokenKind::RParen, 1),
            (b'[', _) => (TokenKind::LBracket, 1),
            (b']', _) => (TokenKind::RBracket, 1),
            (b'{', _) => (TokenKind::LBrace, 1),
            (b'}', _) => (TokenKind::RBrace, 1),
            (b'.', _) => (TokenKind::Dot, 1),
            (b',', _) => (TokenKind::Comma, 1),
            (b':', _) => (TokenKind::Colon, 1),
            (b'?', _) => (TokenKind::Question, 1),
            (b'+', _) => (TokenKind::Plus, 1),
            (b'-', _) => (TokenKind::Minus, 1),
            (b'*', _) => (TokenKind::Star, 1),
            (b'/', _) => (TokenKind::Slash, 1),
            (b'%', _) => (TokenKind::Percent, 1),
            (b'!', _) => (TokenKind::Bang, 1),
            (b'<', _) => (TokenKind::Less, 1),
            (b'>', _) => (TokenKind::Greater, 1),
            _ => {
                self.advance_char();
                let help = match c {
                    b'=' => "use `==` to compare",
                    b'&' => "use `&&` for logical and",
                    b'|' => "use `||` for logical or",
                    _ => "remove it, or put it inside a string literal",
                };
                return self.invalid(start, help);
            }
        };
        self.pos += len;
        kind
    }

    fn invalid(&mut self, start: usize, help: &str) -> TokenKind {
        let span = Span::new(start as u32, self.pos as u32);
        let text = &self.text[start..self.pos];
        self.diagnostics.push(
            Diagnostic::error(
                "cel-syntax",
                span,
                format!("unexpected character {text:?} in expression"),
            )
            .with_label("not valid here")
            .with_help(help),
        );
        TokenKind::Error
    }
}

fn is_quote(c: u8) -> bool {
    c == b'"' || c == b'\''
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(src: &str) -> Vec<TokenKind> {
        let mut diags = Vec::new();
        tokenize(src, &mut diags)
            .into_iter()
            .map(|t| t.kind)
            .filter(|k| *k != TokenKind::Eof)
            .collect()
    }

    fn texts(src: &str) -> Vec<&str> {
        let mut diags = Vec::new();
        tokenize(src, &mut diags)
            .into_iter()
            .filter(|t| t.kind != TokenKind::Eof)
            .map(|t| &src[t.span.start as usize..t.span.end as usize])
            .collect()
    }

    use TokenKind as K;

    #[test]
    fn numbers_follow_the_grammar_longest_match() {
        assert_eq!(kinds("1"), [K::Int]);
        assert_eq!(kinds("1u"), [K::Uint]);
        assert_eq!(kinds("1U"), [K::Uint]);
        assert_eq!(kinds("0x1F"), [K::Int]);
        assert_eq!(kinds("0x1Fu"), [K::Uint]);
        assert_eq!(kinds("1.5"), [K::Float]);
        assert_eq!(kinds("1e5"), [K::Float]);
        assert_eq!(kinds("1.5E-3"), [K::Float]);
        assert_eq!(kinds(".5"), [K::Float]);
        assert_eq!(texts("0XFF"), ["0", "XFF"]);
        assert_eq!(texts("0x"), ["0", "x"]);
        assert_eq!(texts("1."), ["1", "."]);
        assert_eq!(texts("1.e5"), ["1", ".", "e5"]);
        assert_eq!(texts("1e"), ["1", "e"]);
        assert_eq!(texts("1in.0"), ["1", "in", ".0"]);
        assert_eq!(texts("a.5"), ["a", ".5"]);
        assert_eq!(texts("1.5u"), ["1.5", "u"]);
    }

    #[test]
    fn words_and_keywords() {
        assert_eq!(
            kinds("in true false null"),
            [K::In, K::True, K::False, K::Null]
        );
        assert_eq!(kinds("inx truex _a1"), [K::Ident, K::Ident, K::Ident]);
        assert_eq!(kinds("`a-b.c/d e`"), [K::EscIdent]);
    }

    #[test]
    fn string_prefixes() {
        assert_eq!(
            kinds("r'a' R\"a\" b'a' B'a' br'a' bR'a' BR'a'"),
            [
                K::String,
                K::String,
                K::Bytes,
                K::Bytes,
                K::Bytes,
                K::Bytes,
                K::Bytes
            ]
        );
        assert_eq!(kinds("rb'a'"), [K::Ident, K::String]);
        assert_eq!(texts("'''a''' ''"), ["'''a'''", "''"]);
        assert_eq!(texts("''''"), ["''", "''"]);
        assert_eq!(texts(r"'\''"), [r"'\''"]);
        assert_eq!(texts(r"r'\'"), [r"r'\'"]);
        assert_eq!(texts("'''a\nb'''"), ["'''a\nb'''"]);
    }

    #[test]
    fn unclosed_triple_quotes_fall_back_to_empty_strings() {
        // A failed search for the close is remembered, and later searches that reach the same
        // positions fail the same way.
        assert_eq!(texts("'''a"), ["''", "'a"]);
        assert_eq!(texts("'''a''' '''b"), ["'''a'''", "''", "'b"]);
        assert_eq!(texts("''' ''' '''x ''"), ["''' '''", "''", "'x '", "'"]);
        assert_eq!(texts("\"\"\"a '''"), ["\"\"", "\"a '''"]);
        assert_eq!(texts(r"'''\'''\'''"), ["''", r"'\''", r"'\''", "'"]);
    }

    #[test]
    fn comments_and_whitespace() {
        assert_eq!(kinds("a // c\n+\x0c\tb"), [K::Ident, K::Plus, K::Ident]);
    }

    #[test]
    fn errors_become_error_tokens_with_one_diagnostic_each() {
        for src in [
            "'abc", "\"a\nb\"", "#", "ñ", "\u{2028}", "\0", "=", "&", "|", "``", "\x0b",
        ] {
            let mut diags = Vec::new();
            let toks = tokenize(src, &mut diags);
            assert!(toks.iter().any(|t| t.kind == K::Error), "{src:?}");
            assert!(!diags.is_empty(), "{src:?}");
            assert!(diags.iter().all(|d| d.code == "cel-syntax"));
        }
        let mut diags = Vec::new();
        tokenize("'abc", &mut diags);
        assert!(
            diags[0]
                .help
                .as_deref()
                .unwrap()
                .contains("add the closing quote")
        );
    }

    #[test]
    fn operators() {
        assert_eq!(
            kinds("== != <= >= && || < > ! - + * / % ? : , . ( ) [ ] { }"),
            [
                K::EqEq,
                K::NotEq,
                K::LessEq,
                K::GreaterEq,
                K::AndAnd,
                K::OrOr,
                K::Less,
                K::Greater,
                K::Bang,
                K::Minus,
                K::Plus,
                K::Star,
                K::Slash,
                K::Percent,
                K::Question,
                K::Colon,
                K::Comma,
                K::Dot,
                K::LParen,
                K::RParen,
                K::LBracket,
                K::RBracket,
                K::LBrace,
                K::RBrace
            ]
        );
    }
}
