//! The plugin corpus: every `ok` plugin lints clean; every `err` file gives exactly the rule ids
//! at the lines its header declares (`# expect: rule@line, …`); the rendered `full` output of
//! each `err` file is an insta snapshot.
//!
//! Lines declared with `# expect-analyzer:` are findings that come from the analyzer's parser,
//! checker and cost estimator (listed apart so that a change there is easy to trace); they are
//! expected exactly like the others.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use ozcheck_lint::render::{Format, render};
use ozcheck_lint::{Config, FileReport, discover, lint};

/// A corpus folder, relative to the crate (cargo runs tests there), so that the paths in
/// snapshots are the same on every machine.
fn corpus(sub: &str) -> PathBuf {
    Path::new("../corpus/plugins").join(sub)
}

fn lint_dir(dir: &Path) -> Vec<FileReport> {
    let (targets, context) = discover::collect(&[dir.to_path_buf()]).expect("corpus readable");
    assert!(!targets.is_empty(), "no files in {}", dir.display());
    lint(&targets, &context, &Config::default())
}

#[test]
fn ok_plugins_have_no_findings() {
    let mut dirs: Vec<_> = std::fs::read_dir(corpus("ok"))
        .expect("ok corpus")
        .map(|e| e.expect("entry").path())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 2, "expected several ok plugins");
    for dir in dirs {
        for report in lint_dir(&dir) {
            let listed: Vec<_> = report
                .findings
                .iter()
                .map(|f| format!("{}@{}: {}", f.rule, report.position(f).line, f.message))
                .collect();
            assert!(listed.is_empty(), "{}: {listed:#?}", report.source.path);
        }
    }
}

fn expectations(text: &str, prefix: &str) -> Vec<(String, usize)> {
    text.lines()
        .filter_map(|l| l.strip_prefix(prefix))
        .flat_map(|list| list.split(','))
        .map(|item| {
            let (rule, line) = item.trim().split_once('@').expect("rule@line");
            (rule.to_owned(), line.parse().expect("a line number"))
        })
        .collect()
}

#[test]
fn err_files_give_exactly_their_declared_findings() {
    let reports = lint_dir(&corpus("err"));
    assert!(reports.len() >= 8, "expected the err corpus");
    for report in &reports {
        let text = &report.source.text;
        let mut expected = expectations(text, "# expect: ");
        expected.extend(expectations(text, "# expect-analyzer: "));
        assert!(
            text.contains("# expect: ") || text.contains("# expect-analyzer: "),
            "{} declares nothing",
            report.source.path
        );
        let mut want: BTreeMap<(String, usize), usize> = BTreeMap::new();
        for e in expected {
            *want.entry(e).or_default() += 1;
        }
        let mut got: BTreeMap<(String, usize), usize> = BTreeMap::new();
        for f in &report.findings {
            *got.entry((f.rule.to_owned(), report.position(f).line))
                .or_default() += 1;
        }
        assert_eq!(got, want, "{}", report.source.path);
    }
}

#[test]
fn err_files_render_as_in_their_snapshots() {
    for report in lint_dir(&corpus("err")) {
        let name = report
            .source
            .path
            .rsplit("err/")
            .next()
            .unwrap_or("")
            .replace('/', "__");
        let text = render(std::slice::from_ref(&report), Format::Full, false);
        insta::assert_snapshot!(name, text);
    }
}

#[test]
fn sample_plugin_lints_as_the_readme_says() {
    let reports = lint_dir(&corpus("sample"));
    let rules: Vec<_> = reports
        .iter()
        .flat_map(|r| r.findings.iter().map(|f| f.rule))
        .collect();
    assert_eq!(rules, ["compound-timeout", "unknown-key"]);
}

#[test]
fn a_routine_sees_only_its_own_plugins_agents() {
    use ozcheck_lint::{Input, PluginContext};
    let files = [
        Input::from_text("a/agents/helper.yaml", "name: helper\nruntime: acp\n", true),
        Input::from_text("a/routines/r.yaml", "name: r\nagent: helper\n", true),
        Input::from_text("b/routines/r.yaml", "name: r\nagent: helper\n", true),
    ];
    let context = PluginContext {
        no_ignores: false,
        files: Vec::new(),
        agents_complete: true,
        ..PluginContext::default()
    };
    let found: Vec<_> = lint(&files, &context, &Config::default())
        .iter()
        .flat_map(|r| {
            r.findings
                .iter()
                .map(move |f| (r.source.path.clone(), f.rule))
        })
        .collect();
    assert_eq!(found, [("b/routines/r.yaml".to_owned(), "unknown-agent")]);
}
