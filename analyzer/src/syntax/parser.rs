//! Placeholder until the parser lands (replaced by the recursive-descent parser).

use super::{Ast, ParseOptions};
use crate::Diagnostic;

/// Parses `source` into an AST, or returns every syntax error found.
pub fn parse(source: &str, options: &ParseOptions) -> Result<Ast, Vec<Diagnostic>> {
    let _ = (source, options);
    Err(Vec::new())
}
