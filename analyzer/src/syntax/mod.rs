//! The CEL front end: lexer, parser and literal decoding, written for exact spans and
//! hostile input.

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
