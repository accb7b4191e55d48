//! `ozcheck.toml` (rule levels, source bounds) and inline suppressions.

use ozcheck_lint::{Config, Level, Severity, lint_text};

const FLOW: &str = "name: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 1h30m\n      timout: 5m\n";

fn rules(config: &Config, text: &str) -> Vec<(&'static str, Severity)> {
    lint_text("flows/watch.yaml", text, config)
        .findings
        .iter()
        .map(|f| (f.rule, f.severity))
        .collect()
}

#[test]
fn rule_levels_change_severity_or_silence() {
    let config = Config::parse("[rules]\ncompound-timeout = \"warning\"\nunknown-key = \"off\"\n")
        .expect("valid");
    assert_eq!(config.rules.get("unknown-key"), Some(&Level::Off));
    assert_eq!(
        rules(&config, FLOW),
        [("compound-timeout", Severity::Warning)]
    );
    let strict = Config::parse("[rules]\nunknown-key = \"error\"\n").expect("valid");
    assert_eq!(
        rules(&strict, FLOW),
        [
            ("compound-timeout", Severity::Error),
            ("unknown-key", Severity::Error)
        ]
    );
}

#[test]
fn unknown_rules_and_keys_are_refused() {
    let err = Config::parse("[rules]\ncompund-timeout = \"off\"\n").unwrap_err();
    assert!(
        err.to_string().contains("did you mean `compound-timeout`?"),
        "{err}"
    );
    assert!(Config::parse("[rule]\n").is_err());
    assert!(Config::parse("[rules]\nunknown-key = \"loud\"\n").is_err());
    assert!(Config::parse("[sources.github-events]\ntext = \"big\"\n").is_err());
}

#[test]
fn source_bounds_are_read() {
    let config = Config::parse("[sources.github-events]\ntext = 32768\n").expect("valid");
    let bounds = config.bounds(Some("github-events"));
    assert_eq!((bounds.text, bounds.attributes), (32768, 8192));
    assert_eq!(
        config.bounds(Some("other")),
        ozcheck_analyzer::EventBounds::DEFAULT
    );
    assert_eq!(config.bounds(None), ozcheck_analyzer::EventBounds::DEFAULT);
}

#[test]
fn inline_ignore_on_the_line_or_the_line_above() {
    let config = Config::default();
    let on_line = FLOW.replace(
        "timeout: 1h30m",
        "timeout: 1h30m  # ozcheck: ignore[compound-timeout]",
    );
    assert_eq!(
        rules(&config, &on_line),
        [("unknown-key", Severity::Warning)]
    );
    let above = FLOW.replace(
        "      timout: 5m",
        "      # ozcheck: ignore[unknown-key, compound-timeout]\n      timout: 5m",
    );
    // `compound-timeout` has no finding on that line or the next: an unused suppression.
    assert_eq!(
        rules(&config, &above),
        [
            ("compound-timeout", Severity::Error),
            ("unused-suppression", Severity::Warning)
        ]
    );
    // Another rule's id, or the marker inside a value, suppresses nothing (the first is
    // reported unused besides).
    let other = FLOW.replace(
        "timeout: 1h30m",
        "timeout: 1h30m  # ozcheck: ignore[invalid-since]",
    );
    assert_eq!(rules(&config, &other).len(), 3);
    let in_value = FLOW.replace(
        "name: watch",
        "name: \"watch#ozcheck: ignore[invalid-name]\"",
    );
    assert!(rules(&config, &in_value).contains(&("invalid-name", Severity::Error)));
}
