//! What the parser says about common mistakes: code, span, message, label and help, as a
//! snapshot, so a change to any of them is reviewed.

use std::fmt::Write as _;

use ozcheck_analyzer::syntax::{ParseOptions, parse};

fn render(source: &str) -> String {
    let mut out = format!("{source:?}\n");
    match parse(source, &ParseOptions::default()) {
        Ok(_) => out.push_str("  accepted\n"),
        Err(diagnostics) => {
            for d in diagnostics {
                let text = &source[d.span.start as usize..d.span.end as usize];
                let _ = writeln!(
                    out,
                    "  {} at {}..{} {text:?}: {}\n    label: {}\n    help: {}",
                    d.code,
                    d.span.start,
                    d.span.end,
                    d.message,
                    d.label,
                    d.help.as_deref().unwrap_or("-")
                );
            }
        }
    }
    out
}

#[test]
fn diagnostics_for_common_mistakes() {
    let sources = [
        "",
        "event.action == 'opened",
        "event.action = 'opened'",
        "event.action == 'opened' and event.text != ''",
        "a + ) + b + )",
        "f(1, )",
        "[1 2, 3]",
        "(a + b",
        "a ? b",
        "has(event)",
        "event.labels.exists(l.name, true)",
        "event.if == 1 && if == 2",
        "event.in",
        "event.?text",
        "event.attributes.all(k, k, true)",
        "event.attributes.transformList(k, v.w, v)",
        "event.attributes.?labels()",
        "'\\q' + b'\\u0041'",
        "9223372036854775808 + 1",
        "ñ",
    ];
    let rendered: String = sources.iter().map(|s| render(s)).collect();
    insta::assert_snapshot!(rendered);
}
