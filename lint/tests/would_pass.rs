//! A filter the lint refuses by cost says, in its finding's help and in the editor's hover,
//! which line of `ozcheck.toml` would pass it; that line, declared, does.

use ozcheck_lint::hover::hover;
use ozcheck_lint::{Config, lint_text};

const FLOW: &str = "name: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      filter: event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))\n";

/// The `attributes = N` the help of the cost finding suggests, and the help.
fn suggestion(config: &Config) -> Option<(u64, String)> {
    let report = lint_text("flows/watch.yaml", FLOW, config);
    let finding = report
        .findings
        .iter()
        .find(|f| f.origin == Some("cost-over-limit"))?;
    let help = finding.help.clone().expect("help");
    let at = help.find("`attributes = ")? + "`attributes = ".len();
    let digits: String = help[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    Some((digits.parse().expect("a number"), help))
}

fn with_attributes(bytes: u64) -> Config {
    Config::parse(&format!("[sources.github-events]\nattributes = {bytes}\n")).expect("valid")
}

#[test]
fn the_cost_finding_names_the_declaration_that_passes() {
    let (bytes, help) = suggestion(&Config::default()).expect("a cost finding with a suggestion");
    assert!(
        help.contains("under `[sources.github-events]` in ozcheck.toml"),
        "{help}"
    );
    assert!(
        help.contains("it would pass: with event.attributes at most"),
        "{help}"
    );
    assert_eq!(
        suggestion(&with_attributes(bytes)),
        None,
        "declared, it passes"
    );
    let over = suggestion(&with_attributes(bytes + 1)).expect("one byte more is refused");
    assert_eq!(over.0, bytes, "the same declaration is suggested again");
}

#[test]
fn the_hover_shows_the_declaration_that_passes() {
    let offset = FLOW.find("x == y").expect("filter");
    let shown = hover("flows/watch.yaml", FLOW, offset, &Config::default()).expect("hover");
    let (bytes, _) = suggestion(&Config::default()).expect("suggestion");
    let line =
        format!("**would pass** with `attributes = {bytes}` under `[sources.github-events]`");
    assert!(shown.markdown.contains(&line), "{}", shown.markdown);
    let passing = hover("flows/watch.yaml", FLOW, offset, &with_attributes(bytes)).expect("hover");
    assert!(
        !passing.markdown.contains("would pass"),
        "{}",
        passing.markdown
    );
}
