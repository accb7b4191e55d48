//! The CEL front end: lexer, parser and literal decoding, written for exact spans and
//! hostile input.
//!
//! [`parse`] turns a source into an [`Ast`] whose every node carries the byte span of its whole
//! sub-expression, or into diagnostics (codes `expression-too-long`, `nesting-too-deep`,
//! `cel-syntax`, `invalid-literal`, `reserved-word`, `unsupported-syntax`; see the parser
//! module). [`print`] writes an AST back as CEL that parses to the same tree.
//!
//! # Untrusted expressions
//!
//! - The length limit ([`ParseOptions::max_bytes`]) is checked before anything else.
//! - Lexing and parsing take time and memory linear in the source length.
//! - The parser's recursion and the height of the tree are both bounded by
//!   [`ParseOptions::max_depth`]; runs of `(`, `!` and `-` are consumed in loops. At the default
//!   limits a debug build parses every 1 KiB shape we know within a 256 KiB stack.
//! - At most 20 errors are reported; no input panics (fuzzed, see `fuzz/`).

mod ast;
mod lexer;
mod literal;
mod parser;
mod print;

pub use ast::{
    Ast, BinaryOp, Comprehension, ExprKind, FieldInit, Literal, MacroKind, MapEntry, Node, NodeId,
    Span, UnaryOp,
};
pub use parser::parse;
pub use print::print;

/// Limits the parser enforces before and while it parses.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ParseOptions {
    /// Largest accepted source, in bytes (checked before anything else). Default 1024.
    pub max_bytes: usize,
    /// Deepest accepted nesting of the tree (operands, arguments, selections). Default 250.
    pub max_depth: u32,
}

impl Default for ParseOptions {
    fn default() -> Self {
        Self {
            max_bytes: 1024,
            max_depth: 250,
        }
    }
}
