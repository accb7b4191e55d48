//! Witnesses: for a filter over `event`, the heaviest event within bounds that the estimate's
//! own derivation lets us build, with its metered cost. For a refused filter it is a replayable
//! proof of the refusal (its metered cost exceeds the limit); for an accepted one, the event that
//! comes closest to the estimate, which measures how tight the estimate is.
//!
//! The estimate names every part of the event it reasons about (`event.text`, a member under a
//! constant key, the elements of an iterated list, a member under a computed key…), how the
//! expression uses each, and the monomial of its largest term, whose exponents say how the worst
//! case splits the shared attributes budget. [`plan`] turns that into a template of slots with
//! candidate kinds and contents, [`render`] writes a template under one set of choices as compact
//! JSON that fits the bounds exactly as the runtime measures them, and [`search`] climbs the
//! choices with the metered evaluator as the judge.
//!
//! Extending to new functions or node kinds: the witness reads only the derivation, so a new
//! function needs nothing here unless it uses a part in a new way; then give it a [`Uses`] flag
//! where the estimator prices it (`cost/calls.rs`) and a line in `plan::kinds` saying which kind
//! of value makes that use expensive. A new kind of part needs a branch in `plan::Builder::group`.
//!
//! [`Uses`]: crate::cost::parts::Uses

mod plan;
mod render;
mod search;
mod text;

use std::fmt::Write as _;

use crate::Options;
use crate::check::{Checked, Env, EnvKind};
use crate::cost::Estimate;
use crate::eval::Program;

/// The heaviest event found for a filter.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Witness {
    /// The event, as compact JSON within the bounds the filter was estimated for (the text
    /// `ozcheck eval --event` reads).
    pub event: String,
    /// The metered cost of the filter on it. When `complete` is false the evaluation was stopped
    /// at the search cap and this is the cost it would have reached at that point (more than the
    /// cap).
    pub cost: u64,
    /// Whether the evaluation ran to its end.
    pub complete: bool,
    /// How many candidate events were evaluated.
    pub evaluations: usize,
    /// The runtime error the filter stops with on the event, if it does. The search prefers an
    /// event the filter runs on without error to any heavier one it fails on, so this is set
    /// only when no candidate ran without error, or when a failing one passes the limit (it is
    /// stopped by cost before it fails, and proves the refusal all the same).
    pub failure: Option<String>,
    /// For a filter refused by cost whose witness stays within the limit: why the search found
    /// no event that passes it, in words for the user. `None` when the filter is accepted or
    /// the witness proves the refusal.
    pub shortfall: Option<String>,
}

impl Witness {
    /// Whether the witness proves that the filter can cost more than `limit`.
    pub fn proves(&self, limit: u64) -> bool {
        self.cost > limit
    }
}

/// How hard the search tries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Effort {
    /// Evaluations stop at this cost: the search for a refused filter can end as soon as one
    /// candidate passes the limit, and no evaluation does more work than this.
    pub cap: u64,
    /// At most this many candidate evaluations.
    pub evaluations: usize,
    /// At most this many cost units metered over all candidates: the search stops once their
    /// evaluations have done this much work, so a filter whose every candidate runs to the cap
    /// is searched for a bounded time (a 1 KiB filter of fourteen nested loops took 30 s with
    /// 400 candidates at sixteen million units each).
    pub work: u64,
}

impl Effort {
    /// What `ozcheck filter --witness` spends: evaluations up to the estimate's max, but at
    /// least just past the limit and at most sixteen limits, 400 candidates, and in all at most
    /// four caps or 32 limits of work, whichever is more (about a second in a release build).
    pub fn for_limit(limit: u64, estimate_max: u64) -> Effort {
        let cap = estimate_max
            .min(limit.saturating_mul(16))
            .max(limit.saturating_add(1));
        Effort {
            cap,
            evaluations: 400,
            work: cap.saturating_mul(4).max(limit.saturating_mul(32)),
        }
    }
}

/// Builds the witness of a checked filter from its estimate. `None` when the environment is
/// not an event filter's (only `event` is bound) or the expression cannot be prepared for
/// evaluation.
pub fn build(
    checked: &Checked,
    env: &Env,
    estimate: &Estimate,
    options: &Options,
    effort: Effort,
) -> Option<Witness> {
    if !matches!(env.kind(), EnvKind::Filter | EnvKind::Sender) {
        return None;
    }
    let program = Program::from_checked(checked).ok()?;
    let template = plan::template(&estimate.derivation, &checked.ast);
    let found = search::Search::new(
        &template,
        &program,
        options,
        effort.cap,
        effort.evaluations,
        effort.work,
    )
    .run();
    let shortfall = (estimate.cost.max > options.limit && found.cost <= options.limit)
        .then(|| shortfall(&found, estimate, options.limit));
    Some(Witness {
        event: found.event,
        cost: found.cost,
        complete: !found.stopped,
        evaluations: found.evaluations,
        failure: found.failure,
        shortfall,
    })
}

/// Why no candidate of a refused filter passed the limit. Either the search missed the event
/// (it explores a template of the parts the estimate names, not every event), or no such event
/// exists and the estimate is loose for this shape; the search cannot tell which, so the message
/// says both and how far it got.
fn shortfall(found: &search::Found, estimate: &Estimate, limit: u64) -> String {
    let mut why = format!(
        "no event found that costs more than the limit of {limit}: the heaviest of {} candidates \
         costs {} where the estimate allows up to {}",
        found.evaluations, found.cost, estimate.cost.max
    );
    if let Some(failure) = &found.failure {
        let _ = write!(why, " (and the filter fails on it: {failure})");
    }
    why.push_str(
        "; either the worst case needs an event the witness builder does not construct, or the \
         estimate is loose for this shape (it is an upper bound, not a reachable cost)",
    );
    why
}
