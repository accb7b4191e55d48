//! The rule documentation is true: `docs/rules.md` is what the registry generates, each rule's
//! Example fires the rule and its Use-instead does not, and rule ids are unique kebab-case.
//!
//! To regenerate docs/rules.md after changing a rule: `OZCHECK_BLESS=1 cargo test -p ozcheck-lint --test docs`.

use ozcheck_lint::docs::{example_files, rules_markdown};
use ozcheck_lint::rules::RULES;
use ozcheck_lint::{Config, FileReport, PluginContext, lint};

fn lint_example(text: &str) -> Vec<FileReport> {
    let files = example_files(text);
    assert!(
        !files.is_empty(),
        "an example without `# file:` lines:\n{text}"
    );
    // Files an example points at (such as a prompt) exist when the example lists them.
    let paths: Vec<String> = files.iter().map(|f| f.path.clone()).collect();
    let context = PluginContext {
        no_ignores: false,
        files: Vec::new(),
        agents_complete: files.iter().any(|f| f.path.starts_with("agents/")),
        file_exists: Some(std::sync::Arc::new(move |p: &std::path::Path| {
            paths.iter().any(|known| std::path::Path::new(known) == p)
        })),
    };
    lint(&files, &context, &Config::default())
}

fn fired(reports: &[FileReport], id: &str) -> Vec<String> {
    reports
        .iter()
        .flat_map(|r| r.findings.iter().map(move |f| (r, f)))
        .filter(|(_, f)| f.rule == id)
        .map(|(r, f)| format!("{}:{}: {}", r.source.path, r.position(f).line, f.message))
        .collect()
}

#[test]
fn docs_rules_md_is_up_to_date() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/rules.md");
    let generated = rules_markdown();
    if std::env::var_os("OZCHECK_BLESS").is_some() {
        std::fs::write(path, &generated).expect("write docs/rules.md");
    }
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    assert!(
        committed == generated,
        "docs/rules.md is stale; regenerate it with `OZCHECK_BLESS=1 cargo test -p ozcheck-lint --test docs`"
    );
}

#[test]
fn docs_schema_files_are_up_to_date() {
    use ozcheck_lint::FileKind;
    use ozcheck_lint::schema::json_schema;
    for kind in [FileKind::Agent, FileKind::Flow, FileKind::Routine] {
        let path = format!(
            "{}/../docs/schema/{}.json",
            env!("CARGO_MANIFEST_DIR"),
            kind.name()
        );
        let mut generated = serde_json::to_string_pretty(&json_schema(kind)).expect("json");
        generated.push('\n');
        if std::env::var_os("OZCHECK_BLESS").is_some() {
            std::fs::write(&path, &generated).expect("write schema");
        }
        let committed = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            committed == generated,
            "{path} is stale; regenerate it with `OZCHECK_BLESS=1 cargo test -p ozcheck-lint --test docs`"
        );
    }
}

#[test]
fn every_example_fires_its_rule_and_use_instead_does_not() {
    for rule in RULES {
        let example = lint_example(rule.example);
        assert!(
            !fired(&example, rule.id).is_empty(),
            "the Example of `{}` does not fire it",
            rule.id
        );
        let fixed = lint_example(rule.use_instead);
        let still = fired(&fixed, rule.id);
        assert!(
            still.is_empty(),
            "the Use instead of `{}` fires it: {still:?}",
            rule.id
        );
    }
}

#[test]
fn rule_ids_are_unique_kebab_case_and_findings_use_registered_ids() {
    let mut ids: Vec<_> = RULES.iter().map(|r| r.id).collect();
    for id in &ids {
        assert!(
            !id.is_empty()
                && id.bytes().all(|b| b.is_ascii_lowercase() || b == b'-')
                && !id.starts_with('-')
                && !id.ends_with('-'),
            "`{id}` is not kebab-case"
        );
    }
    ids.sort_unstable();
    let before = ids.len();
    ids.dedup();
    assert_eq!(before, ids.len(), "duplicate rule ids");
    for rule in RULES {
        for text in [rule.example, rule.use_instead] {
            for report in lint_example(text) {
                for f in &report.findings {
                    assert!(
                        ids.contains(&f.rule),
                        "`{}` is not a registered rule",
                        f.rule
                    );
                }
            }
        }
    }
}

/// GitHub's anchor of a Markdown heading: lower case, spaces to `-`, other punctuation
/// but `-` and `_` dropped.
fn anchor(heading: &str) -> String {
    heading
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

#[test]
fn every_rule_url_is_absolute_and_its_anchor_is_in_docs_rules_md() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/../docs/rules.md");
    let doc = std::fs::read_to_string(path).expect("docs/rules.md");
    let anchors: Vec<String> = doc
        .lines()
        .filter_map(|l| l.strip_prefix("## "))
        .map(anchor)
        .collect();
    for rule in RULES {
        let url = ozcheck_lint::docs::rule_url(rule.id);
        assert!(url.starts_with("https://"), "{url} is not absolute");
        let (page, fragment) = url.split_once('#').expect("an anchor");
        assert!(page.ends_with("docs/rules.md"), "{url}");
        assert!(
            anchors.iter().any(|a| a == fragment),
            "{url}: no heading with anchor `{fragment}` in docs/rules.md"
        );
    }
}
