//! The search: a required-literal check, then the lazy DFA over the input in chunks of bounded
//! work, with the caller's `tick` between chunks (the evaluator reads its deadline there).

use std::sync::OnceLock;

use regex_automata::hybrid::LazyStateID;
use regex_automata::hybrid::dfa::Cache;
use regex_automata::util::prefilter::Prefilter;
use regex_automata::{Anchored, Input, MatchKind, Span};
use regex_syntax::hir::Hir;
use regex_syntax::hir::literal::{ExtractKind, Extractor};

use super::CelRegex;

/// Work between two ticks, in input bytes × compiled size: at the measured worst of about 21 ns
/// per byte and unit of size (a DFA that builds a state at every byte, on a loaded machine),
/// under a millisecond.
pub const CHUNK_WORK: usize = 1 << 15;

/// Bytes the literal check scans between two ticks (it runs at memory speed).
const LITERAL_CHUNK: usize = 1 << 20;

/// The literals every match ends with, when there are finitely many and none is empty.
///
/// Their prefilter is built at the first search that scans for them, not with the pattern: for
/// two or more literals it is a Teddy searcher with an Aho-Corasick DFA behind it, which was
/// over half of compiling `^fix(\(.*\))?: ` (146,000 of 228,000 instructions), while most
/// searches are decided before any scan (an anchored pattern by its first bytes).
pub(super) struct Required {
    literals: Vec<Vec<u8>>,
    pub(super) prefilter: OnceLock<Option<Prefilter>>,
    /// The longest of them: consecutive windows of the input overlap by this much less one.
    longest: usize,
}

impl Required {
    /// The suffix literals of `hir`, when they can rule a haystack out. The meta engine of
    /// regex-automata has no such check for start-anchored patterns, and `^fix(\(.*\))?: ` over a
    /// long line without `): ` would otherwise be stepped to its end.
    pub(super) fn of(hir: &Hir) -> Option<Required> {
        let seq = Extractor::new().kind(ExtractKind::Suffix).extract(hir);
        let literals = seq.literals()?;
        if literals.is_empty() || literals.iter().any(|l| l.as_bytes().is_empty()) {
            return None;
        }
        let longest = literals.iter().map(|l| l.as_bytes().len()).max()?;
        Some(Required {
            literals: literals.iter().map(|l| l.as_bytes().to_vec()).collect(),
            prefilter: OnceLock::new(),
            longest,
        })
    }

    /// The prefilter, built on first use; `None` when regex-automata has none for these
    /// literals, and then they rule nothing out.
    fn prefilter(&self) -> Option<&Prefilter> {
        self.prefilter
            .get_or_init(|| Prefilter::new(MatchKind::All, &self.literals))
            .as_ref()
    }

    /// Whether one of the literals occurs in `haystack`.
    fn occurs<E>(
        &self,
        haystack: &[u8],
        tick: &mut impl FnMut() -> Result<(), E>,
    ) -> Result<bool, E> {
        let Some(prefilter) = self.prefilter() else {
            return Ok(true);
        };
        let mut start = 0;
        while start < haystack.len() {
            if start > 0 {
                tick()?;
            }
            let end = (start + LITERAL_CHUNK + self.longest - 1).min(haystack.len());
            if prefilter.find(haystack, Span::from(start..end)).is_some() {
                return Ok(true);
            }
            start += LITERAL_CHUNK;
        }
        Ok(false)
    }
}

/// The literals one of which every match of a start-anchored pattern begins with, when there are
/// finitely many (at most [`STARTS_MAX`]) and none is empty: a haystack that begins with none of
/// them cannot match, which a few byte comparisons tell before any automaton runs.
pub(super) struct Starts(Vec<Vec<u8>>);

/// Most literals [`Starts`] compares (a case-insensitive prefix expands to many).
const STARTS_MAX: usize = 64;

impl Starts {
    /// The prefix literals of `hir`, when they can rule a haystack out.
    pub(super) fn of(hir: &Hir) -> Option<Starts> {
        let seq = Extractor::new().kind(ExtractKind::Prefix).extract(hir);
        let literals = seq.literals()?;
        if literals.is_empty()
            || literals.len() > STARTS_MAX
            || literals.iter().any(|l| l.as_bytes().is_empty())
        {
            return None;
        }
        Some(Starts(
            literals.iter().map(|l| l.as_bytes().to_vec()).collect(),
        ))
    }

    /// Whether `haystack` begins with one of the literals.
    pub(super) fn admit(&self, haystack: &[u8]) -> bool {
        self.0.iter().any(|literal| haystack.starts_with(literal))
    }
}

/// Inputs up to this many bytes are probed before the literal scan even when the pattern has
/// prefix literals: below it, the scan costs about as much as the probe (a few hundred
/// nanoseconds), and a probe that decides saves the rest of the search.
const PROBE_FIRST_BELOW: usize = 4096;

/// Bytes an anchored search steps before it looks for the required literals: most anchored
/// patterns are decided by their first bytes (`^fix` on a text that starts otherwise), and then
/// scanning the whole input for the literals first would be the larger part of the work.
const ANCHORED_PROBE: usize = 32;

/// Whether `re` matches anywhere in `haystack`.
pub(super) fn is_match<E>(
    re: &CelRegex,
    cache: &mut Cache,
    haystack: &[u8],
    mut tick: impl FnMut() -> Result<(), E>,
) -> Result<bool, E> {
    // An anchored pattern steps its first bytes before it looks for its required literals: most
    // such patterns are decided there. One with prefix literals has had them compared already
    // (`CelRegex::is_match`), which rules out most of what the first bytes would; on a long
    // input it looks for its required literals first (a scan that finds none ends the search,
    // and stepping the first bytes before it would have been wasted), and steps its first bytes
    // only if one occurs.
    let probe_first = re.anchored && (re.starts.is_none() || haystack.len() <= PROBE_FIRST_BELOW);
    if !probe_first && !required_occur(re, haystack, &mut tick)? {
        return Ok(false);
    }
    let anchored = if re.anchored {
        Anchored::Yes
    } else {
        Anchored::No
    };
    let input = Input::new(haystack).anchored(anchored).earliest(true);
    let dfa = &re.dfa;
    let Ok(mut sid) = dfa.start_state_forward(cache, &input) else {
        return Ok(false);
    };
    let mut at = 0;
    if re.anchored {
        at = haystack.len().min(ANCHORED_PROBE);
        match walk(re, cache, sid, &haystack[..at]) {
            Walk::Decided(matched) => return Ok(matched),
            Walk::Alive(next) => sid = next,
        }
    }
    if probe_first && !required_occur(re, haystack, &mut tick)? {
        return Ok(false);
    }
    // At least one byte, never more than the work allows: the compiled size is at most
    // `REGEX_MAX_SIZE` (4,096), so a chunk is at least 8 bytes. (A floor of 64 bytes once let a
    // chunk of a large automaton run eight times the work between two ticks; the `hostile` fuzz
    // target found it as a deadline overrun.)
    let chunk = (CHUNK_WORK / re.size.max(1) as usize).max(1);
    if at == 0 && haystack.len() <= chunk {
        // One chunk: the DFA's own search loop, which is faster than stepping by hand. It cannot
        // fail: the DFA has no quit bytes and never gives up on its cache.
        return Ok(matches!(re.dfa.try_search_fwd(cache, &input), Ok(Some(_))));
    }
    for (i, piece) in haystack[at..].chunks(chunk).enumerate() {
        if i > 0 || at > 0 {
            tick()?;
        }
        match walk(re, cache, sid, piece) {
            Walk::Decided(matched) => return Ok(matched),
            Walk::Alive(next) => sid = next,
        }
    }
    Ok(dfa
        .next_eoi_state(cache, sid)
        .is_ok_and(|end| end.is_match()))
}

/// Whether the pattern's required literals occur anywhere in `haystack` (true when it has
/// none): the whole input, since a literal may begin inside bytes already stepped.
fn required_occur<E>(
    re: &CelRegex,
    haystack: &[u8],
    tick: &mut impl FnMut() -> Result<(), E>,
) -> Result<bool, E> {
    match &re.required {
        Some(required) => required.occurs(haystack, tick),
        None => Ok(true),
    }
}

/// Where stepping the lazy DFA over some bytes left it.
enum Walk {
    /// A match was found, or the automaton died (no match can follow).
    Decided(bool),
    /// Still undecided, in this state.
    Alive(LazyStateID),
}

/// Steps the lazy DFA from `sid` over `bytes`, one transition a byte.
fn walk(re: &CelRegex, cache: &mut Cache, mut sid: LazyStateID, bytes: &[u8]) -> Walk {
    let dfa = &re.dfa;
    for &byte in bytes {
        let Ok(next) = dfa.next_state(cache, sid, byte) else {
            return Walk::Decided(false);
        };
        sid = next;
        if sid.is_tagged() {
            if sid.is_match() {
                return Walk::Decided(true);
            }
            if sid.is_dead() || sid.is_quit() {
                return Walk::Decided(false);
            }
        }
    }
    Walk::Alive(sid)
}
