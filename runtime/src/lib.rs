//! The reference wait runtime of ozcheck: event waits (`oz.wait_for_event` and the flow
//! `wait_for_event` step), event triggers of routines and flows, a durable store, webhook
//! ingestion and the conformance runner that checks this or any other implementation.
//!
//! Invariants, each decided in one place:
//! - **A wait changes state once** (`open → matched | timed_out | refused`), in the store.
//! - **An event goes to one wait of a job**, by the store's `(job, event)` ledger.
//! - **Time comes from an injected [`clock::Clock`]**; nothing here sleeps on its own in tests.
#![deny(missing_docs)]

pub mod args;
pub mod clock;
pub mod config;
pub mod configure;
pub mod conformance;
pub mod edge;
pub mod error;
pub mod faults;
pub mod filter;
pub mod fires;
pub mod flows;
mod group;
pub mod index;
pub mod ingest;
pub mod jobs;
pub mod keys;
pub mod log;
pub mod model;
pub mod probe;
pub mod render;
pub mod routes;
pub mod serve;
pub mod source;
pub mod store;
pub mod template;
pub mod triggers;
pub mod views;

pub use edge::{Runtime, Setup, WaitClosed};
pub use error::RuntimeError;
pub use jobs::JobStart;
pub use routes::Routing;
