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
///
/// miette's own `read_span` over a `str` counts lines from the start of the text for every
/// report, which made `full` quadratic in the findings of one file. Here the file's line index
/// finds the lines around the span, and miette reads only that window, so a report costs the
/// length of its snippet, not of the file.
struct FileSource<'a> {
    name: std::borrow::Cow<'a, str>,
    source: &'a crate::SourceFile,
}

impl SourceCode for FileSource<'_> {
    fn read_span<'b>(
        &'b self,
        span: &SourceSpan,
        context_lines_before: usize,
        context_lines_after: usize,
    ) -> Result<Box<dyn SpanContents<'b> + 'b>, MietteError> {
        let text = self.source.text.as_str();
        let (start, end) = (span.offset(), span.offset() + span.len());
        if end > text.len() {
            return Err(MietteError::OutOfBounds);
        }
        let first_line = self.source.line_col(start).0;
        let last_line = self.source.line_col(end).0;
        // One line more on each side than miette shows: it looks one line past the context to
        // tell where the context ends, and must see the same bytes it would in the whole text.
        let window_line = first_line.saturating_sub(context_lines_before + 1).max(1);
        // The line after the last one shown starts where the window ends.
        // Line 1 starts after a byte-order mark; the window keeps the mark, as miette did.
        let window_start = if window_line == 1 {
            0
        } else {
            self.source.line_start(window_line)
        };
        let window_end = self
            .source
            .line_start(last_line + context_lines_after + 2)
            .max(end);
        let window = &text[window_start..window_end];
        let inner = window.read_span(
            &SourceSpan::new((start - window_start).into(), end - start),
            context_lines_before,
            context_lines_after,
        )?;
        let data_start = inner.span().offset() + window_start;
        Ok(Box::new(MietteSpanContents::new_named(
            self.name.clone().into_owned(),
            inner.data(),
            SourceSpan::new(data_start.into(), inner.span().len()),
            inner.line() + window_line - 1,
            inner.column(),
            // miette counts the line breaks from the start of what it reads.
            inner.line_count() + window_line - 1,
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
                    source: &report.source,
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

/// `N` and the word, in the plural unless `N` is 1, with thousands separators (`1,200 files`):
/// the way the lint writes a count for people (docs/cli.md, "Numbers").
pub fn plural(n: usize, word: &str) -> String {
    let digits = ozcheck_analyzer::cost::group(u64::try_from(n).unwrap_or(u64::MAX));
    format!("{digits} {word}{}", if n == 1 { "" } else { "s" })
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

#[cfg(test)]
mod tests {
    use super::*;

    /// The old source: miette reading the whole text for every report.
    struct Whole<'a>(FileSource<'a>);

    impl SourceCode for Whole<'_> {
        fn read_span<'b>(
            &'b self,
            span: &SourceSpan,
            before: usize,
            after: usize,
        ) -> Result<Box<dyn SpanContents<'b> + 'b>, MietteError> {
            let inner = self.0.source.text.as_str().read_span(span, before, after)?;
            Ok(Box::new(MietteSpanContents::new_named(
                self.0.name.clone().into_owned(),
                inner.data(),
                *inner.span(),
                inner.line(),
                inner.column(),
                inner.line_count(),
            )))
        }
    }

    #[test]
    fn the_windowed_source_reads_what_the_whole_text_gives() {
        let texts = [
            "a: 1\nb: 2\nc: 3\nd: 4\ne: 5\n",
            "\u{feff}a: 1\r\nb: é2\r\nc: 3\r\n",
            "a: 1\nb: |\n  x\n  y\nc: 3",
            "",
            "only\n",
        ];
        for text in texts {
            let source = crate::SourceFile::new("f.yaml", text);
            let mut spans = Vec::new();
            for start in 0..=text.len() {
                for end in start..=text.len().min(start + 12) {
                    if text.is_char_boundary(start) && text.is_char_boundary(end) {
                        spans.push(SourceSpan::new(start.into(), end - start));
                    }
                }
            }
            for span in spans {
                for (before, after) in [(0, 0), (1, 1), (2, 3)] {
                    let windowed = FileSource {
                        name: "f.yaml".into(),
                        source: &source,
                    };
                    let whole = Whole(FileSource {
                        name: "f.yaml".into(),
                        source: &source,
                    });
                    let a = windowed.read_span(&span, before, after).expect("in bounds");
                    let b = whole.read_span(&span, before, after).expect("in bounds");
                    let parts = |c: &dyn SpanContents<'_>| {
                        (
                            c.data().to_vec(),
                            *c.span(),
                            c.line(),
                            c.column(),
                            c.line_count(),
                        )
                    };
                    assert_eq!(
                        parts(a.as_ref()),
                        parts(b.as_ref()),
                        "{text:?} {span:?} {before} {after}"
                    );
                }
            }
        }
    }
}
