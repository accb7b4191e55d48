//! Maps a byte offset inside a scalar's value (where the analyzer reports a CEL error) back to
//! the byte of the file that wrote it, for every scalar style.
//!
//! The value is the file's text minus what the style adds: quotes, escapes, indentation, line
//! breaks folded into spaces. So we cut the scalar's source into units, each one value
//! character or nothing (an indentation space, a closing quote, an escaped line break), decode
//! double-quoted escapes into the character they stand for, and align the value against the
//! units from left to right. Only whitespace is ever dropped or changed by folding, so
//! non-whitespace characters (where diagnostics start) always land on the character that wrote
//! them.

use std::ops::Range;

use crate::yaml::{Node, Style};

/// One piece of the scalar's source: the bytes it covers and the character it contributes, if
/// it is a plain character or an escape. Line breaks are kept as `'\n'` with `is_break` set so
/// that folding (a break that became a space, or vanished) still aligns.
struct Unit {
    bytes: Range<usize>,
    ch: char,
    is_break: bool,
}

/// The file byte range of `value_span` (bytes of the scalar's value), for a scalar `node` read
/// from `file_text`. Falls back to the whole node when the node is not a scalar.
pub fn map_span(file_text: &str, node: &Node, value_span: Range<usize>) -> Range<usize> {
    let Some(scalar) = node.scalar() else {
        return node.span.clone();
    };
    let map = value_map(file_text, node.span.clone(), scalar.style, &scalar.text);
    let lookup = |k: usize| -> Option<Range<usize>> {
        map.iter().find(|(v, _)| *v == k).map(|(_, r)| r.clone())
    };
    let start = lookup(value_span.start).map_or(node.span.start, |r| r.start);
    let end = if value_span.end > value_span.start {
        // The end is just after the last mapped character of the range (a trailing line break
        // of a block scalar lies outside the node and maps to nothing).
        let last = value_span.end.min(scalar.text.len());
        let upto = map.partition_point(|(v, _)| *v < last);
        map[..upto]
            .last()
            .filter(|(v, _)| *v >= value_span.start)
            .map_or(start, |(_, r)| r.end)
    } else {
        start
    };
    start..end.max(start)
}

/// The file bytes that write a scalar's value character for character: a plain scalar on one
/// line, or a quoted one without escapes or line breaks. Fixes replace these bytes, so the
/// quoting around them stays as written; `None` when the value is not written literally.
pub fn literal_span(file_text: &str, node: &Node) -> Option<Range<usize>> {
    let scalar = node.scalar()?;
    let span = match scalar.style {
        Style::Plain => node.span.clone(),
        Style::SingleQuoted | Style::DoubleQuoted => {
            node.span.start.checked_add(1)?..node.span.end.checked_sub(1)?
        }
        Style::Literal | Style::Folded => return None,
    };
    let written = file_text.get(span.clone())?;
    (written == scalar.text && !written.contains(['\n', '\r'])).then_some(span)
}

/// Pairs of (value byte offset, file byte range) for every value character that could be
/// aligned.
fn value_map(
    file_text: &str,
    span: Range<usize>,
    style: Style,
    value: &str,
) -> Vec<(usize, Range<usize>)> {
    let units = units(file_text, span, style);
    let mut out = Vec::with_capacity(value.len());
    let mut u = 0;
    for (k, ch) in value.char_indices() {
        while u < units.len() {
            let unit = &units[u];
            u += 1;
            let matches = unit.ch == ch || (unit.is_break && (ch == ' ' || ch == '\n'));
            if matches {
                out.push((k, unit.bytes.clone()));
                break;
            }
        }
    }
    out
}

/// Cuts the scalar's source into units.
fn units(file_text: &str, span: Range<usize>, style: Style) -> Vec<Unit> {
    let Some(src) = file_text.get(span.clone()) else {
        return Vec::new();
    };
    let base = span.start;
    let mut units = Vec::with_capacity(src.len());
    let mut chars = src.char_indices().peekable();
    // The opening quote writes no value character.
    if matches!(style, Style::SingleQuoted | Style::DoubleQuoted) {
        chars.next();
    }
    while let Some((i, c)) = chars.next() {
        let at = base + i;
        match c {
            '\r' if chars.peek().is_some_and(|&(_, n)| n == '\n') => {
                chars.next();
                units.push(Unit {
                    bytes: at..at + 2,
                    ch: '\n',
                    is_break: true,
                });
            }
            '\n' => units.push(Unit {
                bytes: at..at + 1,
                ch: '\n',
                is_break: true,
            }),
            '\'' if style == Style::SingleQuoted => {
                // `''` stands for one quote; a lone quote closes the scalar.
                if chars.peek().is_some_and(|&(_, n)| n == '\'') {
                    let (j, _) = chars.next().unwrap_or((i, c));
                    units.push(Unit {
                        bytes: at..base + j + 1,
                        ch: '\'',
                        is_break: false,
                    });
                }
            }
            '"' if style == Style::DoubleQuoted => {}
            '\\' if style == Style::DoubleQuoted => {
                let Some((escape_at, escape)) = chars.next() else {
                    break;
                };
                let mut end = base + escape_at + escape.len_utf8();
                let decoded = match escape {
                    'x' | 'u' | 'U' => {
                        let digits = match escape {
                            'x' => 2,
                            'u' => 4,
                            _ => 8,
                        };
                        let mut hex = String::new();
                        for _ in 0..digits {
                            match chars.peek() {
                                Some(&(digit_at, digit)) if digit.is_ascii_hexdigit() => {
                                    hex.push(digit);
                                    end = base + digit_at + 1;
                                    chars.next();
                                }
                                _ => break,
                            }
                        }
                        u32::from_str_radix(&hex, 16).ok().and_then(char::from_u32)
                    }
                    '\n' | '\r' => {
                        // An escaped line break joins the lines: no value character.
                        if escape == '\r' && chars.peek().is_some_and(|&(_, n)| n == '\n') {
                            chars.next();
                        }
                        None
                    }
                    other => Some(unescape(other)),
                };
                if let Some(ch) = decoded {
                    units.push(Unit {
                        bytes: at..end,
                        ch,
                        is_break: false,
                    });
                }
            }
            _ => units.push(Unit {
                bytes: at..at + c.len_utf8(),
                ch: c,
                is_break: false,
            }),
        }
    }
    units
}

/// The character a one-letter double-quoted escape stands for.
fn unescape(e: char) -> char {
    match e {
        '0' => '\0',
        'a' => '\u{7}',
        'b' => '\u{8}',
        't' | '\t' => '\t',
        'n' => '\n',
        'v' => '\u{b}',
        'f' => '\u{c}',
        'r' => '\r',
        'e' => '\u{1b}',
        'N' => '\u{85}',
        '_' => '\u{a0}',
        'L' => '\u{2028}',
        'P' => '\u{2029}',
        other => other,
    }
}
