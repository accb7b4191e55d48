//! The `${{ … }}` template grammar of flow texts (a wait step's `subject`, an approval's
//! `details`): where each expression is, shared by the lint (which checks the expressions) and
//! the runtime (which evaluates them), so both read the same text the same way.

use std::ops::Range;

/// A `${{ … }}` in a text: the bytes of the expression inside, or an unclosed opening.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Template {
    /// A closed template; the range is the expression between the braces.
    Expr(Range<usize>),
    /// `${{` without `}}`; the range is the opening.
    Unclosed(Range<usize>),
}

/// Finds the templates of a text, left to right. The expression ends at the first `}}`.
pub fn templates(text: &str) -> Vec<Template> {
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(open) = text[at..].find("${{") {
        let start = at + open + 3;
        let Some(close) = text[start..].find("}}") else {
            out.push(Template::Unclosed(at + open..start));
            break;
        };
        out.push(Template::Expr(start..start + close));
        at = start + close + 2;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expressions_and_unclosed_openings() {
        let text = "a ${{ x }} b ${{y}}${{ z";
        assert_eq!(
            templates(text),
            [
                Template::Expr(5..8),
                Template::Expr(16..17),
                Template::Unclosed(19..22)
            ]
        );
        assert_eq!(templates("no templates"), []);
    }
}
