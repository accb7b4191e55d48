//! Turns reports into text in each output format. Nothing here prints; the command line writes
//! the returned strings.
//!
//! `full` is miette's graphical report with a snippet; `concise` one line per finding;
//! `json` the contract of docs/cli.md; `sarif` SARIF 2.1.0 with rule metadata; `github` workflow
//! commands with GitHub's escaping.

use std::fmt;
use std::fmt::Write as _;

use miette::{
    GraphicalReportHandler, GraphicalTheme, LabeledSpan, MietteError, MietteSpanContents,
    SourceCode, SourceSpan, SpanContents,
};
use serde_json::{Value as Json, json};

use crate::finding::{Finding, Severity};
use crate::{FileReport, Position};

mod sarif;
mod statistics;

pub use sarif::sarif;
pub use statistics::statistics;

/// The output formats.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// miette, with a source snippet.
    Full,
    /// `file:line:col: severity[rule] message`.
    Concise,
    /// The JSON contract.
    Json,
    /// SARIF 2.1.0.
    Sarif,
    /// GitHub Actions workflow commands.
    Github,
}

impl Format {
    /// Parses a format name.
    pub fn from_name(name: &str) -> Option<Format> {
        Some(match name {
            "full" => Format::Full,
            "concise" => Format::Concise,
            "json" => Format::Json,
            "sarif" => Format::Sarif,
            "github" => Format::Github,
            _ => return None,
        })
    }
}

/// Renders reports in a format. `color` applies to `full` only.
pub fn render(reports: &[FileReport], format: Format, color: bool) -> String {
    match format {
        Format::Full => full(reports, color),
        Format::Concise => concise(reports),
        Format::Json => json(reports),
        Format::Sarif => sarif::sarif(reports),
        Format::Github => github(reports),
    }
}

fn each(reports: &[FileReport]) -> impl Iterator<Item = (&FileReport, &Finding, Position)> {
    reports
        .iter()
        .flat_map(|r| r.findings.iter().map(move |f| (r, f, r.position(f))))
}

/// A file's text under its path, for miette (its `NamedSource` wants owned, `'static` text).
struct FileSource<'a> {
    name: std::borrow::Cow<'a, str>,
    text: &'a str,
}

impl SourceCode for FileSource<'_> {
    fn read_span<'b>(
        &'b self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'b> + 'b>, MietteError> {
        let inner = self
            .text
            .read_span(span, context_lines_before, context_lines_after)?;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone().into_owned(),
            inner.data(),
            *inner.span(),
            inner.line(),
            inner.column(),
            inner.line_count(),
        )))
    }
}

/// A finding with its file, for miette.
struct Report<'a> {
    finding: &'a Finding,
    source: FileSource<'a>,
}

impl fmt::Debug for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&one_line(&self.finding.message))
    }
}

impl fmt::Display for Report<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&one_line(&self.finding.message))
    }
}

impl std::error::Error for Report<'_> {}

impl miette::Diagnostic for Report<'_> {
    fn code<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        Some(Box::new(self.finding.rule))
    }

    fn severity(&self) -> Option<miette::Severity> {
        Some(match self.finding.severity {
            Severity::Error => miette::Severity::Error,
            Severity::Warning => miette::Severity::Warning,
        })
    }

    fn help<'b>(&'b self) -> Option<Box<dyn fmt::Display + 'b>> {
        self.finding
            .help
            .as_deref()
            .map(|h| Box::new(one_line(h).into_owned()) as Box<dyn fmt::Display>)
    }

    fn source_code(&self) -> Option<&dyn miette::SourceCode> {
        Some(&self.source)
    }

    fn labels(&self) -> Option<Box<dyn Iterator<Item = LabeledSpan> + '_>> {
        let label =
            (!self.finding.label.is_empty()).then(|| one_line(&self.finding.label).into_owned());
        let span = &self.finding.span;
        Some(Box::new(std::iter::once(LabeledSpan::new(
            label,
            span.start,
            span.end - span.start,
        ))))
    }
}

/// miette's graphical report for every finding, then a summary line.
pub fn full(reports: &[FileReport], color: bool) -> String {
    let theme = if color {
        GraphicalTheme::unicode()
    } else {
        GraphicalTheme::unicode_nocolor()
    };
    let handler = GraphicalReportHandler::new_themed(theme)
        .with_width(100)
        .with_links(false);
    let mut out = String::new();
    for report in reports {
        for finding in &report.findings {
            let diagnostic = Report {
                finding,
                source: FileSource {
                    name: one_line(&report.source.path),
                    text: &report.source.text,
                },
            };
            if handler.render_report(&mut out, &diagnostic).is_err() {
                let p = report.position(finding);
                let _ = writeln!(
                    out,
                    "{}:{}:{}: {}",
                    one_line(&report.source.path),
                    p.line,
                    p.column,
                    one_line(&finding.message)
                );
            }
            out.push('\n');
        }
    }
    out.push_str(&summary(reports));
    out
}

/// `N errors, M warnings in K files`.
pub fn summary(reports: &[FileReport]) -> String {
    let count = |s| {
        reports
            .iter()
            .flat_map(|r| &r.findings)
            .filter(|f| f.severity == s)
            .count()
    };
    let plural = |n: usize, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    format!(
        "{}, {} in {}\n",
        plural(count(Severity::Error), "error"),
        plural(count(Severity::Warning), "warning"),
        plural(reports.len(), "file")
    )
}

/// Text from a file (a key, a value, a path) on one line: carriage returns and line breaks
/// written as `\r` and `\n` (and a backslash doubled only before them), so that a finding stays
/// one line and cannot forge another.
pub fn one_line(text: &str) -> std::borrow::Cow<'_, str> {
    if !text.contains(['\r', '\n']) {
        return std::borrow::Cow::Borrowed(text);
    }
    std::borrow::Cow::Owned(text.replace('\r', "\\r").replace('\n', "\\n"))
}

/// One line per finding: `file:line:col: severity[rule] message (help: …)`.
pub fn concise(reports: &[FileReport]) -> String {
    let mut out = String::new();
    for (report, f, p) in each(reports) {
        let _ = write!(
            out,
            "{}:{}:{}: {}[{}] {}",
            one_line(&report.source.path),
            p.line,
            p.column,
            f.severity.as_str(),
            f.rule,
            one_line(&f.message)
        );
        if let Some(help) = &f.help {
            let _ = write!(out, " (help: {})", one_line(help));
        }
        out.push('\n');
    }
    out
}

/// The JSON contract of docs/cli.md, as text: [`json_value`] pretty-printed with a final line
/// break, what `ozcheck lint --format json` prints.
pub fn json(reports: &[FileReport]) -> String {
    let mut text = serde_json::to_string_pretty(&json_value(reports)).unwrap_or_default();
    text.push('\n');
    text
}

/// The JSON contract of docs/cli.md as a value: `{"diagnostics": [...], "cost_model_version":
/// N}`, the findings of every report in order (one report for one file or one buffer). The
/// Python package and the WebAssembly build call this, so their answers cannot drift from the
/// command line's.
pub fn json_value(reports: &[FileReport]) -> Json {
    let diagnostics: Vec<Json> = reports
        .iter()
        .flat_map(|r| r.findings.iter().map(move |f| finding_json(r, f)))
        .collect();
    json!({
        "diagnostics": diagnostics,
        "cost_model_version": ozcheck_analyzer::cost::COST_MODEL_VERSION,
    })
}

/// One finding of `report` in the JSON contract: `code`, `severity`, `message`, `help`, `fix`
/// (`{message, edits}` or null), `file` and its 1-based `line`, `column`, `end_line`,
/// `end_column`.
pub fn finding_json(report: &FileReport, finding: &Finding) -> Json {
    let at = report.position(finding);
    let fix = finding.fix.as_ref().map(|fix| {
        let edits: Vec<Json> = fix
            .edits
            .iter()
            .map(|e| {
                let at = report.source.position(&e.span);
                json!({
                    "content": e.replacement,
                    "line": at.line,
                    "column": at.column,
                    "end_line": at.end_line,
                    "end_column": at.end_column,
                })
            })
            .collect();
        json!({ "message": fix.title, "edits": edits })
    });
    json!({
        "code": finding.rule,
        "severity": finding.severity.as_str(),
        "message": finding.message,
        "help": finding.help,
        "fix": fix,
        "file": report.source.path,
        "line": at.line,
        "column": at.column,
        "end_line": at.end_line,
        "end_column": at.end_column,
    })
}

/// Escapes a workflow command's message.
fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a workflow command's property value.
fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// GitHub Actions workflow commands (`::error file=…,line=…::message`). Columns are given only
/// for single-line ranges, which is all the runner honours.
pub fn github(reports: &[FileReport]) -> String {
    let mut out = String::new();
    for (report, f, p) in each(reports) {
        let mut props = format!(
            "file={},line={},endLine={}",
            escape_property(&report.source.path),
            p.line,
            p.end_line
        );
        if p.line == p.end_line {
            let _ = write!(props, ",col={},endColumn={}", p.column, p.end_column);
        }
        let _ = write!(props, ",title={}", escape_property(f.rule));
        let mut message = f.message.clone();
        if let Some(help) = &f.help {
            let _ = write!(message, "\nhelp: {help}");
        }
        let _ = writeln!(
            out,
            "::{} {props}::{}",
            f.severity.as_str(),
            escape_data(&message)
        );
    }
    out
}
