//! Exact decoding of CEL literal tokens: integers, unsigned integers, doubles, strings and bytes.
//!
//! The rules are CEL.g4's lexer rules plus cel-go's unescape step:
//! - a raw string (`r'…'`, `R"…"`, and bytes `br'…'`) keeps every backslash as written;
//! - carriage returns in the source text of a literal become line feeds (`\r\n` and a lone `\r`
//!   both read as `\n`), so a filter means the same on every platform;
//! - `\xHH`, `\XHH` and octal `\OOO` are code points in a string but raw byte values in bytes;
//! - `\u` and `\U` are code points, refused in bytes, and refused when they name a surrogate or
//!   lie past U+10FFFF;
//! - an integer is checked against the 64-bit range with its sign, so `-9223372036854775808`
//!   and `-0x8000000000000000` are valid and one more is not;
//! - a double must be finite.
//!
//! Errors carry the byte range of the offending text relative to the token, so the parser can
//! underline the exact escape.

/// Why a literal token does not decode, with the bytes (relative to the token) at fault.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct LiteralError {
    /// First offending byte, relative to the start of the token.
    pub start: usize,
    /// One past the last offending byte, relative to the start of the token.
    pub end: usize,
    /// What is wrong, as one sentence.
    pub message: String,
    /// How to fix it.
    pub help: &'static str,
}

impl LiteralError {
    fn new(start: usize, end: usize, message: impl Into<String>, help: &'static str) -> Self {
        Self {
            start,
            end,
            message: message.into(),
            help,
        }
    }
}

/// Decodes an integer token (`123`, `0x7B`), negated when `negative`.
pub(crate) fn decode_int(text: &str, negative: bool) -> Result<i64, LiteralError> {
    let (digits, radix) = match text.strip_prefix("0x") {
        Some(hex) => (hex, 16),
        None => (text, 10),
    };
    // Accumulating towards the sign keeps i64::MIN representable.
    let mut value: i64 = 0;
    for c in digits.chars() {
        let d = i64::from(c.to_digit(radix).unwrap_or(0));
        let next = value.checked_mul(i64::from(radix)).and_then(|v| {
            if negative {
                v.checked_sub(d)
            } else {
                v.checked_add(d)
            }
        });
        match next {
            Some(v) => value = v,
            None => {
                return Err(LiteralError::new(
                    0,
                    text.len(),
                    "integer literal out of range for a 64-bit signed int",
                    "ints range from -9223372036854775808 to 9223372036854775807; add a `u` \
                     suffix for an unsigned int, or use a double",
                ));
            }
        }
    }
    Ok(value)
}

/// Decodes an unsigned integer token (`123u`, `0x7Bu`).
pub(crate) fn decode_uint(text: &str) -> Result<u64, LiteralError> {
    let body = &text[..text.len().saturating_sub(1)];
    let (digits, radix) = match body.strip_prefix("0x") {
        Some(hex) => (hex, 16),
        None => (body, 10),
    };
    u64::from_str_radix(digits, radix).map_err(|_| {
        LiteralError::new(
            0,
            text.len(),
            "unsigned integer literal out of range for a 64-bit unsigned int",
            "uints range from 0u to 18446744073709551615u",
        )
    })
}

/// Decodes a double token (`1.5`, `2e10`, `.5`), negated when `negative`.
pub(crate) fn decode_double(text: &str, negative: bool) -> Result<f64, LiteralError> {
    let parsed = text.parse::<f64>().ok().filter(|d| d.is_finite());
    match parsed {
        Some(d) if negative => Ok(-d),
        Some(d) => Ok(d),
        None => Err(LiteralError::new(
            0,
            text.len(),
            "double literal out of range",
            "doubles must be finite (at most about 1.8e308 in magnitude)",
        )),
    }
}

/// Decodes a string token, prefix and quotes included.
pub(crate) fn decode_string(text: &str) -> Result<String, LiteralError> {
    let body = body_of(text, false);
    let plain = &text[body.offset..body.offset + body.len];
    // Most strings have nothing to decode: copy them as they are.
    if !plain.contains(['\\', '\r']) {
        return Ok(plain.to_owned());
    }
    let bytes = unescape(text, false)?;
    // Every escape in a string yields a whole code point, so the result is valid UTF-8.
    String::from_utf8(bytes)
        .map_err(|_| LiteralError::new(0, text.len(), "string literal is not valid UTF-8", ""))
}

/// Decodes a bytes token, `b`/`B` prefix, raw marker and quotes included.
pub(crate) fn decode_bytes(text: &str) -> Result<Vec<u8>, LiteralError> {
    unescape(text, true)
}

/// Where the body of a string or bytes token lies and how to read it.
struct Body {
    /// Offset of the body in the token.
    offset: usize,
    /// Length of the body.
    len: usize,
    /// Whether escapes are kept verbatim.
    raw: bool,
}

fn body_of(text: &str, is_bytes: bool) -> Body {
    let bytes = text.as_bytes();
    let mut i = usize::from(is_bytes);
    let raw = matches!(bytes.get(i), Some(b'r' | b'R'));
    if raw {
        i += 1;
    }
    let quote = bytes.get(i).copied().unwrap_or(b'"');
    let triple =
        text.len() >= i + 6 && bytes.get(i + 1) == Some(&quote) && bytes.get(i + 2) == Some(&quote);
    let q = if triple { 3 } else { 1 };
    let offset = (i + q).min(text.len());
    let len = text.len().saturating_sub(offset + q);
    Body { offset, len, raw }
}

fn unescape(text: &str, is_bytes: bool) -> Result<Vec<u8>, LiteralError> {
    let body = body_of(text, is_bytes);
    let src = &text.as_bytes()[body.offset..body.offset + body.len];
    let mut out = Vec::with_capacity(src.len());
    let mut i = 0;
    while i < src.len() {
        let c = src[i];
        if c == b'\r' {
            // CR LF and a lone CR both read as one LF.
            out.push(b'\n');
            i += if src.get(i + 1) == Some(&b'\n') { 2 } else { 1 };
            continue;
        }
        if c != b'\\' || body.raw {
            out.push(c);
            i += 1;
            continue;
        }
        let at = body.offset + i;
        i += escape(src, i, at, is_bytes, &mut out)?;
    }
    Ok(out)
}

/// Decodes the escape at `src[i]` (a backslash) into `out`; returns how many bytes it used.
/// `at` is the escape's offset in the token, for errors.
fn escape(
    src: &[u8],
    i: usize,
    at: usize,
    is_bytes: bool,
    out: &mut Vec<u8>,
) -> Result<usize, LiteralError> {
    let Some(&e) = src.get(i + 1) else {
        return Err(bad_escape(at, 1, "a lone backslash ends the literal"));
    };
    let simple = match e {
        b'a' => Some(0x07),
        b'b' => Some(0x08),
        b'f' => Some(0x0C),
        b'n' => Some(b'\n'),
        b'r' => Some(b'\r'),
        b't' => Some(b'\t'),
        b'v' => Some(0x0B),
        b'\\' | b'?' | b'"' | b'\'' | b'`' => Some(e),
        _ => None,
    };
    if let Some(byte) = simple {
        out.push(byte);
        return Ok(2);
    }
    let (width, radix) = match e {
        b'x' | b'X' => (2, 16),
        b'u' | b'U' if is_bytes => {
            return Err(LiteralError::new(
                at,
                at + 2,
                format!(
                    "`\\{}` escapes are not allowed in bytes literals",
                    e as char
                ),
                "write the UTF-8 encoding as `\\x` escapes, or use a string literal",
            ));
        }
        b'u' => (4, 16),
        b'U' => (8, 16),
        b'0'..=b'3' => (3, 8),
        _ => {
            // The byte after an ASCII backslash starts a character, so this ends on a boundary.
            return Err(bad_escape(at, 1 + utf8_len(e), "unknown escape sequence"));
        }
    };
    // Octal escapes count their first digit among the three.
    let digits_start = if radix == 8 { i + 1 } else { i + 2 };
    let digits = src.get(digits_start..digits_start + width);
    let value = digits
        .filter(|d| d.iter().all(|&b| (b as char).is_digit(radix)))
        .and_then(|d| u32::from_str_radix(std::str::from_utf8(d).ok()?, radix).ok());
    let used = digits_start + width - i;
    let Some(value) = value else {
        // Underline the backslash and its letter: both ASCII, so the span ends on a boundary.
        return Err(bad_escape(at, 2, "malformed numeric escape"));
    };
    let byte_valued = is_bytes && matches!(e, b'x' | b'X' | b'0'..=b'3');
    if byte_valued {
        out.push(value as u8);
        return Ok(used);
    }
    let Some(ch) = char::from_u32(value) else {
        return Err(LiteralError::new(
            at,
            at + used,
            format!("escape names U+{value:04X}, which is not a Unicode scalar value"),
            "surrogates (U+D800 to U+DFFF) and values past U+10FFFF cannot appear in a string",
        ));
    };
    let mut buf = [0u8; 4];
    out.extend_from_slice(ch.encode_utf8(&mut buf).as_bytes());
    Ok(used)
}

fn utf8_len(first: u8) -> usize {
    match first {
        0xF0.. => 4,
        0xE0.. => 3,
        0xC0.. => 2,
        _ => 1,
    }
}

fn bad_escape(at: usize, len: usize, what: &str) -> LiteralError {
    LiteralError::new(
        at,
        at + len,
        format!("invalid escape in literal: {what}"),
        "valid escapes are \\a \\b \\f \\n \\r \\t \\v \\\\ \\? \\\" \\' \\`, \\xHH, \\uHHHH, \
         \\UHHHHHHHH and octal \\000 to \\377; to keep backslashes, use a raw string r'…'",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(text: &str) -> String {
        decode_string(text).unwrap()
    }

    fn b(text: &str) -> Vec<u8> {
        decode_bytes(text).unwrap()
    }

    #[test]
    fn simple_escapes_in_all_quote_forms() {
        let want = "\u{7}\u{8}\u{c}\n\r\t\u{b}\"'\\?`";
        assert_eq!(s(r#""\a\b\f\n\r\t\v\"\'\\\?\`""#), want);
        assert_eq!(s(r#"'\a\b\f\n\r\t\v\"\'\\\?\`'"#), want);
        assert_eq!(s(r#"'''\a\b\f\n\r\t\v\"\'\\\?\`'''"#), want);
        assert_eq!(s(r#""""\a\b\f\n\r\t\v\"\'\\\?\`""""#), want);
        assert_eq!(b(r#"b'\a\b\f\n\r\t\v\"\'\\\?\`'"#), want.as_bytes());
    }

    #[test]
    fn numeric_escapes_are_code_points_in_strings_and_bytes_in_bytes() {
        assert_eq!(s(r"'\xFF'"), "\u{FF}");
        assert_eq!(s(r"'\XfF'"), "\u{FF}");
        assert_eq!(s(r"'\377'"), "\u{FF}");
        assert_eq!(s(r"'\u00e9\U0001F600'"), "é😀");
        assert_eq!(b(r"b'\xFF\377\000'"), [0xFF, 0xFF, 0]);
        assert_eq!(b(r"B'\X0a'"), [10]);
        assert_eq!(b("b'ÿ'"), "ÿ".as_bytes());
    }

    #[test]
    fn raw_literals_keep_backslashes() {
        assert_eq!(s(r"r'\n\x00'"), r"\n\x00");
        assert_eq!(s(r#"R"\""#), r"\");
        assert_eq!(s(r"r'''\''''"), r"\'");
        assert_eq!(b(r"br'\n'"), br"\n");
        assert_eq!(b(r"BR'\u0000'"), br"\u0000");
    }

    #[test]
    fn triple_quotes_are_stripped_and_may_hold_their_quote() {
        assert_eq!(s(r#"''' ' '' "'''"#), r#" ' '' ""#);
        assert_eq!(b("b'''hello'''"), b"hello");
        assert_eq!(s("''''''"), "");
        assert_eq!(s("''"), "");
    }

    #[test]
    fn carriage_returns_become_line_feeds() {
        assert_eq!(s("'''a\r\nb\rc\nd'''"), "a\nb\nc\nd");
        assert_eq!(s("r'''a\r\nb'''"), "a\nb");
        assert_eq!(b("b'''\r'''"), b"\n");
        // An escaped CR is a real CR.
        assert_eq!(s(r"'\r'"), "\r");
    }

    #[test]
    fn bad_escapes_are_refused_with_their_position() {
        let e = decode_string(r"'ab\qc'").unwrap_err();
        assert_eq!((e.start, e.end), (3, 5));
        assert!(decode_string(r"'\x4'").is_err());
        assert!(decode_string(r"'\xZZ'").is_err());
        assert!(decode_string(r"'\400'").is_err());
        assert!(decode_string(r"'\08'").is_err());
        assert!(decode_string(r"'\u12'").is_err());
        assert!(decode_string(r"'\8'").is_err());
        assert!(decode_string(r"'\ñ'").is_err());
        let e = decode_bytes(r"b'\u0041'").unwrap_err();
        assert_eq!((e.start, e.end), (2, 4));
        assert!(decode_bytes(r"b'\U00000041'").is_err());
    }

    #[test]
    fn surrogates_and_values_past_unicode_are_refused() {
        assert!(decode_string(r"'\uD800'").is_err());
        assert!(decode_string(r"'\uDFFF'").is_err());
        assert!(decode_string(r"'\U00110000'").is_err());
        assert!(decode_string(r"'\UFFFFFFFF'").is_err());
        assert_eq!(s(r"'\U0010FFFF'"), "\u{10FFFF}");
        assert_eq!(s(r"'\uE000'"), "\u{E000}");
    }

    #[test]
    fn integers_at_their_limits() {
        assert_eq!(decode_int("9223372036854775807", false), Ok(i64::MAX));
        assert!(decode_int("9223372036854775808", false).is_err());
        assert_eq!(decode_int("9223372036854775808", true), Ok(i64::MIN));
        assert!(decode_int("9223372036854775809", true).is_err());
        assert_eq!(decode_int("0x8000000000000000", true), Ok(i64::MIN));
        assert!(decode_int("0x8000000000000000", false).is_err());
        assert_eq!(decode_int("0x7fffffffffffffff", false), Ok(i64::MAX));
        assert_eq!(decode_int("0x55555555", true), Ok(-0x5555_5555));
        assert_eq!(decode_int("007", false), Ok(7));
        assert_eq!(decode_int("0", true), Ok(0));
    }

    #[test]
    fn unsigned_integers_at_their_limits() {
        assert_eq!(decode_uint("18446744073709551615u"), Ok(u64::MAX));
        assert!(decode_uint("18446744073709551616u").is_err());
        assert_eq!(decode_uint("0xFFFFFFFFFFFFFFFFU"), Ok(u64::MAX));
        assert!(decode_uint("0x10000000000000000u").is_err());
        assert_eq!(decode_uint("0u"), Ok(0));
    }

    #[test]
    fn doubles() {
        assert_eq!(decode_double("1.5", false), Ok(1.5));
        assert_eq!(decode_double("1.5", true), Ok(-1.5));
        assert_eq!(decode_double(".5e1", false), Ok(5.0));
        assert_eq!(decode_double("1e-400", false), Ok(0.0));
        assert!(decode_double("1e400", false).is_err());
        assert_eq!(
            decode_double("0.0", true).map(f64::is_sign_negative),
            Ok(true)
        );
    }
}
