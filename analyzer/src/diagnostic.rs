//! Diagnostics: what every pass of the analyzer reports, as plain data that also renders as a
//! miette report with its label on the exact sub-expression.

use std::fmt;

use crate::syntax::Span;

/// How serious a diagnostic is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// Worth a look; the expression is still accepted.
    Warning,
    /// The expression is refused.
    Error,
}

/// One finding about an expression.
///
/// `code` is a stable kebab-case id (`cel-syntax`, `unknown-field`, `cost-over-limit`, …) that
/// scripts and the lint's rule ids build on; `message` is one sentence; `span` is a byte range
/// into the expression source; `label` is the short text shown under the span; `help` says how
/// to fix it when a fix is known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    /// Stable kebab-case id.
    pub code: &'static str,
    /// Error or warning.
    pub severity: Severity,
    /// One sentence saying what is wrong.
    pub message: String,
    /// Where, as bytes of the expression.
    pub span: Span,
    /// Short text for the label under the span.
    pub label: String,
    /// How to fix it, when known.
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error with a label on `span`.
    pub fn error(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Self {
            code,
            severity: Severity::Error,
            message: message.into(),
            span,
            label: String::new(),
            help: None,
        }
    }

    /// A warning with a label on `span`.
    pub fn warning(code: &'static str, span: Span, message: impl Into<String>) -> Self {
        Self {
            severity: Severity::Warning,
            ..Self::error(code, span, message)
        }
    }

    /// Sets the label text.
    #[must_use]
    pub fn with_label(mut self, label: impl Into<String>) -> Self {
        self.label = label.into();
        self
    }

    /// Sets the help text.
    #[must_use]
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// Whether this diagnostic refuses the expression.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Diagnostic {}

impl miette::Diagnostic for Diagnostic {
    fn code<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        Some(Box::new(self.code))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'a>(&'a self) -> Option<Box<dyn fmt::Display + 'a>> {
        self.help
            .as_deref()
            .map(|h| Box::new(h) as Box<dyn fmt::Display>)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        let label = (!self.label.is_empty()).then(|| self.label.clone());
        Some(Box::new(std::iter::once(
            miette::LabeledSpan::new_with_span(label, self.span),
        )))
    }
}

/// Wraps a diagnostic with the expression source so it renders with a snippet.
#[derive(Debug)]
pub struct SourceDiagnostic<'a> {
    /// The diagnostic.
    pub diagnostic: &'a Diagnostic,
    /// The expression it is about.
    pub source: &'a str,
}

impl fmt::Display for SourceDiagnostic<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.diagnostic.fmt(f)
    }
}

impl std::error::Error for SourceDiagnostic<'_> {}

impl miette::Diagnostic for SourceDiagnostic<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        miette::Diagnostic::code(self.diagnostic)
    }
    fn severity(&self) -> Option<miette::Severity> {
        miette::Diagnostic::severity(self.diagnostic)
    }
    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        miette::Diagnostic::help(self.diagnostic)
    }
    fn labels(&self) -> Option<Box<dyn Iterator<Item = miette::LabeledSpan> + '_>> {
        // An error at the very end of the expression ("expected an expression") has an empty
        // span past the last byte, which would render without the source line; point at the
        // last character instead so the reader sees where the expression stops.
        let span = self.diagnostic.span;
        let len = self.source.len() as u32;
        let span = if span.is_empty() && span.start >= len && len > 0 {
            let last = self
                .source
                .char_indices()
                .last()
                .map_or(0, |(i, _)| i as u32);
            Span::new(last, len)
        } else {
            span
        };
        let label = if self.diagnostic.label.is_empty() {
            None
        } else {
            Some(self.diagnostic.label.clone())
        };
        Some(Box::new(std::iter::once(
            miette::LabeledSpan::new_with_span(label, span),
        )))
    }
    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }
}
