//! ozcheck's analyzer: a CEL front end, a type checker, a static worst-case cost estimator and a
//! metered evaluator, for filters that hostile text may have steered.
//!
//! The passes run in order, each a module with one entry point:
//! [`syntax::parse`] → `check` → `cost` → `eval`.
#![deny(missing_docs)]

pub mod bounds;
pub mod cost;
mod diagnostic;
pub mod syntax;
pub mod types;

pub use bounds::EventBounds;
pub use diagnostic::{Diagnostic, Severity, SourceDiagnostic};
