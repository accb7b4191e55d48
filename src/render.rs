//! Rendering of analyzer diagnostics as miette reports (no colour, fixed width, so output is
//! stable in tests and logs).

use miette::{GraphicalReportHandler, GraphicalTheme};
use ozcheck_analyzer::{Diagnostic, SourceDiagnostic};

/// Renders one diagnostic with the expression it is about.
pub fn diagnostic(source: &str, diagnostic: &Diagnostic) -> String {
    let handler = GraphicalReportHandler::new_themed(GraphicalTheme::unicode_nocolor())
        .with_width(100)
        .with_links(false);
    let mut out = String::new();
    let wrapped = SourceDiagnostic { diagnostic, source };
    if handler.render_report(&mut out, &wrapped).is_err() {
        out = format!("{}: {}\n", diagnostic.code, diagnostic.message);
    }
    out
}
