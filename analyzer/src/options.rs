//! What a check is configured with: the cost limit, the event bounds, the parser's limits and
//! the cost and size models. A type of its own below every pass, so the estimator and the
//! witness builder take it without reaching up into the API façade.

use crate::EventBounds;
use crate::cost::{CostModel, DEFAULT_COST_LIMIT, SizeModel};
use crate::syntax::ParseOptions;

/// Everything a check can be configured with.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Options {
    /// The cost limit, in cost units. Default 1,000,000.
    pub limit: u64,
    /// The largest event the filter may see.
    pub bounds: EventBounds,
    /// Source size and nesting limits.
    pub parse: ParseOptions,
    /// Which parts of the cost model are charged (allocations on by default).
    pub model: CostModel,
    /// How sizes of event parts relate (a shared budget by default).
    pub sizes: SizeModel,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            limit: DEFAULT_COST_LIMIT,
            bounds: EventBounds::DEFAULT,
            parse: ParseOptions::default(),
            model: CostModel::FULL,
            sizes: SizeModel::Shared,
        }
    }
}
