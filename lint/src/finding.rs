//! Findings: what rules report, as data. The command line renders them; nothing here prints.

use std::ops::Range;

/// How serious a finding is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth fixing; does not fail the run.
    Warning,
    /// Fails the run (exit code 1).
    Error,
}

impl Severity {
    /// `error` or `warning`.
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// One problem in one file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Finding {
    /// The rule id (kebab-case, stable).
    pub rule: &'static str,
    /// The severity after configuration.
    pub severity: Severity,
    /// One sentence saying what is wrong.
    pub message: String,
    /// Bytes of the file the finding points at.
    pub span: Range<usize>,
    /// Short text under the span.
    pub label: String,
    /// How to fix it, when known.
    pub help: Option<String>,
    /// For findings about an expression: the analyzer's own code (`unknown-field`, …).
    pub origin: Option<&'static str>,
}

impl Finding {
    /// A finding of `rule` at its default severity.
    pub fn new(rule: &'static str, span: Range<usize>, message: impl Into<String>) -> Self {
        Self {
            rule,
            severity: crate::rules::default_severity(rule),
            message: message.into(),
            span,
            label: String::new(),
            help: None,
            origin: None,
        }
    }

    /// Sets the label.
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Sets the help.
    #[must_use]
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}
