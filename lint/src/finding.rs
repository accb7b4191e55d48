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
    /// The safe fix, when the rule knows one for certain.
    pub fix: Option<Fix>,
}

/// One replacement of a file's bytes.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Edit {
    /// The bytes replaced (empty to insert).
    pub span: Range<usize>,
    /// What goes there instead.
    pub replacement: String,
}

/// A safe fix: edits applied together, each keeping every byte outside its span.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Fix {
    /// What the fix does, for editors and `--diff` (`write 90m`).
    pub title: String,
    /// The edits, not overlapping.
    pub edits: Vec<Edit>,
}

impl Fix {
    /// A fix of one edit.
    pub fn replace(
        title: impl Into<String>,
        span: Range<usize>,
        replacement: impl Into<String>,
    ) -> Fix {
        Fix {
            title: title.into(),
            edits: vec![Edit {
                span,
                replacement: replacement.into(),
            }],
        }
    }
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
            fix: None,
        }
    }

    /// Sets the label.
    #[must_use]
    pub fn label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Sets the safe fix.
    #[must_use]
    pub fn fix(mut self, fix: Fix) -> Self {
        self.fix = Some(fix);
        self
    }

    /// Sets the help.
    #[must_use]
    pub fn help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }
}
