//! Inline suppressions: `# ozcheck: ignore[rule-id]` or `# ozcheck: ignore[a, b]` on the
//! finding's line or on the line above it.

use crate::source::SourceFile;

const MARKER: &str = "ozcheck: ignore[";

/// The rule ids a line's comment suppresses.
fn ignored(line: &str) -> Vec<&str> {
    let Some(hash) = comment_start(line) else {
        return Vec::new();
    };
    let comment = line[hash + 1..].trim_start();
    let Some(rest) = comment.strip_prefix(MARKER) else {
        return Vec::new();
    };
    let Some(end) = rest.find(']') else {
        return Vec::new();
    };
    rest[..end].split(',').map(str::trim).collect()
}

/// Where a YAML comment starts: a `#` at the line start or after whitespace (a `#` inside a
/// word, as in `a#b`, is text).
fn comment_start(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    (0..bytes.len())
        .find(|&i| bytes[i] == b'#' && (i == 0 || bytes[i - 1] == b' ' || bytes[i - 1] == b'\t'))
}

/// Whether a finding of `rule` starting on `line` (1-based) is suppressed.
pub fn is_suppressed(source: &SourceFile, line: usize, rule: &str) -> bool {
    let hit = |l: usize| ignored(source.line_text(l)).contains(&rule);
    hit(line) || (line > 1 && hit(line - 1))
}
