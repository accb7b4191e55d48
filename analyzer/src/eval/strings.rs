//! The strings extension: `charAt`, `indexOf`, `lastIndexOf`, `lowerAscii`, `upperAscii`,
//! `replace`, `split`, `substring`, `trim`, `reverse` and `join` (`format` and `strings.quote`
//! live in the `format` module).
//!
//! Indices count code points, as in cel-go; offsets past the end of the string are errors, as
//! the cel-spec conformance tests require. Every function charges its search and pass before
//! doing them, and the bytes or elements it builds as soon as their number is known, before
//! building them: `replace` counts its matches first, `split` its parts.

use super::interp::{Eval, Fault, Interp, error, no_overload};
use super::value::Value;
use crate::cost::table;

/// The byte offset of code point `index`, if the string has that many (the end counts).
fn byte_offset(s: &str, index: usize) -> Option<usize> {
    if index == 0 {
        return Some(0);
    }
    s.char_indices()
        .map(|(i, _)| i)
        .chain(std::iter::once(s.len()))
        .nth(index)
}

/// The code-point index of byte offset `at` (a character boundary).
fn code_point_index(s: &str, at: usize) -> i64 {
    s[..at].chars().count() as i64
}

fn out_of_range(index: i64) -> Fault {
    error(format!("index out of range: {index}"))
}

/// A code-point index argument within `0..=chars`.
fn checked_index(s: &str, index: i64) -> Result<usize, Fault> {
    usize::try_from(index)
        .ok()
        .and_then(|i| byte_offset(s, i))
        .ok_or_else(|| out_of_range(index))
}

impl Interp<'_> {
    /// A strings-extension member call on a string receiver; `None` when it is not one.
    pub(crate) fn string_member(
        &mut self,
        function: &str,
        s: &str,
        args: &[Value],
    ) -> Option<Eval> {
        let n = s.len() as u64;
        Some(match (function, args) {
            ("charAt", [Value::Int(i)]) => self.char_at(s, *i),
            ("indexOf", [Value::String(t)]) => self.index_of(s, t, 0),
            ("indexOf", [Value::String(t), Value::Int(off)]) => self.index_of(s, t, *off),
            ("lastIndexOf", [Value::String(t)]) => self.last_index_of(s, t, None),
            ("lastIndexOf", [Value::String(t), Value::Int(off)]) => {
                self.last_index_of(s, t, Some(*off))
            }
            ("lowerAscii", []) => self
                .rebuilt(n, n)
                .map(|()| Value::string(&s.to_ascii_lowercase())),
            ("upperAscii", []) => self
                .rebuilt(n, n)
                .map(|()| Value::string(&s.to_ascii_uppercase())),
            ("reverse", []) => self.rebuilt(n, n).map(|()| {
                // Sized once: the memory cap counts a buffer and its copy, not its growth.
                let mut reversed = String::with_capacity(s.len());
                reversed.extend(s.chars().rev());
                Value::String(reversed.into())
            }),
            ("trim", []) => {
                let trimmed = s.trim();
                self.rebuilt(n, trimmed.len() as u64)
                    .map(|()| Value::string(trimmed))
            }
            ("replace", [Value::String(old), Value::String(new)]) => self.replace(s, old, new, -1),
            ("replace", [Value::String(old), Value::String(new), Value::Int(count)]) => {
                self.replace(s, old, new, *count)
            }
            ("split", [Value::String(sep)]) => self.split(s, sep, -1),
            ("split", [Value::String(sep), Value::Int(limit)]) => self.split(s, sep, *limit),
            ("substring", [Value::Int(start)]) => self.substring(s, *start, None),
            ("substring", [Value::Int(start), Value::Int(end)]) => {
                self.substring(s, *start, Some(*end))
            }
            _ => return None,
        })
    }

    /// Charges a pass over `input` bytes that builds a string of `output` bytes.
    fn rebuilt(&mut self, input: u64, output: u64) -> Result<(), Fault> {
        self.pay_bytes(table::string_pass(input).max(table::CALL), output)
    }

    fn char_at(&mut self, s: &str, index: i64) -> Eval {
        self.charge(table::string_pass(s.len() as u64).max(table::CALL))?;
        let at = checked_index(s, index)?;
        let c: &str = s[at..]
            .chars()
            .next()
            .map_or("", |c| &s[at..at + c.len_utf8()]);
        self.pay_bytes(0, c.len() as u64)?;
        Ok(Value::string(c))
    }

    fn index_of(&mut self, s: &str, t: &str, offset: i64) -> Eval {
        self.charge(table::index_of(s.len() as u64, t.len() as u64).max(table::CALL))?;
        let start = checked_index(s, offset)?;
        if t.is_empty() {
            return Ok(Value::Int(offset));
        }
        // A needle longer than the haystack is not in it: answered before the searcher is
        // built, which reads the whole needle (`''.indexOf(event.text)` is charged one call).
        if t.len() > s.len() - start {
            return Ok(Value::Int(-1));
        }
        let found = self.find(&s[start..], t)?;
        Ok(Value::Int(
            found.map_or(-1, |at| code_point_index(s, start + at)),
        ))
    }

    fn last_index_of(&mut self, s: &str, t: &str, offset: Option<i64>) -> Eval {
        self.charge(table::index_of(s.len() as u64, t.len() as u64).max(table::CALL))?;
        let chars = s.chars().count() as i64;
        let offset = offset.unwrap_or(chars);
        // Validates the offset; the search may start no later than it.
        let limit = checked_index(s, offset)?;
        if t.is_empty() {
            return Ok(Value::Int(offset));
        }
        // A match may start at the offset and run past it; one that starts later ends past
        // `limit + |t|`, so the last boundary up to there bounds the search.
        let end = (limit + t.len()).min(s.len());
        let end = (0..=end)
            .rev()
            .find(|&i| s.is_char_boundary(i))
            .unwrap_or(0);
        if t.len() > end {
            return Ok(Value::Int(-1));
        }
        self.meter.note_work(table::traversal(end as u64))?;
        Ok(Value::Int(
            s[..end].rfind(t).map_or(-1, |at| code_point_index(s, at)),
        ))
    }

    /// `memmem` over `s`, reading the deadline between windows of a long haystack.
    fn find(&mut self, s: &str, t: &str) -> Result<Option<usize>, Fault> {
        const CHUNK: usize = 4096;
        let finder = memchr::memmem::Finder::new(t.as_bytes());
        let bytes = s.as_bytes();
        let mut start = 0;
        loop {
            let end = (start + CHUNK + t.len()).min(bytes.len());
            if let Some(at) = finder.find(&bytes[start..end]) {
                return Ok(Some(start + at));
            }
            if end == bytes.len() {
                return Ok(None);
            }
            start += CHUNK;
            self.meter.check_deadline()?;
        }
    }

    /// `s.replace(old, new[, count])`: the matches are counted first, so the result's bytes are
    /// charged before it is built.
    fn replace(&mut self, s: &str, old: &str, new: &str, count: i64) -> Eval {
        let (n, m) = (s.len() as u64, old.len() as u64);
        let search = table::replace(n, m, 0);
        self.charge(search)?;
        let limit = usize::try_from(count).unwrap_or(usize::MAX);
        if old.len() > s.len() || limit == 0 {
            // Nothing to replace; the searcher, which reads all of `old`, is never built.
            self.pay_bytes(table::replace(n, m, n) - search, n)?;
            return Ok(Value::string(s));
        }
        let matches = if old.is_empty() {
            self.meter.note_work(table::traversal(n))?;
            (s.chars().count() + 1).min(limit)
        } else {
            memchr::memmem::find_iter(s.as_bytes(), old.as_bytes())
                .take(limit)
                .count()
        };
        let result = n - (matches * old.len()) as u64 + (matches * new.len()) as u64;
        self.pay_bytes(table::replace(n, m, result) - search, result)?;
        Ok(Value::String(s.replacen(old, new, limit).into()))
    }

    /// `s.split(sep[, limit])`, as Go's `strings.SplitN`: a limit of 0 gives no parts, a
    /// negative one every part; an empty separator splits between code points.
    fn split(&mut self, s: &str, sep: &str, limit: i64) -> Eval {
        self.charge(table::split(s.len() as u64, sep.len() as u64))?;
        let limit = match usize::try_from(limit) {
            Ok(0) => return Ok(Value::list(Vec::new())),
            Ok(n) => n,
            Err(_) => usize::MAX,
        };
        // Counted before anything is built (a built string of megabytes split between its code
        // points has millions of parts), then built at that exact size.
        let count = if sep.is_empty() {
            s.chars().count().min(limit)
        } else if sep.len() > s.len() {
            // No room for the separator: one part, without building its searcher.
            1
        } else {
            s.matches(sep).count().saturating_add(1).min(limit)
        };
        // The parts cover the text but the separators.
        let bytes = s.len() - sep.len() * count.saturating_sub(1);
        self.pay_new_list(0, count as u64)?;
        self.pay_bytes(0, bytes as u64)?;
        let mut parts = Vec::with_capacity(count);
        let pieces: Box<dyn Iterator<Item = &str>> = if sep.is_empty() {
            Box::new(split_code_points(s, limit))
        } else if count == 1 {
            Box::new(std::iter::once(s))
        } else {
            Box::new(s.splitn(limit, sep))
        };
        // A megabyte split between its code points is a million allocations: the deadline is
        // read between batches of them.
        for (i, part) in pieces.enumerate() {
            if i % PARTS_BETWEEN_DEADLINE_READS == PARTS_BETWEEN_DEADLINE_READS - 1 {
                self.meter.check_deadline()?;
            }
            parts.push(Value::string(part));
        }
        Ok(Value::list(parts))
    }

    fn substring(&mut self, s: &str, start: i64, end: Option<i64>) -> Eval {
        self.charge(table::string_pass(s.len() as u64).max(table::CALL))?;
        if let Some(end) = end {
            if start > end {
                return Err(error(format!(
                    "invalid substring range. start: {start}, end: {end}"
                )));
            }
        }
        let from = checked_index(s, start)?;
        let to = match end {
            Some(end) => checked_index(s, end)?,
            None => s.len(),
        };
        let part = &s[from..to];
        self.pay_bytes(0, part.len() as u64)?;
        Ok(Value::string(part))
    }

    /// `list.join([sep])`: the elements must be strings.
    pub(crate) fn join(&mut self, list: &[Value], sep: &str) -> Eval {
        let mut total = sep.len().saturating_mul(list.len().saturating_sub(1));
        self.charge(table::join(list.len() as u64, 0))?;
        for item in list {
            match item {
                Value::String(part) => total = total.saturating_add(part.len()),
                other => return Err(no_overload("join", &[other])),
            }
        }
        let total = total as u64;
        let copy = table::join(list.len() as u64, total) - table::join(list.len() as u64, 0);
        self.pay_bytes(copy, total)?;
        let mut out = String::with_capacity(total as usize);
        for (i, item) in list.iter().enumerate() {
            if i > 0 {
                out.push_str(sep);
            }
            if let Value::String(part) = item {
                out.push_str(part);
            }
        }
        Ok(Value::String(out.into()))
    }
}

/// Go's `strings.SplitN(s, "", n)`: one part per code point, the last holding the rest.
/// Parts `split` builds between two reads of the deadline (each part is an allocation).
const PARTS_BETWEEN_DEADLINE_READS: usize = 1024;

fn split_code_points(s: &str, limit: usize) -> impl Iterator<Item = &str> {
    let mut rest = s;
    let mut parts = 0;
    std::iter::from_fn(move || {
        let c = rest.chars().next()?;
        parts += 1;
        let end = if parts == limit {
            rest.len()
        } else {
            c.len_utf8()
        };
        let (head, tail) = rest.split_at(end);
        rest = tail;
        Some(head)
    })
}
