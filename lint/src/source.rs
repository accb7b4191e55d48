//! A file's text with the line index that turns parser positions (line and character column)
//! into byte offsets, and byte offsets into the 1-based line and character column that every
//! output format reports.

use std::ops::Range;

/// The text of one plugin file and where its lines start.
#[derive(Clone, Debug)]
pub struct SourceFile {
    /// The path as given (or `--stdin-filename`), with `/` separators.
    pub path: String,
    /// The whole text, including a byte-order mark if the file has one.
    pub text: String,
    /// Length of a leading byte-order mark (0 or 3); the YAML parser never sees it.
    bom: usize,
    /// Byte offset of the start of each line (after the mark).
    line_starts: Vec<usize>,
    /// Whether the whole text is ASCII, so that a character column is a byte column.
    ascii: bool,
}

/// A 1-based line and character column range, as reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Position {
    /// First line, 1-based.
    pub line: usize,
    /// First column, 1-based, in characters.
    pub column: usize,
    /// Last line, 1-based.
    pub end_line: usize,
    /// Column just after the end, 1-based, in characters.
    pub end_column: usize,
}

impl SourceFile {
    /// Indexes `text`.
    pub fn new(path: impl Into<String>, text: impl Into<String>) -> Self {
        let text = text.into();
        let bom = if text.starts_with('\u{feff}') { 3 } else { 0 };
        let mut line_starts = vec![bom];
        line_starts.extend(
            text.bytes()
                .enumerate()
                .skip(bom)
                .filter(|&(_, b)| b == b'\n')
                .map(|(i, _)| i + 1),
        );
        let ascii = text.is_ascii();
        Self {
            path: path.into(),
            text,
            bom,
            line_starts,
            ascii,
        }
    }

    /// The text the YAML parser reads (without a byte-order mark).
    pub fn yaml_text(&self) -> &str {
        &self.text[self.bom..]
    }

    /// The byte offset of a parser position: `line` 1-based, `col` 0-based in characters.
    pub fn byte_at(&self, line: usize, col: usize) -> usize {
        let Some(&start) = self.line_starts.get(line.saturating_sub(1)) else {
            return self.text.len();
        };
        let rest = &self.text[start..];
        let line_len = rest.find('\n').unwrap_or(rest.len());
        // The parser asks for every event's position; ASCII files need no character walk.
        if self.ascii && col <= line_len {
            return start + col;
        }
        let line_text = &rest[..line_len];
        // Columns past the end of the line (a position on the line break) stay on it.
        if let Some((i, _)) = line_text.char_indices().nth(col) {
            return start + i;
        }
        let extra = col.saturating_sub(line_text.chars().count());
        (start + line_text.len() + extra).min(self.text.len())
    }

    /// The 1-based line and character column of a byte offset.
    pub fn line_col(&self, byte: usize) -> (usize, usize) {
        let byte = byte.min(self.text.len());
        let line = self.line_starts.partition_point(|&s| s <= byte).max(1);
        let start = self.line_starts[line - 1];
        let column = self
            .text
            .get(start..byte)
            .map_or(byte.saturating_sub(start), |prefix| prefix.chars().count());
        (line, column + 1)
    }

    /// The reported position of a byte range.
    pub fn position(&self, span: &Range<usize>) -> Position {
        let (line, column) = self.line_col(span.start);
        let (end_line, end_column) = self.line_col(span.end.max(span.start));
        Position {
            line,
            column,
            end_line,
            end_column,
        }
    }

    /// The text of line `line` (1-based), without its line break.
    pub fn line_text(&self, line: usize) -> &str {
        let Some(&start) = self.line_starts.get(line.wrapping_sub(1)) else {
            return "";
        };
        let rest = &self.text[start..];
        let end = rest.find('\n').unwrap_or(rest.len());
        rest[..end].trim_end_matches('\r')
    }

    /// The byte offset where line `line` (1-based) starts; the text's length past the last
    /// line, and the mark's end for line 1.
    pub fn line_start(&self, line: usize) -> usize {
        self.line_starts
            .get(line.saturating_sub(1))
            .copied()
            .unwrap_or(self.text.len())
    }

    /// The number of lines.
    pub fn line_count(&self) -> usize {
        self.line_starts.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn columns_count_characters() {
        let src = SourceFile::new("a.yaml", "name: é\nx: ab\n");
        // `é` is two bytes: the line break after it is byte 8, line 2 starts at byte 9.
        assert_eq!(src.byte_at(1, 6), 6);
        assert_eq!(src.byte_at(1, 7), 8);
        assert_eq!(src.byte_at(2, 3), 12);
        assert_eq!(src.line_col(12), (2, 4));
        assert_eq!(src.line_col(6), (1, 7));
        assert_eq!(src.line_col(8), (1, 8));
    }

    #[test]
    fn byte_order_mark_is_skipped() {
        let src = SourceFile::new("a.yaml", "\u{feff}a: 1\n");
        assert_eq!(src.yaml_text(), "a: 1\n");
        assert_eq!(src.byte_at(1, 0), 3);
        assert_eq!(src.line_col(3), (1, 1));
    }
}
