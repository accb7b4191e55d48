//! The entry points for hosts: one call that parses, checks and estimates an expression and
//! returns a verdict. No I/O, no panics, no allocation beyond the expression's own size.

use crate::check::{self, Checked, Env};
use crate::cost::{self, CostRange};
use crate::syntax;
use crate::witness::{self, Effort, Witness};
use crate::{Diagnostic, Options};

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
    match compile(source, env, options) {
        Ok(checked) => verdict(&cost::estimate(&checked, env, options), options),
        Err(diagnostics) => Report {
            verdict: Verdict::Refused,
            cost: None,
            limit: options.limit,
            diagnostics,
        },
    }
}

/// Checks an expression and builds its witness: the heaviest event within `options.bounds`
/// that its estimate's derivation leads to, with the metered cost on it ([`witness::build`],
/// searching as hard as [`Effort::for_limit`] says). The witness is `None` when the expression
/// does not compile or its environment is not an event filter's.
pub fn check_with_witness(source: &str, env: &Env, options: &Options) -> (Report, Option<Witness>) {
    let checked = match compile(source, env, options) {
        Ok(checked) => checked,
        Err(_) => return (check_expression(source, env, options), None),
    };
    let estimate = cost::estimate(&checked, env, options);
    let effort = Effort::for_limit(options.limit, estimate.cost.max);
    let witness = witness::build(&checked, env, &estimate, options, effort);
    (verdict(&estimate, options), witness)
}

fn verdict(estimate: &cost::Estimate, options: &Options) -> Report {
    let diagnostics: Vec<Diagnostic> = cost::diagnostic(estimate, options.limit)
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
    }
}

/// Parses, checks and estimates an expression and renders its cost tree (what
/// `ozcheck filter --explain` prints); the diagnostics when it does not compile.
pub fn explain_expression(
    source: &str,
    env: &Env,
    options: &Options,
) -> Result<String, Vec<Diagnostic>> {
    let checked = compile(source, env, options)?;
    let estimate = cost::estimate(&checked, env, options);
    Ok(cost::explain(&estimate, source))
}

/// Parses and checks an expression.
pub fn compile(source: &str, env: &Env, options: &Options) -> Result<Checked, Vec<Diagnostic>> {
    let ast = syntax::parse(source, &options.parse)?;
    check::check(ast, env)
}
