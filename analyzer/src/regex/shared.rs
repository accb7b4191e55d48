//! What pattern compilations share, so that a check pays for a literal pattern once.
//!
//! **One NFA compiler per thread.** regex-automata's Thompson compiler keeps a cache for
//! compiling Unicode classes to UTF-8 automata (10,000 entries) that it allocates, fills and
//! frees whenever a new compiler meets its first class: for `^fix(\(.*\))?: ` (whose `.` is a
//! Unicode class) that was three quarters of the compile's instructions. The compiler is made
//! to be reused (its caches are versioned and cleared on every build, and it builds the same
//! NFA as a fresh one), so each thread keeps one. What a thread keeps is bounded: that cache
//! (about 320 KiB), and the builder's state list of the largest NFA it built, which the build
//! limit holds to about `64 × REGEX_MAX_SIZE` bytes.
//!
//! **One compiled size per pattern and check.** The checker compiles a literal pattern to
//! refuse it in the evaluator's words, the estimator to price the call by its size, and the
//! search for would-pass bounds estimates again at every step. Inside [`share_sizes`] (an API
//! call's parse, check and estimate) the first answer for each pattern text is kept and the
//! later ones read it. The memo lives only as long as that call: a later check of the same
//! expression compiles again, so repeated checks are measured as what they are, and nothing
//! accumulates in a long-lived thread. Its size is at most that of the expression's literals.

#[cfg(test)]
use std::cell::Cell;
use std::cell::RefCell;
use std::collections::BTreeMap;

use regex_automata::nfa::thompson::{self, NFA, WhichCaptures};
use regex_syntax::hir::Hir;

use super::{NFA_BUILD_LIMIT, REGEX_MAX_PATTERN, RegexError};

/// The compiled size, or the refusal, of each pattern text met in one [`share_sizes`] call.
type Sizes = BTreeMap<Box<str>, Result<u64, RegexError>>;

thread_local! {
    static COMPILER: thompson::Compiler = compiler();
    /// The compiled sizes of this thread's current [`share_sizes`] call; `None` outside one.
    static SIZES: RefCell<Option<Sizes>> = const { RefCell::new(None) };
}

/// Runs `f` with every constant pattern's compiled size computed at most once; nested calls
/// share the outermost one's memo.
pub(crate) fn share_sizes<T>(f: impl FnOnce() -> T) -> T {
    let started = SIZES
        .try_with(|sizes| {
            let mut sizes = sizes.borrow_mut();
            if sizes.is_some() {
                return false;
            }
            *sizes = Some(BTreeMap::new());
            true
        })
        .unwrap_or(false);
    // Cleared on the way out, an unwinding panic included, so that the next call on this
    // thread starts empty.
    let _guard = started.then_some(ClearOnDrop);
    f()
}

/// The compiled size of `pattern`: from the memo inside [`share_sizes`], else from `compute`.
/// A pattern over the length limit is refused before any work and is not kept.
pub(super) fn size(
    pattern: &str,
    compute: impl FnOnce() -> Result<u64, RegexError>,
) -> Result<u64, RegexError> {
    if pattern.len() as u64 > REGEX_MAX_PATTERN {
        return compute();
    }
    let known = SIZES.try_with(|sizes| sizes.borrow().as_ref().map(|s| s.get(pattern).cloned()));
    let Ok(Some(known)) = known else {
        // Outside a shared call (or while the thread is torn down): nothing to keep.
        return compute();
    };
    if let Some(known) = known {
        return known;
    }
    let computed = compute();
    let _ = SIZES.try_with(|sizes| {
        if let Some(sizes) = sizes.borrow_mut().as_mut() {
            sizes.insert(pattern.into(), computed.clone());
        }
    });
    computed
}

/// The NFA of `hir`, built with this thread's compiler (or with a fresh one while the thread is
/// being torn down and its own is gone); a build stopped by its memory limit is `too_large`.
pub(super) fn build(hir: &Hir, too_large: impl Fn() -> RegexError) -> Result<NFA, RegexError> {
    #[cfg(test)]
    BUILDS.with(|n| n.set(n.get() + 1));
    let build = |compiler: &thompson::Compiler| {
        compiler.build_from_hir(hir).map_err(|e| {
            if e.to_string().contains("exceeded") {
                too_large()
            } else {
                RegexError::new(e.to_string())
            }
        })
    };
    COMPILER
        .try_with(build)
        .unwrap_or_else(|_| build(&compiler()))
}

/// The compiler's configuration: no capture states (the search only says whether it matched),
/// and a build that stops once its memory passes what [`super::REGEX_MAX_SIZE`] could need.
pub(super) fn compiler() -> thompson::Compiler {
    let mut compiler = thompson::Compiler::new();
    compiler.configure(
        thompson::Config::new()
            .nfa_size_limit(Some(NFA_BUILD_LIMIT))
            .which_captures(WhichCaptures::None),
    );
    compiler
}

struct ClearOnDrop;

impl Drop for ClearOnDrop {
    fn drop(&mut self) {
        let _ = SIZES.try_with(|sizes| *sizes.borrow_mut() = None);
    }
}

#[cfg(test)]
thread_local! {
    /// NFAs built on this thread, for the tests that count compilations.
    static BUILDS: Cell<u64> = const { Cell::new(0) };
}

/// How many NFAs this thread has built.
#[cfg(test)]
pub(crate) fn builds() -> u64 {
    BUILDS.with(Cell::get)
}
