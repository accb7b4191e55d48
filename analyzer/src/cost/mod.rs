//! Cost: the shared cost table and model switches, and the static worst-case estimator with its
//! explanations, and for a refused estimate the bound of the source that would pass it.
//!
//! [`estimate`] walks a checked expression once and returns an [`Estimate`]: a `{min, max}` per
//! node and for the whole expression. Sizes are symbolic (see `parts`, `shape` and `poly`) until the
//! very end, where they are maximised over every event within [`crate::EventBounds`].

mod calls;
mod estimate;
mod explain;
mod libraries;
pub mod model;
pub(crate) mod parts;
pub(crate) mod poly;
mod remedy;
mod shape;
pub mod table;

pub use estimate::{CostRange, Derivation, Estimate, NodeCost, estimate};
pub use explain::{diagnostic, dominant, explain, group};
pub use model::{CostModel, SizeModel};
pub use remedy::{BoundChange, BoundFloor, Remedy, remedy};
pub use table::{COST_MODEL_VERSION, DEFAULT_COST_LIMIT};
