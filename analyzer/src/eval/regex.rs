//! `matches()`: RE2-syntax regular expressions on regex-automata (linear time), compiled under
//! size limits, and scanned in chunks that read the deadline between them.
//!
//! Inputs up to [`SCAN_CHUNK`] bytes go straight to the meta regex (prefilters, one-pass and
//! lazy DFA engines). Longer inputs step a lazy DFA byte by byte and call
//! [`Meter::check_deadline`] after every chunk, so even a large configured bound cannot make one
//! call overrun the deadline by more than one chunk's work.

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::{Input, meta, nfa::thompson, util::syntax};

use super::meter::{Meter, Stop};

/// Bytes scanned between two reads of the deadline.
pub const SCAN_CHUNK: usize = 64 * 1024;

/// Largest compiled NFA of one pattern, in bytes.
const NFA_SIZE_LIMIT: usize = 1 << 20;
/// Largest fully compiled DFA the meta regex may build, and the lazy DFA cache, in bytes.
const DFA_SIZE_LIMIT: usize = 1 << 20;
/// Deepest nesting of groups and repetitions accepted in a pattern.
const NEST_LIMIT: u32 = 64;

/// A compiled `matches()` pattern.
#[derive(Debug)]
pub struct CelRegex {
    meta: meta::Regex,
    lazy: Option<DFA>,
}

impl CelRegex {
    /// Compiles `pattern` under the size limits; the error says why it was refused.
    pub fn new(pattern: &str) -> Result<CelRegex, String> {
        let syntax = syntax::Config::new().nest_limit(NEST_LIMIT);
        let meta = meta::Builder::new()
            .configure(
                meta::Config::new()
                    .nfa_size_limit(Some(NFA_SIZE_LIMIT))
                    .dfa_size_limit(Some(DFA_SIZE_LIMIT))
                    .hybrid_cache_capacity(DFA_SIZE_LIMIT),
            )
            .syntax(syntax)
            .build(pattern)
            .map_err(|e| describe(&e))?;
        // The stepping engine is optional: when it cannot be built, long inputs fall back to the
        // meta regex, whose time is still bounded by the cost charged before the call.
        let lazy = DFA::builder()
            .configure(
                DFA::config()
                    .cache_capacity(DFA_SIZE_LIMIT)
                    .unicode_word_boundary(true),
            )
            .syntax(syntax)
            .thompson(thompson::Config::new().nfa_size_limit(Some(NFA_SIZE_LIMIT)))
            .build(pattern)
            .ok();
        Ok(CelRegex { meta, lazy })
    }

    /// Whether the pattern matches anywhere in `haystack`, reading the deadline between chunks.
    pub fn is_match(&self, haystack: &str, meter: &Meter<'_>) -> Result<bool, Stop> {
        if haystack.len() <= SCAN_CHUNK {
            return Ok(self.meta.is_match(haystack));
        }
        if let Some(dfa) = &self.lazy {
            let mut cache = dfa.create_cache();
            if let Some(found) = step(dfa, &mut cache, haystack.as_bytes(), meter)? {
                return Ok(found);
            }
        }
        meter.check_deadline()?;
        Ok(self.meta.is_match(haystack))
    }
}

/// Walks the lazy DFA over `haystack`; `Ok(None)` when it had to give up (a quit byte or an
/// inefficient cache), so the caller falls back to the meta regex.
fn step(
    dfa: &DFA,
    cache: &mut Cache,
    haystack: &[u8],
    meter: &Meter<'_>,
) -> Result<Option<bool>, Stop> {
    let Ok(mut sid) = dfa.start_state_forward(cache, &Input::new(haystack)) else {
        return Ok(None);
    };
    for (i, chunk) in haystack.chunks(SCAN_CHUNK).enumerate() {
        if i > 0 {
            meter.check_deadline()?;
        }
        for &byte in chunk {
            let Ok(next) = dfa.next_state(cache, sid, byte) else {
                return Ok(None);
            };
            sid = next;
            if sid.is_tagged() {
                if sid.is_match() {
                    return Ok(Some(true));
                }
                if sid.is_dead() {
                    return Ok(Some(false));
                }
                if sid.is_quit() {
                    return Ok(None);
                }
            }
        }
    }
    match dfa.next_eoi_state(cache, sid) {
        Ok(end) => Ok(Some(end.is_match())),
        Err(_) => Ok(None),
    }
}

/// A one-line reason for a refused pattern.
fn describe(error: &meta::BuildError) -> String {
    if let Some(limit) = error.size_limit() {
        return format!("the pattern compiles to more than {limit} bytes");
    }
    match error.syntax_error() {
        Some(syntax) => {
            let text = syntax.to_string();
            let last = text.lines().last().unwrap_or("invalid pattern");
            last.trim_start_matches("error: ").to_owned()
        }
        None => error.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::meter::{Limits, ManualClock};
    use std::sync::Arc;
    use std::time::Duration;

    #[test]
    fn refuses_invalid_and_oversized_patterns() {
        assert!(CelRegex::new("a(").is_err());
        let err = CelRegex::new("(((a{100}){100}){100})").unwrap_err();
        assert!(err.contains("more than"), "{err}");
    }

    #[test]
    fn long_inputs_match_like_short_ones() {
        let limits = Limits::default();
        let meter = Meter::new(&limits);
        let re = CelRegex::new("needle[0-9]+$").unwrap();
        let mut long = "x".repeat(3 * SCAN_CHUNK);
        assert!(!re.is_match(&long, &meter).unwrap());
        long.push_str("needle42");
        assert!(re.is_match(&long, &meter).unwrap());
        let anchored = CelRegex::new("^x+y").unwrap();
        assert!(!anchored.is_match(&long, &meter).unwrap());
    }

    #[test]
    fn long_scans_read_the_deadline() {
        let clock = Arc::new(ManualClock::stepping(Duration::from_millis(100)));
        let limits = Limits::default().with_clock(clock);
        let meter = Meter::new(&limits);
        let re = CelRegex::new("z$").unwrap();
        let long = "x".repeat(8 * SCAN_CHUNK);
        assert!(matches!(
            re.is_match(&long, &meter),
            Err(Stop::Deadline { .. })
        ));
    }
}
