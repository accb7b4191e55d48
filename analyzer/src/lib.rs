//! ozcheck's analyzer: a CEL front end, a type checker, a static worst-case cost estimator and a
//! metered evaluator, for filters that hostile text may have steered.
//!
//! The passes run in order, each a module with one entry point:
//! [`syntax::parse`] → [`check::check`] → `cost` → `eval`. Hosts call [`check_filter`] (the save
//! path) or [`check_expression`].
#![deny(missing_docs)]

mod api;
pub mod bounds;
pub mod check;
pub mod conformance;
pub mod cost;
mod diagnostic;
pub mod eval;
pub mod syntax;
#[cfg(feature = "oracle")]
#[doc(hidden)]
pub mod testing;
pub mod types;
pub mod wait_args;

pub use api::{CostRange, Options, Report, Verdict, check_expression, check_filter, compile};
pub use bounds::EventBounds;
pub use diagnostic::{Diagnostic, Severity, SourceDiagnostic};
