//! `matches()` patterns: RE2 syntax compiled under limits that are decided before any costly
//! work, into a lazy DFA whose search does a bounded amount of work per input byte and can be
//! stopped between chunks of its input.
//!
//! Compilation runs in three steps, each bounded by the one before:
//!
//! 1. The pattern is refused over [`REGEX_MAX_PATTERN`] bytes, then parsed into regex-syntax's
//!    syntax tree (linear in its length, nesting at most [`NEST_LIMIT`] deep).
//! 2. [`syntax::prepare`] rewrites the tree to RE2's meaning (`\d`, `\w`, `\s` and `\b` are
//!    ASCII) and measures it: counted repetitions at most [`REGEX_MAX_REPEAT`], at most
//!    [`REGEX_MAX_UNICODE_CLASSES`] Unicode classes, and at most [`REGEX_MAX_FOLDED`] code points
//!    of case folding. Only then is it translated, which is where big classes and case folding
//!    cost time.
//! 3. The translation is compiled to a Thompson NFA (without capture states) whose *size*, its
//!    states plus transitions, is at most [`REGEX_MAX_SIZE`]; the build itself stops early once
//!    its memory passes what that size could need.
//!
//! The search ([`CelRegex::is_match`]) steps a lazy DFA that never gives up: every input byte
//! costs a cached transition or, at worst, one new DFA state computed from at most the whole NFA,
//! so its work per byte is bounded by the size. The cost table charges exactly that
//! ([`crate::cost::table::matches`]).

mod fold;
mod search;
mod shared;
pub(crate) mod syntax;

use std::panic::{RefUnwindSafe, UnwindSafe};

use regex_automata::hybrid::dfa::{Cache, DFA};
use regex_automata::nfa::thompson::{NFA, State};
use regex_automata::util::pool::Pool;
use regex_syntax::hir::Hir;

pub use crate::cost::table::{
    REGEX_MAX_FOLDED, REGEX_MAX_PATTERN, REGEX_MAX_REPEAT, REGEX_MAX_SIZE,
    REGEX_MAX_UNICODE_CLASSES,
};
pub(crate) use shared::share_sizes;

/// Deepest nesting of groups, classes and repetitions in a pattern.
pub const NEST_LIMIT: u32 = 64;

/// Memory one lazy DFA cache may hold, in bytes; when it is full the cache is cleared and the
/// search goes on (it never gives up).
const CACHE_CAPACITY: usize = 1 << 20;

/// Heap the NFA build may use before it is stopped: far more than [`REGEX_MAX_SIZE`] needs (about
/// 12 bytes per unit of size), so the size check below is the one that decides, while a
/// pattern that would be much larger is stopped before most of its work.
const NFA_BUILD_LIMIT: usize = 64 * REGEX_MAX_SIZE as usize;

/// Why a pattern was refused: one sentence, the same at check time and at run time.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{reason}")]
pub struct RegexError {
    reason: String,
}

impl RegexError {
    pub(crate) fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
        }
    }

    /// The full message of the `invalid-regex` diagnostic and of the run-time error.
    pub fn message(&self) -> String {
        format!("invalid regular expression: {}", self.reason)
    }

    /// The `invalid-regex` diagnostic on the pattern literal at `span`: what the checker reports
    /// for a constant pattern, in the words the evaluator uses for any other.
    pub fn diagnostic(&self, span: crate::syntax::Span) -> crate::Diagnostic {
        crate::Diagnostic::error("invalid-regex", span, self.message())
            .with_label("this pattern")
            .with_help(
                "matches() takes RE2 syntax, within the limits of docs/cost-model.md \
                 (patterns of at most 1024 bytes, repetitions of at most 1000)",
            )
    }
}

type CacheFn = Box<dyn Fn() -> Cache + Send + Sync + UnwindSafe + RefUnwindSafe>;

/// A compiled pattern.
pub struct CelRegex {
    dfa: DFA,
    /// Lazy DFA caches, one per thread that searches at a time.
    caches: Pool<Cache, CacheFn>,
    /// States plus transitions of the NFA: the bound on the work per input byte.
    size: u64,
    /// Every match starts at the beginning of the input (`^…`): the search is anchored, so a
    /// haystack that does not start right ends at its first bytes.
    anchored: bool,
    /// Literals one of which every match ends with, when there are finitely many: a haystack
    /// holding none of them cannot match.
    required: Option<search::Required>,
    /// For an anchored pattern, the literals one of which every match begins with, when there
    /// are finitely many: a haystack that begins otherwise is refused at once.
    starts: Option<search::Starts>,
}

impl std::fmt::Debug for CelRegex {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("CelRegex")
            .field("size", &self.size)
            .field("anchored", &self.anchored)
            .finish_non_exhaustive()
    }
}

impl CelRegex {
    /// Compiles `pattern` under the limits of this module; the error says why it was refused.
    pub fn new(pattern: &str) -> Result<CelRegex, RegexError> {
        let hir = translate(pattern)?;
        let nfa = build_nfa(&hir)?;
        let size = nfa_size(&nfa);
        let dfa = DFA::builder()
            .configure(
                DFA::config()
                    .cache_capacity(CACHE_CAPACITY)
                    .skip_cache_capacity_check(true)
                    .minimum_cache_clear_count(None),
            )
            .build_from_nfa(nfa)
            .map_err(|e| RegexError::new(e.to_string()))?;
        let for_caches = dfa.clone();
        let create: CacheFn = Box::new(move || for_caches.create_cache());
        let anchored = hir
            .properties()
            .look_set_prefix()
            .contains(regex_syntax::hir::Look::Start);
        Ok(CelRegex {
            dfa,
            caches: Pool::new(create),
            size,
            anchored,
            required: search::Required::of(&hir),
            starts: if anchored {
                search::Starts::of(&hir)
            } else {
                None
            },
        })
    }

    /// The compiled size: states plus transitions of the automaton.
    pub fn size(&self) -> u64 {
        self.size
    }

    /// Whether the pattern matches anywhere in `haystack`. `tick` is called between chunks of
    /// the input (each at most [`search::CHUNK_WORK`] bytes × size of work), so a caller can read
    /// its deadline and stop the search there.
    pub fn is_match<E>(
        &self,
        haystack: &str,
        tick: impl FnMut() -> Result<(), E>,
    ) -> Result<bool, E> {
        if let Some(starts) = &self.starts
            && !starts.admit(haystack.as_bytes())
        {
            return Ok(false);
        }
        let mut cache = self.caches.get();
        search::is_match(self, &mut cache, haystack.as_bytes(), tick)
    }
}

/// The compiled size of `pattern`, or why it is refused: what the checker and the estimator need
/// of a constant pattern, without building the searcher. Inside [`share_sizes`] each pattern is
/// compiled once, however many passes ask.
pub fn compiled_size(pattern: &str) -> Result<u64, RegexError> {
    shared::size(pattern, || {
        let hir = translate(pattern)?;
        build_nfa(&hir).map(|nfa| nfa_size(&nfa))
    })
}

/// Steps 1 and 2: length, syntax, RE2 rewrites, limits, translation.
fn translate(pattern: &str) -> Result<Hir, RegexError> {
    if pattern.len() as u64 > REGEX_MAX_PATTERN {
        return Err(RegexError::new(format!(
            "the pattern is {} bytes long, more than {REGEX_MAX_PATTERN}",
            pattern.len()
        )));
    }
    let ast = syntax::prepare(pattern)?;
    regex_syntax::hir::translate::TranslatorBuilder::new()
        .build()
        .translate(pattern, &ast)
        .map_err(|e| RegexError::new(e.kind().to_string()))
}

/// Step 3: the NFA, refused over [`REGEX_MAX_SIZE`].
fn build_nfa(hir: &Hir) -> Result<NFA, RegexError> {
    let too_large = || {
        RegexError::new(format!(
            "the pattern compiles to more than {REGEX_MAX_SIZE} states and transitions"
        ))
    };
    let nfa = shared::build(hir, too_large)?;
    if nfa_size(&nfa) > REGEX_MAX_SIZE {
        return Err(too_large());
    }
    Ok(nfa)
}

/// States plus transitions: what one step of the lazy DFA may have to visit.
fn nfa_size(nfa: &NFA) -> u64 {
    nfa.states()
        .iter()
        .map(|state| {
            1 + match state {
                State::Sparse(sparse) => sparse.transitions.len(),
                State::Dense(_) => 256,
                State::Union { alternates } => alternates.len(),
                State::ByteRange { .. }
                | State::Look { .. }
                | State::BinaryUnion { .. }
                | State::Capture { .. } => 1,
                State::Fail | State::Match { .. } => 0,
            }
        })
        .sum::<usize>() as u64
}

#[cfg(test)]
mod tests;
