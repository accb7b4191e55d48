//! ozcheck's analyzer: a CEL front end, a type checker, a static worst-case cost estimator and a
//! metered evaluator, for filters that hostile text may have steered.
//!
//! The passes run in order, each a module with one entry point:
//! [`syntax::parse`] → [`check::check`] → `cost` → `eval`. Hosts call [`check_filter`] (the save
//! path) or [`check_expression`].
//!
//! # Example: the save path
//!
//! ```
//! use ozcheck_analyzer::{Options, Verdict, check_filter};
//!
//! let options = Options::default();
//! let report = check_filter("event.attributes.labels.exists(l, l == 'urgent')", &options);
//! assert_eq!(report.verdict, Verdict::Accepted);
//! assert!(report.cost.unwrap().max <= options.limit);
//!
//! let nested = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))";
//! let report = check_filter(nested, &options);
//! assert_eq!(report.verdict, Verdict::Refused);
//! assert_eq!(report.diagnostics[0].code, "cost-over-limit");
//! ```
//!
//! # Untrusted expressions
//!
//! Filters are written by models that outside text may steer, so every entry point treats the
//! expression as hostile:
//!
//! - **Size.** The source is refused over [`syntax::ParseOptions::max_bytes`] (1024 bytes by
//!   default) before the lexer sees a byte. Parsing, checking and estimating are linear in the
//!   source size (identifier suggestions compare at most 64 characters).
//! - **Depth.** No accepted tree is deeper than [`syntax::ParseOptions::max_depth`] (250); long
//!   runs of parentheses and unary operators are folded without recursion. Every later pass
//!   recurses at most that deep, so stack use is bounded and no input overflows it.
//! - **No panics.** Every pass returns diagnostics for bad input; the parser, the lint and the
//!   evaluator are fuzzed for panics (see `fuzz/`), and property tests assert it.
//! - **Cost.** The static estimate is an upper bound of the metered cost for every event within
//!   [`EventBounds`] (tested by property and fuzzing). At run time the meter charges each
//!   operation *before* doing it, including the size of every string, list and map built, so no
//!   single operation overshoots the limit; a monotonic deadline (250 ms by default) is checked
//!   every few thousand units of work and inside long scans.
//! - **Regexes.** `matches` takes RE2 syntax (`\d \w \s \b` are ASCII). A pattern is refused
//!   before any costly work when it is longer than 1024 bytes, repeats more than 1000 times,
//!   names more than 32 Unicode classes or needs more than about a millisecond of case folding;
//!   it then compiles in a few milliseconds to at most 4096 states and transitions, and the
//!   search (a lazy DFA that never gives up) does at most that much work per input byte, is
//!   charged for it before it starts, and reads the deadline between chunks. See [`regex`].
//! - **Memory.** An evaluation builds at most 32 MiB of values
//!   ([`cost::table::MEMORY_LIMIT`]), whatever its cost limit; work that grows with its
//!   operands (deep equality, `in`, concatenation, conversions) is charged by that work before it
//!   runs and reads the deadline inside.
//! - **Events.** An event is refused when it exceeds its source's bounds, because the analysis is
//!   only sound for events within them.
#![deny(missing_docs)]

mod api;
pub mod bounds;
pub mod check;
pub mod conformance;
pub mod cost;
mod diagnostic;
pub mod eval;
pub mod extensions;
#[cfg(feature = "testgen")]
#[doc(hidden)]
pub mod hostile;
pub mod json;
mod options;
pub mod regex;
pub mod syntax;
pub mod template;
#[cfg(feature = "testgen")]
#[doc(hidden)]
pub mod testgen;
#[cfg(feature = "oracle")]
#[doc(hidden)]
pub mod testing;
pub mod types;
pub mod wait_args;
pub mod witness;

pub use api::{
    CostSummary, Report, Verdict, check_expression, check_filter, check_with_witness, compile,
    cost_summary, explain_expression,
};
pub use bounds::EventBounds;
pub use cost::CostRange;
pub use diagnostic::{Diagnostic, Severity, SourceDiagnostic};
pub use extensions::{Extension, ExtensionSettings, Extensions};
pub use options::Options;
