//! Suppressions fail loudly, as ruff's do: a bare `# ozcheck: ignore` names the ids it would
//! need, an unknown id gets a "did you mean", an unused id is `unused-suppression` with a safe
//! fix that removes it, and `no_ignores` (`--no-ignores`) reports everything.

use ozcheck_lint::{Config, Input, PluginContext, fix, lint};

const FLOW: &str = "name: w\nsteps:\n  - id: a\n    wait_for_event:\n      source: github-events\n      timeout: 1h30m  # ozcheck: ignore\n  - id: b\n    wait_for_event:\n      source: github-events\n      timeout: 90m  # ozcheck: ignore[compound-timeout]\n      # ozcheck: ignore[compund-timeout, unknown-key]\n      timout: 2h\n";

fn found(text: &str, no_ignores: bool) -> Vec<String> {
    let context = PluginContext {
        no_ignores,
        ..PluginContext::default()
    };
    let files = [Input::from_text("flows/w.yaml", text, true)];
    lint(&files, &context, &Config::default())
        .iter()
        .flat_map(|r| r.findings.iter().map(move |f| (r, f)))
        .map(|(r, f)| {
            let p = r.position(f);
            format!("{}:{} {} {}", p.line, p.column, f.rule, f.message)
        })
        .collect()
}

#[test]
fn bare_unknown_and_unused_suppressions_are_findings() {
    let got = found(FLOW, false);
    assert!(
        got.contains(&"6:23 invalid-suppression `# ozcheck: ignore` names no rule, so it suppresses nothing; reported here: compound-timeout".to_owned()),
        "{got:#?}"
    );
    assert!(
        got.iter().any(|f| f.starts_with("6:16 compound-timeout")),
        "{got:#?}"
    );
    assert!(
        got.contains(&"10:39 unused-suppression `compound-timeout` is suppressed here but reported nothing on this line or the next".to_owned()),
        "{got:#?}"
    );
    assert!(
        got.contains(&"11:25 invalid-suppression `compund-timeout` is not a rule id; this suppression does nothing".to_owned()),
        "{got:#?}"
    );
    // The used id suppresses its finding and is not reported.
    assert!(!got.iter().any(|f| f.contains("unknown-key")), "{got:#?}");
}

#[test]
fn no_ignores_reports_every_finding_and_no_unused_suppression() {
    let got = found(FLOW, true);
    assert!(
        got.iter().any(|f| f.starts_with("12:7 unknown-key")),
        "{got:#?}"
    );
    assert!(
        !got.iter().any(|f| f.contains("unused-suppression")),
        "{got:#?}"
    );
}

#[test]
fn the_fix_removes_an_unused_id_or_the_whole_comment() {
    let text = "name: w\nsteps:\n  - id: b\n    wait_for_event:\n      source: github-events\n      # ozcheck: ignore[compound-timeout]\n      timeout: 90m  # ozcheck: ignore[unknown-key, compound-timeout]\n      timout: 2h\n";
    let files = [Input::from_text("flows/w.yaml", text, true)];
    let fixed = fix::fix(&files, &PluginContext::default(), &Config::default());
    assert_eq!(
        fixed[0].report.source.text,
        "name: w\nsteps:\n  - id: b\n    wait_for_event:\n      source: github-events\n      timeout: 90m  # ozcheck: ignore[unknown-key]\n      timout: 2h\n"
    );
    assert!(
        fixed[0].report.findings.is_empty(),
        "{:#?}",
        fixed[0].report.findings
    );
}
