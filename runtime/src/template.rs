//! A flow's expressions over its own state (E7): the `${{ … }}` templates of a step's `subject`
//! and an approval's `details`, and a step's `when`. Both are CEL, checked in the analyzer's
//! `template` and `when` environments (the lint's, so a text the lint accepts renders here) and
//! evaluated over `trigger.event` and the outputs of the earlier steps (`steps.<id>.matched`,
//! `steps.<id>.event…`, `steps.<id>.approved`).
//!
//! A template that the analyzer refuses, or that fails on this flow's data (a step that matched
//! no event has no `event`), is an error with a code: the step says why it did not start,
//! instead of waiting on the literal text.

use ozcheck_analyzer::check::{Env, StepDecl, StepKind};
use ozcheck_analyzer::eval::{Activation, EvalError, Limits, Program, Value as CelValue};
use ozcheck_analyzer::template::{Template, templates};
use ozcheck_analyzer::{ExtensionSettings, Options, Verdict, check_expression, compile};
use serde_json::{Map, Value, json};

use crate::error::RuntimeError;
use crate::model::Event;

/// What a flow's expressions see: its trigger event and the outputs of the steps before the
/// current one, in order.
#[derive(Clone, Debug)]
pub struct FlowScope {
    trigger: Event,
    steps: Vec<(String, StepKind, Value)>,
    extensions: ExtensionSettings,
}

impl FlowScope {
    /// The scope of a flow's first step, with Kubernetes' extensions.
    pub fn new(trigger: Event) -> Self {
        Self {
            trigger,
            steps: Vec::new(),
            extensions: ExtensionSettings::default(),
        }
    }

    /// The same scope with the extensions of `settings` in its `when` and templates.
    #[must_use]
    pub fn with_extensions(mut self, settings: ExtensionSettings) -> Self {
        self.extensions = settings;
        self
    }

    /// Adds the output of a step that ran (or was skipped) before the current one.
    pub fn push_step(&mut self, id: &str, kind: StepKind, output: Value) {
        self.steps.push((id.to_owned(), kind, output));
    }

    /// The trigger event.
    pub fn trigger(&self) -> &Event {
        &self.trigger
    }

    fn decls(&self) -> Vec<StepDecl> {
        self.steps
            .iter()
            .map(|(id, kind, _)| StepDecl {
                id: id.as_str().into(),
                kind: *kind,
            })
            .collect()
    }

    fn activation(&self) -> Activation {
        let mut activation = Activation::new();
        activation.bind(
            "trigger",
            CelValue::from_json(&json!({"event": self.trigger.to_json()})),
        );
        let steps: Map<String, Value> = self
            .steps
            .iter()
            .map(|(id, _, output)| (id.clone(), output.clone()))
            .collect();
        activation.bind("steps", CelValue::from_json(&Value::Object(steps)));
        activation.bind("inputs", CelValue::from_json(&json!({})));
        activation
    }

    /// Evaluates one expression of `env` over this scope.
    fn evaluate(&self, expr: &str, env: &Env, what: &str) -> Result<CelValue, RuntimeError> {
        let options = Options::default();
        let report = check_expression(expr, env, &options);
        let refused = |d: &[ozcheck_analyzer::Diagnostic]| {
            let message = d.iter().find(|d| d.is_error()).or(d.first()).map_or_else(
                || "refused".to_owned(),
                |d| format!("{} ({})", d.message, d.code),
            );
            RuntimeError::refused(
                code_of(env),
                format!("the {what} `{expr}` is refused: {message}"),
            )
        };
        if report.verdict == Verdict::Refused {
            return Err(refused(&report.diagnostics));
        }
        let checked = compile(expr, env, &options).map_err(|d| refused(&d))?;
        let program = Program::from_checked(&checked).map_err(|d| refused(&d))?;
        match program.eval(&self.activation(), &Limits::default()) {
            Ok(evaluation) => Ok(evaluation.value),
            Err(EvalError::Stopped(stop)) => Err(RuntimeError::refused(
                "template-failed",
                format!("the {what} `{expr}` was stopped: {stop}"),
            )),
            Err(EvalError::Runtime { message, .. }) => Err(RuntimeError::refused(
                "template-failed",
                format!("the {what} `{expr}` failed on this flow: {message}"),
            )),
        }
    }

    /// Renders the `${{ … }}` templates of `text`: strings as they are, other values as JSON.
    pub fn render(&self, text: &str) -> Result<String, RuntimeError> {
        let env = self.extensions.apply(Env::template(true, &self.decls()));
        let mut out = String::with_capacity(text.len());
        let mut at = 0;
        for template in templates(text) {
            match template {
                Template::Unclosed(range) => {
                    return Err(RuntimeError::refused(
                        "invalid-template",
                        format!(
                            "`${{{{` at byte {} is never closed with `}}}}`",
                            range.start
                        ),
                    ));
                }
                Template::Expr(range) => {
                    out.push_str(&text[at..range.start - 3]);
                    let value = self.evaluate(text[range.clone()].trim(), &env, "template")?;
                    match value.to_json() {
                        Value::String(s) => out.push_str(&s),
                        other => out.push_str(&other.to_string()),
                    }
                    at = range.end + 2;
                }
            }
        }
        out.push_str(&text[at..]);
        Ok(out)
    }

    /// Evaluates a step's `when`.
    pub fn when(&self, expr: &str) -> Result<bool, RuntimeError> {
        let env = self.extensions.apply(Env::when(true, &self.decls()));
        match self.evaluate(expr, &env, "when")? {
            CelValue::Bool(b) => Ok(b),
            other => Err(RuntimeError::refused(
                "template-failed",
                format!("the when `{expr}` gave {}, not a boolean", other.to_json()),
            )),
        }
    }
}

fn code_of(env: &Env) -> &'static str {
    match env.kind() {
        ozcheck_analyzer::check::EnvKind::When => "invalid-when",
        _ => "invalid-template",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scope() -> FlowScope {
        let trigger = Event {
            source: "gh".into(),
            id: "d1".into(),
            kind: "pull_request".into(),
            action: "opened".into(),
            subject: "octo/demo#12".into(),
            text: String::new(),
            attributes: json!({"number": 12}),
        };
        let mut scope = FlowScope::new(trigger.clone());
        scope.push_step(
            "found",
            StepKind::WaitForEvent,
            json!({"matched": true, "event": Event { subject: "octo/demo#13".into(), ..trigger }.to_json()}),
        );
        scope.push_step("missed", StepKind::WaitForEvent, json!({"matched": false}));
        scope
    }

    #[test]
    fn templates_read_the_trigger_and_earlier_steps() {
        let s = scope();
        assert_eq!(
            s.render("${{ trigger.event.subject }}").unwrap(),
            "octo/demo#12"
        );
        assert_eq!(
            s.render("n=${{trigger.event.attributes.number}} on ${{ steps.found.event.subject }}")
                .unwrap(),
            "n=12 on octo/demo#13"
        );
        assert_eq!(s.render("plain").unwrap(), "plain");
        assert!(
            s.when("steps.found.matched && !steps.missed.matched")
                .unwrap()
        );
    }

    #[test]
    fn a_template_that_cannot_resolve_is_an_error_with_a_code() {
        let s = scope();
        let e = s.render("${{ steps.missed.event.subject }}").unwrap_err();
        assert_eq!(e.code(), "template-failed", "{e}");
        let e = s.render("${{ steps.nosuch.event.subject }}").unwrap_err();
        assert_eq!(e.code(), "invalid-template", "{e}");
        let e = s.render("${{ trigger.event.subject").unwrap_err();
        assert_eq!(e.code(), "invalid-template", "{e}");
        let e = s.when("steps.nosuch.matched").unwrap_err();
        assert_eq!(e.code(), "invalid-when", "{e}");
    }
}
