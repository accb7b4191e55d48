//! String contents for witnesses beyond one repeated character: the texts on which the string
//! and list functions of the extension libraries do the most work within a byte budget.
//!
//! One filler character makes every element of `split('')` equal, so `distinct()`, the `sets`
//! functions and membership tests over the parts stop at the first comparison; these contents
//! make the parts differ ([`distinct_chars`], [`tokens`]), make one part long and the others
//! many ([`halves`]: what `sort` and `sortBy`, which charge every comparison at the longest
//! key, do the most work on), or make every character one that `strings.quote` doubles
//! ([`QUOTE`]). Every function sizes its result in the bytes the budget is counted in: decoded
//! bytes for a root string (`event.text`, a header), compact JSON bytes inside the attributes.

/// How a string's size counts against its budget.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Measure {
    /// The bytes of the string itself (`event.text` and the headers are bounded so).
    Decoded,
    /// The bytes of its compact JSON, quotes excluded (a string inside `event.attributes`).
    Json,
}

impl Measure {
    /// The bytes `c` takes.
    pub(crate) fn len(self, c: char) -> u64 {
        match self {
            Measure::Decoded => c.len_utf8() as u64,
            Measure::Json => match c {
                '"' | '\\' => 2,
                // `\uXXXX`, or two bytes for the short escapes: counting six is never too few.
                c if u32::from(c) < 0x20 => 6,
                c => c.len_utf8() as u64,
            },
        }
    }

    /// The bytes `s` takes.
    pub(crate) fn str_len(self, s: &str) -> u64 {
        s.chars().map(|c| self.len(c)).sum()
    }
}

/// The character `strings.quote` escapes into two, and whose JSON is two bytes: every quoting
/// doubles a text made of it (what `strings.quote(strings.quote(event.text))` costs most on).
pub(crate) const QUOTE: char = '"';

/// Every character in turn, one-byte ones first: printable ASCII other than the two JSON
/// escapes, then two-, three- and four-byte code points. A text of `distinct_chars` has the
/// most distinct characters a budget allows.
fn chars_by_size() -> impl Iterator<Item = char> {
    (0x20u32..0x7f)
        .filter(|&c| c != u32::from('"') && c != u32::from('\\'))
        .chain(0xa0..0x800)
        .chain(0x800..0x1_0000)
        .chain(0x1_0000..0x11_0000)
        .filter_map(char::from_u32)
}

/// As many distinct characters as fit in `budget` bytes.
pub(crate) fn distinct_chars(budget: u64, measure: Measure) -> String {
    let mut out = String::new();
    let mut left = budget;
    for c in chars_by_size() {
        let n = measure.len(c);
        if n > left {
            break;
        }
        left -= n;
        out.push(c);
    }
    out
}

/// Distinct non-empty tokens made of characters not in `separator`, joined by it, in at most
/// `budget` bytes: every part of `split(separator)` differs from the others.
pub(crate) fn tokens(separator: &str, budget: u64, measure: Measure) -> String {
    if separator.is_empty() {
        return distinct_chars(budget, measure);
    }
    let alphabet: Vec<char> = chars_by_size()
        .take(200)
        .filter(|c| !separator.contains(*c))
        .collect();
    let sep_len = measure.str_len(separator);
    let mut out = String::new();
    let mut left = budget;
    for n in 1u64.. {
        let token = nth_word(n, &alphabet);
        let cost = measure.str_len(&token) + if out.is_empty() { 0 } else { sep_len };
        if cost > left {
            break;
        }
        left -= cost;
        if !out.is_empty() {
            out.push_str(separator);
        }
        out.push_str(&token);
    }
    out
}

/// Half the budget one run of `filler`, the other half `literal` repeated: one long part and
/// as many empty ones as fit once split at `literal`.
pub(crate) fn halves(literal: &str, filler: char, budget: u64, measure: Measure) -> String {
    let long = budget / 2 / measure.len(filler).max(1);
    let mut out: String = std::iter::repeat_n(filler, long as usize).collect();
    let step = measure.str_len(literal);
    if step == 0 {
        return out;
    }
    let mut left = budget - long * measure.len(filler);
    while left >= step {
        out.push_str(literal);
        left -= step;
    }
    out
}

/// `c` repeated into `budget` bytes.
pub(crate) fn repeat_char(c: char, budget: u64, measure: Measure) -> String {
    let n = budget / measure.len(c).max(1);
    std::iter::repeat_n(c, n as usize).collect()
}

/// `unit` once, and again as many whole times as fit into `extra` more bytes.
pub(crate) fn repeat_str(unit: &str, extra: u64, measure: Measure) -> String {
    let n = 1 + extra / measure.str_len(unit).max(1);
    unit.repeat(usize::try_from(n).unwrap_or(1))
}

/// The `n`-th word over `alphabet`: all words of length 0 first, then of length 1, and so on.
pub(crate) fn nth_word(mut n: u64, alphabet: &[char]) -> String {
    let base = alphabet.len() as u64;
    if base == 0 {
        return String::new();
    }
    let mut len = 0u32;
    let mut block = 1u64;
    while n >= block {
        n -= block;
        len += 1;
        block = block.saturating_mul(base);
    }
    let mut word = String::new();
    for _ in 0..len {
        word.push(alphabet[(n % base) as usize]);
        n /= base;
    }
    word
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn distinct_chars_are_distinct_and_fit() {
        for measure in [Measure::Decoded, Measure::Json] {
            let s = distinct_chars(16_384, measure);
            assert!(measure.str_len(&s) <= 16_384);
            let mut seen = std::collections::HashSet::new();
            assert!(s.chars().all(|c| seen.insert(c)));
            assert!(s.chars().count() > 5_000, "{}", s.chars().count());
        }
    }

    #[test]
    fn tokens_split_into_distinct_parts() {
        let s = tokens(",", 1_000, Measure::Json);
        assert!(Measure::Json.str_len(&s) <= 1_000);
        let parts: Vec<&str> = s.split(',').collect();
        let unique: std::collections::HashSet<&&str> = parts.iter().collect();
        assert_eq!(unique.len(), parts.len());
        assert!(parts.iter().all(|p| !p.is_empty()));
        assert!(parts.len() > 300);
    }

    #[test]
    fn halves_are_one_long_part_and_many_empty_ones() {
        let s = halves(",", 'a', 1_000, Measure::Decoded);
        assert_eq!(s.len(), 1_000);
        let parts: Vec<&str> = s.split(',').collect();
        assert_eq!(parts[0].len(), 500);
        assert_eq!(parts.len(), 501);
    }

    #[test]
    fn words_are_counted_by_length() {
        let a = ['x', 'y'];
        let words: Vec<String> = (0..7).map(|n| nth_word(n, &a)).collect();
        assert_eq!(words, ["", "x", "y", "xx", "yx", "xy", "yy"]);
    }
}
