//! Cost: the shared cost table, and the static worst-case estimator.

pub mod table;

pub use table::{COST_MODEL_VERSION, DEFAULT_COST_LIMIT};
