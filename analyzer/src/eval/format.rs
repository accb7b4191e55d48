//! `string.format(list)` and `strings.quote(string)` of the strings extension, as the cel-spec
//! strings document defines them (`%s %d %f %e %b %x %X %o`, `%%`, an optional `.precision`).
//!
//! `format` charges the call and one traversal of its pattern first, then the bytes of every
//! piece of text it appends, as it appends them: a string or bytes piece before it is copied (its
//! length is known), a number, timestamp or duration right after it is written into a small
//! buffer (at most [`table::SCALAR_STRING_MAX`] plus the precision, which is itself at most
//! [`table::FORMAT_MAX_PRECISION`]), so no piece overshoots the limit by more than that.

use std::fmt::Write as _;

use super::interp::{Eval, Fault, Interp, error};
use super::value::Value;
use crate::cost::table;

/// One formatting clause.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Clause {
    Text,
    Decimal,
    Fixed(usize),
    Scientific(usize),
    Binary,
    Hex { upper: bool },
    Octal,
}

impl Clause {
    /// Reads the clause after a `%` at the start of `rest`: the clause and the bytes it took.
    fn parse(rest: &[u8]) -> Result<(Clause, usize), Fault> {
        let mut at = 0;
        let mut precision = 6;
        if rest.first() == Some(&b'.') {
            let digits = rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
            let text = std::str::from_utf8(&rest[1..=digits]).unwrap_or("");
            precision = text
                .parse::<usize>()
                .map_err(|_| error("could not parse formatting clause: malformed precision"))?;
            if precision as u64 > table::FORMAT_MAX_PRECISION {
                return Err(error(format!(
                    "could not parse formatting clause: precision {precision} exceeds the \
                     maximum of {}",
                    table::FORMAT_MAX_PRECISION
                )));
            }
            at = 1 + digits;
        }
        let clause = match rest.get(at) {
            Some(b's') => Clause::Text,
            Some(b'd') => Clause::Decimal,
            Some(b'f') => Clause::Fixed(precision),
            Some(b'e') => Clause::Scientific(precision),
            Some(b'b') => Clause::Binary,
            Some(b'x') => Clause::Hex { upper: false },
            Some(b'X') => Clause::Hex { upper: true },
            Some(b'o') => Clause::Octal,
            Some(&c) => {
                return Err(error(format!(
                    "could not parse formatting clause: unrecognized formatting clause \"{}\"",
                    char::from(c)
                )));
            }
            None => return Err(error("unexpected end of string")),
        };
        Ok((clause, at + 1))
    }
}

/// Why a value cannot be formatted with a clause.
fn wrong_type(what: &str, value: &Value) -> Fault {
    error(format!(
        "error during formatting: {what}, was given {}",
        value.type_value().name()
    ))
}

impl Interp<'_> {
    /// `pattern.format(args)`.
    pub(crate) fn format(&mut self, pattern: &str, args: &[Value]) -> Eval {
        self.charge(table::format(pattern.len() as u64).max(table::CALL))?;
        let bytes = pattern.as_bytes();
        let mut out = String::new();
        let mut next_arg = 0;
        let mut i = 0;
        while i < bytes.len() {
            // Copy up to the next `%` (patterns are already charged by their length).
            let run = bytes[i..]
                .iter()
                .position(|&b| b == b'%')
                .unwrap_or(bytes.len() - i);
            self.pay_formatted(run as u64)?;
            out.push_str(&pattern[i..i + run]);
            i += run;
            if i >= bytes.len() {
                break;
            }
            if bytes.get(i + 1) == Some(&b'%') {
                self.pay_formatted(1)?;
                out.push('%');
                i += 2;
                continue;
            }
            let (clause, used) = Clause::parse(&bytes[i + 1..])?;
            let arg = args
                .get(next_arg)
                .ok_or_else(|| error(format!("index {next_arg} out of range")))?;
            next_arg += 1;
            self.clause(clause, arg, &mut out)?;
            i += 1 + used;
        }
        Ok(Value::String(out.into()))
    }

    /// Appends `value` formatted by `clause`.
    fn clause(&mut self, clause: Clause, value: &Value, out: &mut String) -> Result<(), Fault> {
        match clause {
            Clause::Text => self.text(value, out),
            Clause::Decimal => match value {
                Value::Int(_) | Value::Uint(_) | Value::Double(_) => self.text(value, out),
                _ => Err(wrong_type(
                    "decimal clause can only be used on ints, uints, and doubles",
                    value,
                )),
            },
            Clause::Fixed(p) | Clause::Scientific(p) => {
                let x = match value {
                    Value::Int(i) => *i as f64,
                    Value::Uint(u) => *u as f64,
                    Value::Double(d) => *d,
                    _ => {
                        let what = if matches!(clause, Clause::Fixed(_)) {
                            "fixed-point clause can only be used on ints, uints, and doubles"
                        } else {
                            "scientific clause can only be used on ints, uints, and doubles"
                        };
                        return Err(wrong_type(what, value));
                    }
                };
                // The exact digits are worked out on big integers (version 8 charges it).
                let work = self.meter.model().format_float();
                self.charge(work)?;
                let text = match clause {
                    Clause::Fixed(_) => fixed(x, p),
                    _ => scientific(x, p),
                };
                self.append(out, &text)
            }
            Clause::Binary => match value {
                Value::Bool(b) => self.append(out, if *b { "1" } else { "0" }),
                _ => self.radix(value, 2, false, out),
            },
            Clause::Hex { upper } => match value {
                Value::String(s) => self.hex_bytes(s.as_bytes(), upper, out),
                Value::Bytes(b) => self.hex_bytes(b, upper, out),
                _ => self.radix(value, 16, upper, out),
            },
            Clause::Octal => self.radix(value, 8, false, out),
        }
    }

    /// Pays for `len` bytes appended to the text `format` builds: their allocation, and three
    /// times their length against the memory cap. The text grows by doubling, so at its last
    /// growth the old and the new buffer hold up to three times what is written, and at the end
    /// the buffer and the shared copy made of it as much (`table::built_text` counts two).
    fn pay_formatted(&mut self, len: u64) -> Result<(), Fault> {
        self.pay_bytes(0, len)?;
        self.build(len)
    }

    /// Charges and appends a piece that is already written.
    fn append(&mut self, out: &mut String, piece: &str) -> Result<(), Fault> {
        self.pay_formatted(piece.len() as u64)?;
        out.push_str(piece);
        Ok(())
    }

    /// `%s`: any value but an optional; lists and maps element by element.
    fn text(&mut self, value: &Value, out: &mut String) -> Result<(), Fault> {
        match value {
            Value::String(s) => self.append(out, s),
            Value::Bytes(b) => {
                // Charged at the largest: every byte may become a three-byte U+FFFD.
                self.pay_formatted(3 * b.len() as u64)?;
                push_lossy(b, out);
                Ok(())
            }
            Value::Null => self.append(out, "null"),
            Value::Bool(b) => self.append(out, if *b { "true" } else { "false" }),
            Value::Int(i) => self.append(out, &i.to_string()),
            Value::Uint(u) => self.append(out, &u.to_string()),
            Value::Double(d) => self.append(out, &shortest(*d)),
            Value::Timestamp(t) => self.append(out, &t.to_rfc3339()),
            Value::Duration(d) => {
                let nanos = d.nanos();
                let seconds = (nanos / 1_000_000_000) as f64 + (nanos % 1_000_000_000) as f64 / 1e9;
                self.append(out, &format!("{}s", shortest(seconds)))
            }
            Value::Type(t) => self.append(out, t.name()),
            Value::List(items) => {
                self.append(out, "[")?;
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.append(out, ", ")?;
                    }
                    self.text(item, out)?;
                }
                self.append(out, "]")
            }
            Value::Map(map) => {
                // Entries in the order of their formatted keys.
                let mut entries = Vec::with_capacity(map.len());
                for (key, value) in map.entries() {
                    let mut k = String::new();
                    self.text(&key.to_value(), &mut k)?;
                    entries.push((k, value));
                }
                entries.sort_by(|a, b| a.0.cmp(&b.0));
                self.append(out, "{")?;
                for (i, (key, value)) in entries.iter().enumerate() {
                    if i > 0 {
                        self.append(out, ", ")?;
                    }
                    // The key's bytes were charged when it was formatted.
                    out.push_str(key);
                    self.append(out, ": ")?;
                    self.text(value, out)?;
                }
                self.append(out, "}")
            }
            Value::Optional(_) => Err(wrong_type(
                "string clause can only be used on strings, bools, bytes, ints, doubles, maps, \
                 lists, types, durations, and timestamps",
                value,
            )),
        }
    }

    /// `%b`, `%o`, `%x` on an int or uint: the digits of the magnitude, `-` before a negative.
    fn radix(
        &mut self,
        value: &Value,
        radix: u32,
        upper: bool,
        out: &mut String,
    ) -> Result<(), Fault> {
        let (negative, magnitude) = match value {
            Value::Int(i) => (*i < 0, i.unsigned_abs()),
            Value::Uint(u) => (false, *u),
            _ => {
                let what = match radix {
                    2 => "only ints, uints, and bools can be formatted as binary",
                    8 => "octal clause can only be used on ints and uints",
                    _ => "only ints, uints, bytes, and strings can be formatted as hex",
                };
                return Err(wrong_type(what, value));
            }
        };
        let mut text = String::new();
        if negative {
            text.push('-');
        }
        let _ = match (radix, upper) {
            (2, _) => write!(text, "{magnitude:b}"),
            (8, _) => write!(text, "{magnitude:o}"),
            (_, false) => write!(text, "{magnitude:x}"),
            (_, true) => write!(text, "{magnitude:X}"),
        };
        self.append(out, &text)
    }

    /// `%x` on a string or bytes: two hex digits per byte.
    fn hex_bytes(&mut self, bytes: &[u8], upper: bool, out: &mut String) -> Result<(), Fault> {
        self.pay_formatted(2 * bytes.len() as u64)?;
        for b in bytes {
            let _ = if upper {
                write!(out, "{b:02X}")
            } else {
                write!(out, "{b:02x}")
            };
        }
        Ok(())
    }

    /// `strings.quote(s)`: the string in double quotes, with CEL's escapes for `\a \b \f \n
    /// \r \t \v`, backslash and double quote.
    pub(crate) fn quote(&mut self, s: &str) -> Eval {
        let escapes = s
            .bytes()
            .filter(|b| matches!(b, 7..=13 | b'\\' | b'"'))
            .count();
        let len = (s.len() + escapes + 2) as u64;
        self.pay_bytes(table::string_pass(s.len() as u64).max(table::CALL), len)?;
        let mut out = String::with_capacity(len as usize);
        out.push('"');
        for c in s.chars() {
            match c {
                '\u{7}' => out.push_str("\\a"),
                '\u{8}' => out.push_str("\\b"),
                '\u{c}' => out.push_str("\\f"),
                '\n' => out.push_str("\\n"),
                '\r' => out.push_str("\\r"),
                '\t' => out.push_str("\\t"),
                '\u{b}' => out.push_str("\\v"),
                '\\' => out.push_str("\\\\"),
                '"' => out.push_str("\\\""),
                c => out.push(c),
            }
        }
        out.push('"');
        Ok(Value::String(out.into()))
    }
}

/// Bytes as text: valid UTF-8 as is, each run of invalid sequences as one U+FFFD.
fn push_lossy(bytes: &[u8], out: &mut String) {
    let mut replaced = false;
    for chunk in bytes.utf8_chunks() {
        if !chunk.valid().is_empty() {
            out.push_str(chunk.valid());
            replaced = false;
        }
        if !chunk.invalid().is_empty() && !replaced {
            out.push('\u{fffd}');
            replaced = true;
        }
    }
}

/// A non-finite double as the strings extension writes it.
fn non_finite(x: f64) -> Option<&'static str> {
    if x.is_nan() {
        Some("NaN")
    } else if x.is_infinite() {
        Some(if x > 0.0 { "Infinity" } else { "-Infinity" })
    } else {
        None
    }
}

/// A double in the fewest digits that read back exactly, never in exponent form (Go's
/// `FormatFloat(x, 'f', -1, 64)`).
fn shortest(x: f64) -> String {
    match non_finite(x) {
        Some(text) => text.to_owned(),
        None => format!("{x}"),
    }
}

/// `%.Nf`: fixed point, rounded half to even on the exact binary value.
fn fixed(x: f64, precision: usize) -> String {
    match non_finite(x) {
        Some(text) => text.to_owned(),
        None => format!("{x:.precision$}"),
    }
}

/// `%.Ne`: `d.ddde±dd`, at least two exponent digits.
fn scientific(x: f64, precision: usize) -> String {
    if let Some(text) = non_finite(x) {
        return text.to_owned();
    }
    let text = format!("{x:.precision$e}");
    let (mantissa, exponent) = text.split_once('e').unwrap_or((&text, "0"));
    let exponent: i32 = exponent.parse().unwrap_or(0);
    let sign = if exponent < 0 { '-' } else { '+' };
    format!("{mantissa}e{sign}{:02}", exponent.unsigned_abs())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_round_half_to_even_and_write_two_exponent_digits() {
        assert_eq!(fixed(2.5, 0), "2");
        assert_eq!(fixed(1.5, 0), "2");
        assert_eq!(fixed(3.5001, 0), "4");
        assert_eq!(fixed(123.4999, 3), "123.500");
        assert_eq!(fixed(-1.2, 5), "-1.20000");
        assert_eq!(scientific(1_052.032_911_275, 6), "1.052033e+03");
        assert_eq!(scientific(2.0, 6), "2.000000e+00");
        assert_eq!(scientific(-3.25, 1), "-3.2e+00");
        assert_eq!(scientific(1e-300, 1), "1.0e-300");
        assert_eq!(fixed(f64::NEG_INFINITY, 2), "-Infinity");
    }

    #[test]
    fn invalid_utf8_runs_become_one_replacement_character() {
        let mut out = String::new();
        push_lossy(b"a\xff\xfe\xfdb\xc3", &mut out);
        assert_eq!(out, "a\u{fffd}b\u{fffd}");
    }
}
