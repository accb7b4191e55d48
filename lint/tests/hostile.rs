//! No YAML input panics, hangs or takes unbounded memory: deep nesting, alias bombs, tabs, byte
//! order marks, huge scalars, invalid UTF-8, and odd document shapes all end in findings.

use std::fmt::Write as _;

use ozcheck_lint::{Config, FileReport, Input, MAX_FILE_BYTES, PluginContext, lint, lint_text};

fn rules_of(report: &FileReport) -> Vec<&'static str> {
    report.findings.iter().map(|f| f.rule).collect()
}

fn lint_bytes(path: &str, bytes: &[u8]) -> FileReport {
    let input = Input::from_bytes(path, bytes, true);
    lint(&[input], &PluginContext::default(), &Config::default())
        .pop()
        .expect("an explicit file is always reported")
}

fn message_of(report: &FileReport) -> String {
    report
        .findings
        .iter()
        .map(|f| f.message.clone())
        .collect::<Vec<_>>()
        .join("; ")
}

#[test]
fn deep_flow_nesting_is_refused_not_recursed() {
    let text = "[".repeat(200_000);
    let report = lint_text("flows/deep.yaml", &text, &Config::default());
    // The scanner's own recursion limit or ours, whichever comes first: either way a finding.
    assert_eq!(rules_of(&report), ["invalid-yaml"]);
}

#[test]
fn deep_block_nesting_is_refused() {
    let mut text = String::new();
    for depth in 0..500 {
        text.push_str(&" ".repeat(depth));
        text.push_str("a:\n");
    }
    let report = lint_text("flows/deep.yaml", &text, &Config::default());
    assert_eq!(rules_of(&report), ["invalid-yaml"]);
    assert!(
        message_of(&report).contains("nesting deeper than 64"),
        "{}",
        message_of(&report)
    );
}

#[test]
fn alias_bombs_are_bounded() {
    let mut text = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..12 {
        let prev = i - 1;
        let refs = vec![format!("*a{prev}"); 10].join(", ");
        let _ = writeln!(text, "a{i}: &a{i} [{refs}]");
    }
    let report = lint_text("agents/bomb.yaml", &text, &Config::default());
    assert_eq!(rules_of(&report), ["invalid-yaml"]);
    assert!(
        message_of(&report).contains("aliases expand"),
        "{}",
        message_of(&report)
    );
}

#[test]
fn small_aliases_still_work() {
    let text = "name: a\nruntime: &r acp\ntools: [oz.output]\ndelegates: [*r]\n";
    let report = lint_text("agents/a.yaml", text, &Config::default());
    assert!(report.findings.is_empty(), "{:?}", report.findings);
}

#[test]
fn tabs_as_indentation_are_a_syntax_error() {
    let report = lint_text(
        "agents/a.yaml",
        "name: a\nmodel:\n\tprimary: x\n",
        &Config::default(),
    );
    assert_eq!(rules_of(&report), ["invalid-yaml"]);
    assert_eq!(report.position(&report.findings[0]).line, 3);
}

#[test]
fn byte_order_mark_keeps_positions() {
    let report = lint_text(
        "agents/a.yaml",
        "\u{feff}name: a\nruntime: acp\nmodle: x\n",
        &Config::default(),
    );
    assert_eq!(rules_of(&report), ["unknown-key"]);
    let p = report.position(&report.findings[0]);
    assert_eq!((p.line, p.column), (3, 1));
}

#[test]
fn invalid_utf8_is_reported_at_its_byte() {
    let report = lint_bytes("agents/a.yaml", b"name: a\nruntime: \xff\xfe\n");
    assert_eq!(rules_of(&report), ["invalid-yaml"]);
    assert!(message_of(&report).contains("not valid UTF-8 (at byte 17)"));
}

#[test]
fn huge_files_are_refused_before_parsing() {
    let text = format!(
        "name: a\nruntime: acp\ninstructions: {}\n",
        "x".repeat(MAX_FILE_BYTES)
    );
    let report = lint_text("agents/a.yaml", &text, &Config::default());
    assert_eq!(rules_of(&report), ["invalid-yaml"]);
}

#[test]
fn huge_scalars_under_the_file_limit_are_fine() {
    let filter = "event.text == 'x' || ".repeat(40_000);
    let text = format!(
        "name: w\nsteps:\n  - id: a\n    wait_for_event:\n      source: s\n      filter: \"{filter}true\"\n      timeout: {}m\n",
        "9".repeat(100)
    );
    let report = lint_text("flows/w.yaml", &text, &Config::default());
    assert!(
        rules_of(&report).contains(&"timeout-too-long"),
        "{:?}",
        rules_of(&report)
    );
}

#[test]
fn odd_documents_do_not_panic() {
    let cases: &[&str] = &[
        "",
        "# only a comment\n",
        "---\n",
        "---\n...\n",
        "just a scalar\n",
        "- a\n- b\n",
        "~\n",
        "name: a\n---\nname: b\n",
        "? {a: 1}\n: b\nruntime: acp\n",
        "? [a, b]\n: c\nsteps: x\n",
        "name: *missing\n",
        "name: !!binary aGk=\nruntime: !custom acp\n",
        "steps:\n  - \n  - id:\n  - id: [x]\n    when: {a: b}\n",
        "trigger: {event: [1, 2]}\nsteps: {a: b}\n",
        "name: \"unterminated\n",
        "name: 'a''\n",
        "key: |\n  text\n bad\n",
        "a: b: c\n",
        "\u{0}\u{1}\u{7f}: x\n",
        "name: a\r\nruntime: acp\r\ntools: [oz.wait_for_event]\r\ndelegates: [b]\r\n",
        &format!("{}: 1\nsteps: []\n", "k".repeat(5000)),
    ];
    for (i, text) in cases.iter().enumerate() {
        for path in ["agents/x.yaml", "flows/x.yaml", "routines/x.yaml", "x.yaml"] {
            let report = lint_text(path, text, &Config::default());
            for f in &report.findings {
                assert!(
                    f.span.start <= f.span.end && f.span.end <= text.len(),
                    "case {i} {path}: {f:?}"
                );
            }
        }
    }
}
