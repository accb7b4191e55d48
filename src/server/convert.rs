//! Between the lint's byte offsets and LSP positions (UTF-16 code units by default, UTF-8 when
//! the client offers it), between `file:` URIs and paths, and from findings to LSP diagnostics.

use std::path::{Path, PathBuf};

use ozcheck_lint::{Finding, Severity};

use super::protocol::{
    CodeDescription, Diagnostic, DiagnosticSeverity, Position, Range, TextEdit, Uri, encoding,
};

/// How the client counts characters in a line.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Encoding {
    /// UTF-16 code units (the protocol's default).
    Utf16,
    /// Bytes.
    Utf8,
}

impl Encoding {
    /// The encoding to use among the client's: UTF-8 when offered, else UTF-16.
    pub fn choose(offered: Option<&[String]>) -> Encoding {
        if offered.is_some_and(|kinds| kinds.iter().any(|k| k == encoding::UTF8)) {
            Encoding::Utf8
        } else {
            Encoding::Utf16
        }
    }

    /// The protocol's name of the encoding.
    pub fn kind(self) -> &'static str {
        match self {
            Encoding::Utf16 => encoding::UTF16,
            Encoding::Utf8 => encoding::UTF8,
        }
    }
}

/// Where the lines of a text start, to turn offsets into positions and back.
pub struct LineIndex<'a> {
    text: &'a str,
    starts: Vec<usize>,
    encoding: Encoding,
}

impl<'a> LineIndex<'a> {
    /// Indexes `text`.
    pub fn new(text: &'a str, encoding: Encoding) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Self {
            text,
            starts,
            encoding,
        }
    }

    /// The position of a byte offset (clamped to the text and to a character boundary).
    pub fn position(&self, offset: usize) -> Position {
        let mut offset = offset.min(self.text.len());
        while !self.text.is_char_boundary(offset) {
            offset -= 1;
        }
        let line = self.starts.partition_point(|&s| s <= offset) - 1;
        let prefix = &self.text[self.starts[line]..offset];
        let character = match self.encoding {
            Encoding::Utf8 => prefix.len(),
            Encoding::Utf16 => prefix.chars().map(char::len_utf16).sum(),
        };
        Position::new(line as u32, character as u32)
    }

    /// The byte offset of a position; a character past the end of its line stays on the line.
    pub fn offset(&self, position: Position) -> usize {
        let Some(&start) = self.starts.get(position.line as usize) else {
            return self.text.len();
        };
        let line = &self.text[start..];
        let line = &line[..line.find('\n').unwrap_or(line.len())];
        let wanted = position.character as usize;
        let mut counted = 0;
        for (i, c) in line.char_indices() {
            if counted >= wanted {
                return start + i;
            }
            counted += match self.encoding {
                Encoding::Utf8 => c.len_utf8(),
                Encoding::Utf16 => c.len_utf16(),
            };
        }
        start + line.len()
    }

    /// The range of a byte span.
    pub fn range(&self, span: &std::ops::Range<usize>) -> Range {
        Range::new(
            self.position(span.start),
            self.position(span.end.max(span.start)),
        )
    }
}

/// The path of a `file:` URI (percent-decoded), if it is one.
pub fn uri_to_path(uri: &Uri) -> Option<PathBuf> {
    let rest = uri.as_str().strip_prefix("file://")?;
    let path = rest.split(['?', '#']).next().unwrap_or(rest);
    let mut bytes = Vec::with_capacity(path.len());
    let raw = path.as_bytes();
    let mut i = 0;
    while i < raw.len() {
        if raw[i] == b'%'
            && let Some(byte) = raw
                .get(i + 1..i + 3)
                .and_then(|h| std::str::from_utf8(h).ok())
                .and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            bytes.push(byte);
            i += 3;
            continue;
        }
        bytes.push(raw[i]);
        i += 1;
    }
    let decoded = String::from_utf8(bytes).ok()?;
    // `file:///C:/x` on Windows; `file:///x` elsewhere.
    let decoded = match decoded.as_bytes() {
        [b'/', drive, b':', ..] if drive.is_ascii_alphabetic() => decoded[1..].to_owned(),
        _ => decoded,
    };
    Some(PathBuf::from(decoded))
}

/// Where a rule is documented, as a diagnostic's code description: the one URL the lint
/// builds for every output (an absolute URL; LSP wants a URI, not a path).
fn rule_doc(rule: &str) -> CodeDescription {
    CodeDescription {
        href: ozcheck_lint::docs::rule_url(rule),
    }
}

/// A finding as an LSP diagnostic (the help follows the message on its own line).
pub fn diagnostic(index: &LineIndex<'_>, finding: &Finding) -> Diagnostic {
    let mut message = finding.message.clone();
    if let Some(help) = &finding.help {
        message.push_str("\nhelp: ");
        message.push_str(help);
    }
    Diagnostic {
        range: index.range(&finding.span),
        severity: Some(match finding.severity {
            Severity::Error => DiagnosticSeverity::ERROR,
            Severity::Warning => DiagnosticSeverity::WARNING,
        }),
        code: Some(finding.rule.to_owned()),
        code_description: Some(rule_doc(finding.rule)),
        source: Some("ozcheck"),
        message,
    }
}

/// The text edits of a finding's fix.
pub fn edits(index: &LineIndex<'_>, finding: &Finding) -> Vec<TextEdit> {
    finding
        .fix
        .iter()
        .flat_map(|fix| &fix.edits)
        .map(|edit| TextEdit::new(index.range(&edit.span), edit.replacement.clone()))
        .collect()
}

/// A path as the lint reports it (with `/` separators).
pub fn display(path: &Path) -> String {
    path.to_string_lossy().replace('\\', "/")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn utf16_positions_count_surrogate_pairs() {
        let text = "a: 😀é\nb: x\n";
        let index = LineIndex::new(text, Encoding::Utf16);
        // `😀` is two UTF-16 units and four bytes; `é` one unit and two bytes.
        assert_eq!(index.position(7), Position::new(0, 5));
        assert_eq!(index.offset(Position::new(0, 5)), 7);
        assert_eq!(index.offset(Position::new(1, 99)), text.len() - 1);
        let utf8 = LineIndex::new(text, Encoding::Utf8);
        assert_eq!(utf8.position(7), Position::new(0, 7));
        assert_eq!(utf8.offset(Position::new(9, 0)), text.len());
    }

    #[test]
    fn file_uris_decode_to_paths() {
        let uri = Uri::new("file:///home/a%20b/flows/w.yaml");
        assert_eq!(
            uri_to_path(&uri),
            Some(PathBuf::from("/home/a b/flows/w.yaml"))
        );
        let other = Uri::new("untitled:Untitled-1");
        assert_eq!(uri_to_path(&other), None);
    }
}
