//! The rule documentation: `docs/rules.md` (generated from the registry; a test keeps the
//! committed file in step) and the text of `ozcheck rules ID`.

use std::fmt::Write as _;

use crate::Input;
use crate::rules::{RULES, Rule};

/// The files of a rule's Example or Use-instead text: each starts at a `# file: PATH` line.
pub fn example_files(text: &str) -> Vec<Input> {
    let mut files: Vec<Input> = Vec::new();
    for line in text.split_inclusive('\n') {
        if let Some(path) = line.strip_prefix("# file: ") {
            files.push(Input::from_text(path.trim(), String::new(), true));
        } else if let Some(file) = files.last_mut() {
            file.text.push_str(line);
        }
    }
    files
}

fn yaml_block(out: &mut String, text: &str) {
    for file in example_files(text) {
        let _ = writeln!(out, "```yaml\n# {}\n{}```\n", file.path, file.text);
    }
}

/// Where `docs/rules.md` is read on the web: the workspace's `repository` (Cargo.toml) with
/// `/blob/main/docs/rules.md`, unless `OZCHECK_DOCS_URL` names another page when the crate is
/// built (a fork, a mirror, a docs site). The project names no public home yet, so the
/// workspace's `repository` is a placeholder until it does (docs/cli.md, "Rule links").
pub const RULES_DOC_URL: &str = match option_env!("OZCHECK_DOCS_URL") {
    Some(url) => url,
    None => concat!(env!("CARGO_PKG_REPOSITORY"), "/blob/main/docs/rules.md"),
};

/// The URL of a rule's documentation: SARIF's `helpUri`, the language server's
/// `codeDescription` and `ozcheck rules ID` all take it from here. Rule ids are kebab-case, so
/// the id is the anchor of its `##` heading as is.
pub fn rule_url(id: &str) -> String {
    format!("{RULES_DOC_URL}#{id}")
}

/// One rule's documentation in Markdown (a `##` heading and its sections).
pub fn rule_markdown(rule: &Rule) -> String {
    let mut out = String::new();
    let _ = writeln!(out, "## `{}`\n", rule.id);
    let _ = writeln!(
        out,
        "{} (default: {}).\n",
        rule.summary,
        rule.severity.as_str()
    );
    let _ = writeln!(out, "### What it does\n\n{}\n", rule.what);
    let _ = writeln!(out, "### Why is this bad?\n\n{}\n", rule.why);
    out.push_str("### Example\n\n");
    yaml_block(&mut out, rule.example);
    out.push_str("### Use instead\n\n");
    yaml_block(&mut out, rule.use_instead);
    if !rule.fix.is_empty() {
        let _ = writeln!(
            out,
            "### Fix\n\nSafe fix (`ozcheck lint --fix`, and a code action in `ozcheck server`): {}\n",
            rule.fix
        );
    }
    if !rule.assumptions.is_empty() {
        let _ = writeln!(out, "### Assumptions\n\n{}\n", rule.assumptions);
    }
    out
}

/// The whole of `docs/rules.md`.
pub fn rules_markdown() -> String {
    let mut out = String::from(
        "# Lint rules\n\n<!-- Generated from lint/src/rules/*.rs by `OZCHECK_BLESS=1 cargo test -p ozcheck-lint --test docs`; do not edit. -->\n\n\
Each rule has a stable kebab-case id, used in output, in `ozcheck.toml` (`[rules] ID = \"error\" | \"warning\" | \"off\"`) \
and in inline suppressions (`# ozcheck: ignore[ID]` or `# ozcheck: ignore[ID, ID]` on the \
finding's line or the line above; a bare `# ozcheck: ignore` or an unknown id is \
`invalid-suppression`, an id with nothing to suppress `unused-suppression`, and \
`ozcheck lint --no-ignores` reports every finding whatever the comments say). \
Rules marked 🛠 have a safe fix: `ozcheck lint --fix` applies it (`--diff` shows it), and the \
language server (`ozcheck server`) offers it as a code action. A safe fix changes only the bytes \
the finding points at, and only where the intent is certain.\n\n\
| id | default | fix | summary |\n|---|---|---|---|\n",
    );
    for rule in RULES {
        let _ = writeln!(
            out,
            "| [`{0}`](#{0}) | {1} | {2} | {3} |",
            rule.id,
            rule.severity.as_str(),
            if rule.fix.is_empty() { "" } else { "🛠" },
            rule.summary
        );
    }
    out.push('\n');
    for rule in RULES {
        out.push_str(&rule_markdown(rule));
    }
    out
}

/// The catalogue for `ozcheck rules`: one line per rule.
pub fn catalogue() -> String {
    let width = RULES.iter().map(|r| r.id.len()).max().unwrap_or(0);
    let mut out = String::new();
    for rule in RULES {
        let _ = writeln!(
            out,
            "{:width$}  {:7}  {:3}  {}",
            rule.id,
            rule.severity.as_str(),
            if rule.fix.is_empty() { "" } else { "fix" },
            rule.summary
        );
    }
    out
}
