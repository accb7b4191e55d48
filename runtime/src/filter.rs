//! The one place where the runtime uses the analyzer: the static check of a filter when a wait
//! starts or a trigger is loaded, the evaluation of a filter (or a `sender` expression) on an
//! event, and the size bounds of a source's events.
//!
//! Keeping this wiring in one module means the evaluator can change without touching the edge.

use std::sync::Arc;
use std::time::Duration;

use ozcheck_analyzer::check::{Env, EnvKind};
use ozcheck_analyzer::eval::meter::ManualClock;
use ozcheck_analyzer::eval::{self, EvalError, Limits, Program};
use ozcheck_analyzer::{
    EventBounds, Extensions, Options, Report, Verdict, check_expression, compile,
};
use serde_json::Value;

use crate::model::Event;

/// A filter that passed the static check and may run on the edge.
#[derive(Clone, Debug)]
pub struct Filter {
    source: String,
    program: Arc<Program>,
    limits: Limits,
}

/// An event converted once into the evaluator's form, for every filter it meets.
#[derive(Clone, Debug)]
pub struct PreparedEvent(eval::Event);

impl PreparedEvent {
    /// Converts `event` (already within its source's bounds).
    pub fn new(event: &Event) -> Result<PreparedEvent, String> {
        let unbounded = EventBounds {
            text: u64::MAX,
            attributes: u64::MAX,
            header_field: u64::MAX,
        };
        eval::Event::from_value(&event.to_json(), &unbounded)
            .map(PreparedEvent)
            .map_err(|e| e.to_string())
    }
}

/// Why an evaluation gave no boolean.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Stopped {
    /// The meter stopped it (cost limit or deadline): the reason, for a refused wait.
    Limit(String),
    /// The expression failed on this event (a missing attribute, a type mismatch): false.
    Error(String),
}

/// A filter or `sender` expression the analyzer refused: its diagnostic code and message.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct Refusal {
    /// The analyzer's code (`cost-over-limit`, `expression-too-long`, `unknown-field`, …).
    pub code: &'static str,
    /// The analyzer's message.
    pub message: String,
}

/// Where an expression runs: a filter (a boolean over `event`) or a trigger's `sender` (a
/// string over `event`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExprRole {
    /// A wait's or trigger's `filter`.
    Filter,
    /// A trigger's `sender`.
    Sender,
}

impl ExprRole {
    /// The analyzer's environment of this role.
    pub fn env_kind(self) -> EnvKind {
        match self {
            ExprRole::Filter => EnvKind::Filter,
            ExprRole::Sender => EnvKind::Sender,
        }
    }
}

/// Test hooks of a source's evaluations, for filters and `sender` alike: they make the meter's
/// stops reachable for an expression that passed the static check.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct EvalHooks {
    /// The cost limit of one evaluation, apart from the static limit.
    pub cost_limit: Option<u64>,
    /// Each read of the evaluation's clock moves it on by this much, so the 250 ms deadline
    /// passes after a known number of reads.
    pub clock_step: Option<Duration>,
}

impl Filter {
    /// Checks a filter statically (size, syntax, types, worst-case cost over `bounds`) with
    /// Kubernetes' extensions and returns it, or the analyzer's refusal.
    pub fn compile(source: &str, bounds: &EventBounds) -> Result<Filter, Refusal> {
        Self::compile_as(
            ExprRole::Filter,
            source,
            bounds,
            Extensions::KUBERNETES,
            EvalHooks::default(),
        )
    }

    /// Checks a trigger's `sender` expression (CEL over `event` giving a string).
    pub fn compile_sender(source: &str, bounds: &EventBounds) -> Result<Filter, Refusal> {
        Self::compile_as(
            ExprRole::Sender,
            source,
            bounds,
            Extensions::KUBERNETES,
            EvalHooks::default(),
        )
    }

    /// Checks an expression in `role` with `extensions` enabled and sets its evaluations'
    /// limits, with `hooks` applied.
    pub fn compile_as(
        role: ExprRole,
        source: &str,
        bounds: &EventBounds,
        extensions: Extensions,
        hooks: EvalHooks,
    ) -> Result<Filter, Refusal> {
        let options = Options {
            bounds: *bounds,
            ..Options::default()
        };
        let env = match role {
            ExprRole::Filter => Env::filter(),
            ExprRole::Sender => Env::sender(),
        }
        .with_extensions(extensions);
        let report = check_expression(source, &env, &options);
        let mut filter = Self::from_report(source, &report, &env, &options)?;
        if let Some(limit) = hooks.cost_limit {
            filter.limits = filter.limits.with_cost(Some(limit));
        }
        if let Some(step) = hooks.clock_step {
            filter.limits = filter
                .limits
                .with_clock(Arc::new(ManualClock::stepping(step)));
        }
        Ok(filter)
    }

    fn from_report(
        source: &str,
        report: &Report,
        env: &Env,
        options: &Options,
    ) -> Result<Filter, Refusal> {
        if report.verdict == Verdict::Refused {
            return Err(first_refusal(&report.diagnostics));
        }
        let checked = compile(source, env, options).map_err(|d| first_refusal(&d))?;
        let program = Program::from_checked(&checked).map_err(|d| first_refusal(&d))?;
        Ok(Filter {
            source: source.to_owned(),
            program: Arc::new(program),
            limits: Limits::default().with_cost(Some(options.limit)),
        })
    }

    /// The filter's text.
    pub fn source(&self) -> &str {
        &self.source
    }

    /// Evaluates the filter on `event` with the metered evaluator.
    pub fn matches(&self, event: &PreparedEvent) -> Result<bool, Stopped> {
        match self.evaluate(event)? {
            Value::Bool(b) => Ok(b),
            other => Err(Stopped::Error(format!(
                "the filter gave {other}, not a boolean"
            ))),
        }
    }

    /// Evaluates the expression on `event` and returns its value as JSON (for `sender`).
    pub fn evaluate(&self, event: &PreparedEvent) -> Result<Value, Stopped> {
        match self.program.eval_event(&event.0, &self.limits) {
            Ok(evaluation) => Ok(evaluation.value.to_json()),
            Err(EvalError::Stopped(stop)) => Err(Stopped::Limit(stop.to_string())),
            Err(EvalError::Runtime { message, .. }) => Err(Stopped::Error(message)),
        }
    }
}

fn first_refusal(diagnostics: &[ozcheck_analyzer::Diagnostic]) -> Refusal {
    diagnostics
        .iter()
        .find(|d| d.severity == ozcheck_analyzer::Severity::Error)
        .or(diagnostics.first())
        .map_or_else(
            || Refusal {
                code: "refused",
                message: "the expression is refused".to_owned(),
            },
            |d| Refusal {
                code: d.code,
                message: d.message.clone(),
            },
        )
}

/// Checks that `event` is within `bounds`; the static cost analysis is only sound for such
/// events, so the edge refuses bigger ones at ingestion.
pub fn check_bounds(event: &Event, bounds: &EventBounds) -> Result<(), String> {
    eval::Event::from_value(&event.to_json(), bounds)
        .map(|_| ())
        .map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn event() -> Event {
        Event {
            source: "gh".into(),
            id: "d1".into(),
            kind: "push".into(),
            action: String::new(),
            subject: "octo/demo".into(),
            text: "hello".into(),
            attributes: serde_json::json!({"a": "bc"}),
        }
    }

    #[test]
    fn bounds_refuse_each_oversized_part() {
        let ok = EventBounds {
            text: 5,
            attributes: 10,
            header_field: 9,
        };
        assert_eq!(check_bounds(&event(), &ok), Ok(()));
        let text = EventBounds { text: 4, ..ok };
        assert!(
            check_bounds(&event(), &text)
                .unwrap_err()
                .contains("`text`")
        );
        let attrs = EventBounds {
            attributes: 9,
            ..ok
        };
        assert!(
            check_bounds(&event(), &attrs)
                .unwrap_err()
                .contains("`attributes`")
        );
        let header = EventBounds {
            header_field: 8,
            ..ok
        };
        assert!(
            check_bounds(&event(), &header)
                .unwrap_err()
                .contains("`subject`")
        );
    }

    #[test]
    fn an_oversized_filter_is_refused_statically() {
        let long = format!("event.text == '{}'", "a".repeat(1100));
        let refusal = Filter::compile(&long, &EventBounds::DEFAULT).unwrap_err();
        assert_eq!(refusal.code, "expression-too-long", "{refusal:?}");
    }

    #[test]
    fn filters_evaluate_on_events() {
        let ev = PreparedEvent::new(&event()).unwrap();
        let yes = Filter::compile("event.attributes.a == 'bc'", &EventBounds::DEFAULT).unwrap();
        assert_eq!(yes.matches(&ev), Ok(true));
        let no = Filter::compile("event.subject.startsWith('x')", &EventBounds::DEFAULT).unwrap();
        assert_eq!(no.matches(&ev), Ok(false));
        let missing = Filter::compile("event.attributes.zz == 1", &EventBounds::DEFAULT).unwrap();
        assert!(matches!(missing.matches(&ev), Err(Stopped::Error(_))));
        let sender = Filter::compile_sender("event.attributes.a", &EventBounds::DEFAULT).unwrap();
        assert_eq!(sender.evaluate(&ev), Ok(Value::String("bc".into())));
    }

    #[test]
    fn filters_must_be_bool_and_senders_strings() {
        let bounds = EventBounds::DEFAULT;
        let refusal = Filter::compile("size(event.text)", &bounds).unwrap_err();
        assert_eq!(refusal.code, "wrong-result-type");
        assert_eq!(
            refusal.message,
            "a filter must give a bool, but this one gives int"
        );
        let refusal = Filter::compile_sender("event.text.size() > 0", &bounds).unwrap_err();
        assert_eq!(refusal.code, "wrong-result-type");
        // A `dyn` filter passes the check; a value that is not a bool is then an error, not a
        // match.
        let ev = PreparedEvent::new(&event()).unwrap();
        let dynamic = Filter::compile("event.attributes.a", &bounds).unwrap();
        assert!(matches!(dynamic.matches(&ev), Err(Stopped::Error(_))));
    }

    #[test]
    fn hooks_stop_senders_as_they_stop_filters() {
        let ev = PreparedEvent::new(&event()).unwrap();
        let cheap = EvalHooks {
            cost_limit: Some(1),
            clock_step: None,
        };
        for role in [ExprRole::Filter, ExprRole::Sender] {
            let expr = match role {
                ExprRole::Filter => "event.attributes.a + event.text == 'bchello'",
                ExprRole::Sender => "event.attributes.a + event.text",
            };
            let f = Filter::compile_as(
                role,
                expr,
                &EventBounds::DEFAULT,
                Extensions::KUBERNETES,
                cheap,
            )
            .unwrap();
            assert!(
                matches!(f.evaluate(&ev), Err(Stopped::Limit(m)) if m.contains("cost limit")),
                "{role:?}"
            );
        }
        // A clock that jumps a second at every read stops the first evaluation that reads it
        // twice: one long enough to start the clock and check it again.
        let slow = EvalHooks {
            cost_limit: None,
            clock_step: Some(Duration::from_secs(1)),
        };
        let long = Event {
            text: "x".repeat(16 * 1024),
            ..event()
        };
        let ev = PreparedEvent::new(&long).unwrap();
        let expr = "event.text + event.text + event.text";
        let f = Filter::compile_as(
            ExprRole::Sender,
            expr,
            &EventBounds::DEFAULT,
            Extensions::KUBERNETES,
            slow,
        )
        .unwrap();
        assert!(
            matches!(f.evaluate(&ev), Err(Stopped::Limit(m)) if m.contains("deadline")),
            "the deadline did not stop it"
        );
    }
}
