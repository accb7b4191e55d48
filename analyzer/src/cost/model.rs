//! The switches of the cost model that both the estimator and the meter read: whether the
//! allocation part is charged, and how the estimator relates the sizes of event parts.

/// Which parts of the cost model are charged.
///
/// The estimator and the meter take the same value, so a "CPU only" comparison with cel-go's
/// published numbers runs the very same code paths as production, minus the allocation charges.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct CostModel {
    /// Charge every string, bytes, list and map that evaluation builds (the `alloc_*` entries of
    /// the table). On in production; off only to compare with cel-go, which does not meter it.
    pub allocations: bool,
}

impl CostModel {
    /// The production model: CPU part plus allocation part.
    pub const FULL: CostModel = CostModel { allocations: true };
    /// The CPU part alone, as cel-go meters it.
    pub const CPU_ONLY: CostModel = CostModel { allocations: false };

    /// `units` when allocations are charged, else zero.
    pub const fn alloc(self, units: u64) -> u64 {
        if self.allocations { units } else { 0 }
    }
}

impl Default for CostModel {
    fn default() -> Self {
        Self::FULL
    }
}

/// How the estimator bounds the sizes of different event parts relative to each other.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub enum SizeModel {
    /// Parts that come from the same budget share it: everything under `event.attributes`
    /// fits in the attributes budget together. This is the production model.
    #[default]
    Shared,
    /// Every part is bounded on its own, each at the full size of its budget (cel-go's and
    /// Kubernetes' way). Sound but loose; kept to show what the shared budget buys.
    Independent,
}
