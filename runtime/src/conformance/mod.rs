//! The conformance suite's machinery: scenario files, the runner, the matcher, and the reference
//! runtime's adapter. The format and protocol are documented in `docs/conformance.md`.

pub mod adapter;
pub mod matcher;
pub mod runner;

pub use adapter::{PROTOCOL, ReferenceAdapter, SessionStores, release_schemas};
pub use runner::{
    RunOptions, Scenario, ScenarioResult, collect, run_file, run_scenario, serve_stdio,
};
