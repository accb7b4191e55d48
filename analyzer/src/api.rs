//! The entry points for hosts: one call that parses, checks and estimates an expression and
//! returns a verdict. No I/O, no panics, no allocation beyond the expression's own size. Each
//! call compiles a literal `matches` pattern once for all its passes ([`regex::share_sizes`]).

use crate::check::{self, Checked, Env};
use crate::cost::{self, CostRange, Remedy};
use crate::witness::{self, Effort, Witness};
use crate::{Diagnostic, Options};
use crate::{regex, syntax};

/// Whether an expression may run.
#[derive(Clone, Copy, Debug, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// It parses, checks, and its worst case fits the limit.
    Accepted,
    /// At least one error-level diagnostic.
    Refused,
}

/// The outcome of checking one expression.
#[derive(Clone, Debug)]
pub struct Report {
    /// Accepted or refused.
    pub verdict: Verdict,
    /// The estimated cost range, when the expression got far enough to be estimated.
    pub cost: Option<CostRange>,
    /// The limit it was compared with.
    pub limit: u64,
    /// Every finding, errors first in source order.
    pub diagnostics: Vec<Diagnostic>,
    /// For an estimate over the limit, the bounds of the source that would pass it, or why
    /// none would ([`cost::remedy`]); `None` otherwise.
    pub would_pass: Option<Remedy>,
}

/// Checks a wait or trigger filter (CEL over `event` alone): parses, type-checks and
/// estimates its worst-case cost over every event within `options.bounds`.
///
/// Never panics and does no I/O; hostile input yields diagnostics.
///
/// ```
/// use ozcheck_analyzer::{Options, Verdict, check_filter};
///
/// let report = check_filter("event.text.contains('LGTM')", &Options::default());
/// assert_eq!(report.verdict, Verdict::Accepted);
/// let cost = report.cost.expect("estimated");
/// assert!(cost.min <= cost.max && cost.max <= report.limit);
///
/// let nested = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))";
/// let report = check_filter(nested, &Options::default());
/// assert_eq!(report.verdict, Verdict::Refused);
/// assert_eq!(report.diagnostics[0].code, "cost-over-limit");
/// ```
pub fn check_filter(source: &str, options: &Options) -> Report {
    check_expression(source, &Env::filter(), options)
}

/// Checks an expression in any environment.
pub fn check_expression(source: &str, env: &Env, options: &Options) -> Report {
    regex::share_sizes(|| check_shared(source, env, options))
}

/// [`check_expression`] within one memo of compiled pattern sizes.
fn check_shared(source: &str, env: &Env, options: &Options) -> Report {
    match compile(source, env, options) {
        Ok(checked) => verdict(
            &checked,
            env,
            &cost::estimate(&checked, env, options),
            options,
        ),
        Err(diagnostics) => Report {
            verdict: Verdict::Refused,
            cost: None,
            limit: options.limit,
            diagnostics,
            would_pass: None,
        },
    }
}

/// Checks an expression and builds its witness: the heaviest event within `options.bounds`
/// that its estimate's derivation leads to, with the metered cost on it ([`witness::build`],
/// searching as hard as [`Effort::for_limit`] says). The witness is `None` when the expression
/// does not compile or its environment is not an event filter's.
pub fn check_with_witness(source: &str, env: &Env, options: &Options) -> (Report, Option<Witness>) {
    regex::share_sizes(|| {
        let Ok(checked) = compile(source, env, options) else {
            return (check_shared(source, env, options), None);
        };
        let estimate = cost::estimate(&checked, env, options);
        let effort = Effort::for_limit(options.limit, estimate.cost.max);
        let witness = witness::build(&checked, env, &estimate, options, effort);
        (verdict(&checked, env, &estimate, options), witness)
    })
}

/// The report on an estimate: refused with a `cost-over-limit` error that says what would pass
/// when its max exceeds the limit, accepted otherwise.
fn verdict(checked: &Checked, env: &Env, estimate: &cost::Estimate, options: &Options) -> Report {
    let would_pass = cost::remedy(checked, env, options, estimate.cost.max);
    let diagnostics: Vec<Diagnostic> =
        cost::diagnostic(estimate, options.limit, would_pass.as_ref())
            .into_iter()
            .collect();
    Report {
        verdict: if diagnostics.iter().any(Diagnostic::is_error) {
            Verdict::Refused
        } else {
            Verdict::Accepted
        },
        cost: Some(estimate.cost),
        limit: options.limit,
        diagnostics,
        would_pass,
    }
}

/// Parses, checks and estimates an expression and renders its cost tree (what
/// `ozcheck filter --explain` prints); the diagnostics when it does not compile.
pub fn explain_expression(
    source: &str,
    env: &Env,
    options: &Options,
) -> Result<String, Vec<Diagnostic>> {
    regex::share_sizes(|| {
        let checked = compile(source, env, options)?;
        let estimate = cost::estimate(&checked, env, options);
        Ok(cost::explain(&estimate, source))
    })
}

/// What an expression's cost comes from, for an editor's hover: the range, the limit, the
/// sub-expression that dominates the max (see [`cost::dominant`]) and the size assumption
/// behind it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CostSummary {
    /// The estimated range of the whole expression.
    pub cost: CostRange,
    /// The limit it is compared with.
    pub limit: u64,
    /// The bytes of the dominating sub-expression in the source.
    pub dominant: crate::syntax::Span,
    /// The dominating sub-expression's own max, and how many times it may run.
    pub dominant_max: u64,
    /// How many times the dominating sub-expression may run per evaluation.
    pub dominant_runs: u64,
    /// The size assumption behind the max, in words.
    pub assumption: String,
    /// When the max exceeds the limit, the bounds of the source that would pass it, or why
    /// none would.
    pub would_pass: Option<Remedy>,
}

/// Parses, checks and estimates an expression and says what dominates its cost; the
/// diagnostics when it does not compile.
///
/// ```
/// use ozcheck_analyzer::check::Env;
/// use ozcheck_analyzer::{Options, cost_summary};
///
/// let source = "event.type == 'push' && event.attributes.labels.exists(l, l == 'urgent')";
/// let summary = cost_summary(source, &Env::filter(), &Options::default()).expect("compiles");
/// assert!(summary.cost.min <= summary.cost.max && summary.cost.max <= summary.limit);
/// // The iteration over the labels dominates, not the comparison of the type.
/// let dominant = &source[summary.dominant.start as usize..summary.dominant.end as usize];
/// assert!(dominant.contains("exists"), "{dominant}");
/// assert!(cost_summary("event.nope", &Env::filter(), &Options::default()).is_err());
/// ```
pub fn cost_summary(
    source: &str,
    env: &Env,
    options: &Options,
) -> Result<CostSummary, Vec<Diagnostic>> {
    regex::share_sizes(|| summarize(source, env, options))
}

/// [`cost_summary`] within one memo of compiled pattern sizes.
fn summarize(source: &str, env: &Env, options: &Options) -> Result<CostSummary, Vec<Diagnostic>> {
    let checked = compile(source, env, options)?;
    let estimate = cost::estimate(&checked, env, options);
    let id = cost::dominant(&estimate);
    let node = estimate.nodes.get(id as usize).and_then(Option::as_ref);
    Ok(CostSummary {
        cost: estimate.cost,
        limit: options.limit,
        dominant: node.map_or(crate::syntax::Span { start: 0, end: 0 }, |n| n.span),
        dominant_max: node.map_or(estimate.cost.max, |n| n.max),
        dominant_runs: node.map_or(1, |n| n.multiplier),
        assumption: estimate.assumption.clone(),
        would_pass: cost::remedy(&checked, env, options, estimate.cost.max),
    })
}

/// Parses and checks an expression.
pub fn compile(source: &str, env: &Env, options: &Options) -> Result<Checked, Vec<Diagnostic>> {
    let ast = syntax::parse(source, &options.parse)?;
    check::check(ast, env)
}
