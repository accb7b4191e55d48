//! What would pass: for an expression whose estimate exceeds the limit, the largest value of
//! each bound a source declares (text, attributes, header fields) under which the estimate
//! fits, the other bounds kept as they are, or why no single bound makes it fit.
//!
//! The estimate is monotone in every bound (docs/cost-model.md §5.1), so a binary search
//! between the bound's least value and its current one finds that value exactly. The search
//! keeps two facts true at every step, so the answer holds whatever the proof says: the
//! estimate fits at the value it reports, and exceeds the limit one byte above it.

use super::estimate::estimate;
use super::explain::group;
use crate::Options;
use crate::bounds::Bound;
use crate::check::{Checked, Env};

/// A bound that, lowered alone, brings the estimate under the limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BoundChange {
    /// Which bound.
    pub bound: Bound,
    /// Its value now, bytes.
    pub current: u64,
    /// The largest value at which the estimate fits the limit; at `at_most + 1` it does not.
    pub at_most: u64,
    /// The estimate's max with the bound at `at_most`.
    pub cost: u64,
}

/// A bound that cannot bring the estimate under the limit on its own: the estimate with the
/// bound at its least value (equal to the estimate now when the cost does not depend on it).
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
pub struct BoundFloor {
    /// Which bound.
    pub bound: Bound,
    /// Its least value (or its current one, when that is already lower), bytes.
    pub least: u64,
    /// The estimate's max with the bound there.
    pub cost: u64,
}

/// What would make a refused estimate pass, bound by bound.
#[derive(Clone, Debug, PartialEq, Eq, serde::Serialize)]
pub struct Remedy {
    /// The estimate's max now.
    pub cost: u64,
    /// The bounds that would pass it, the smallest change (the largest share of the current
    /// value kept) first. Empty when no single bound does.
    pub changes: Vec<BoundChange>,
    /// The bounds that would not, each with the estimate at its least value.
    pub floors: Vec<BoundFloor>,
}

impl Remedy {
    /// One clause for a diagnostic's help: the bounds that would pass, or why none does.
    pub fn describe(&self) -> String {
        if !self.changes.is_empty() {
            let options: Vec<String> = self
                .changes
                .iter()
                .map(|c| {
                    format!(
                        "with {} at most {} bytes (instead of {}) it costs up to {}",
                        c.bound.subject(),
                        group(c.at_most),
                        group(c.current),
                        group(c.cost)
                    )
                })
                .collect();
            return format!("it would pass: {}", options.join("; or "));
        }
        let sized: Vec<String> = self
            .floors
            .iter()
            .filter(|f| f.cost < self.cost)
            .map(|f| {
                format!(
                    "with {} at {} bytes it still costs up to {}",
                    f.bound.subject(),
                    group(f.least),
                    group(f.cost)
                )
            })
            .collect();
        if sized.is_empty() {
            "no bound of the source makes it pass: its cost does not depend on the size of \
             the event's text, attributes or header fields"
                .to_owned()
        } else {
            format!(
                "no single bound of the source makes it pass: {}",
                sized.join("; ")
            )
        }
    }
}

/// What would make the expression fit `options.limit`, when its estimate under `options` (whose
/// max is `now`) does not; `None` when it fits.
///
/// At most one estimate per bound when the cost does not depend on it or cannot fit, and one
/// per halving of the bound's range otherwise (about 40 estimates at the default bounds).
pub fn remedy(checked: &Checked, env: &Env, options: &Options, now: u64) -> Option<Remedy> {
    if now <= options.limit {
        return None;
    }
    let mut changes = Vec::new();
    let mut floors = Vec::new();
    for bound in Bound::ALL {
        let current = options.bounds.get(bound);
        let cost_at = |value: u64| {
            let varied = Options {
                bounds: options.bounds.with(bound, value),
                ..options.clone()
            };
            estimate(checked, env, &varied).cost.max
        };
        let least = bound.least().min(current);
        let floor = if least == current {
            now
        } else {
            cost_at(least)
        };
        if floor > options.limit {
            floors.push(BoundFloor {
                bound,
                least,
                cost: floor,
            });
            continue;
        }
        let (at_most, cost) = largest_fitting(cost_at, (least, floor), current, options.limit);
        changes.push(BoundChange {
            bound,
            current,
            at_most,
            cost,
        });
    }
    // The smallest change first: the largest share of the current bound kept.
    changes.sort_by(|a, b| {
        let share = |c: &BoundChange| c.at_most as f64 / c.current.max(1) as f64;
        share(b).total_cmp(&share(a))
    });
    Some(Remedy {
        cost: now,
        changes,
        floors,
    })
}

/// The largest value in `[fit, over)` whose cost fits `limit`, with that cost, given that the
/// cost at `fit.0` is `fit.1 ≤ limit` and the cost at `over` exceeds it. Each step halves the
/// interval and keeps both ends so, which makes the result fit and the value after it not.
fn largest_fitting(
    cost_at: impl Fn(u64) -> u64,
    fit: (u64, u64),
    over: u64,
    limit: u64,
) -> (u64, u64) {
    let (mut fit, mut over) = (fit, over);
    while over - fit.0 > 1 {
        let mid = fit.0 + (over - fit.0) / 2;
        let cost = cost_at(mid);
        if cost <= limit {
            fit = (mid, cost);
        } else {
            over = mid;
        }
    }
    fit
}
