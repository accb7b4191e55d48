//! The rule registry: every rule, its documentation and its check, in one list. One rule per
//! file; `docs/rules.md` is generated from these entries (see [`crate::docs`]).
//!
//! A rule's documentation lives in its [`Rule`] constant rather than only in a doc comment,
//! because `ozcheck rules ID` and the docs generator read it at run time.

use crate::config::Config;
use crate::finding::{Finding, Fix, Severity};
use crate::model::{FileKind, Model, PluginIndex};
use crate::schema::Problem;
use crate::source::SourceFile;
use crate::yaml::{Node, YamlProblem};
use ozcheck_analyzer::wait_args::WaitArgError;

mod allow_senders_without_sender;
mod compound_timeout;
mod duplicate_key;
mod duplicate_output_name;
mod duplicate_step_id;
mod duplicate_trigger_name;
mod empty_wait_argument;
mod fractional_timeout;
mod invalid_filter;
mod invalid_name;
mod invalid_since;
mod invalid_suppression;
mod invalid_template;
mod invalid_timeout;
mod invalid_when;
mod invalid_yaml;
mod merge_key;
mod missing_instructions;
mod missing_key;
mod name_mismatch;
mod routine_missing_wait_tool;
mod step_action_count;
mod timeout_too_long;
mod unknown_agent;
mod unknown_file_kind;
mod unknown_key;
mod unknown_step_reference;
mod unused_suppression;
mod wait_and_delegate;
mod wait_tool_unsupported_runtime;
mod wrong_type;

/// One rule: its id, default severity, documentation and check.
#[derive(Debug)]
pub struct Rule {
    /// Stable kebab-case id (also the miette code).
    pub id: &'static str,
    /// Severity unless `ozcheck.toml` says otherwise.
    pub severity: Severity,
    /// One line.
    pub summary: &'static str,
    /// What it does.
    pub what: &'static str,
    /// Why is this bad?
    pub why: &'static str,
    /// Files that fire the rule: `# file: PATH` lines start each file.
    pub example: &'static str,
    /// The same files fixed (must not fire the rule).
    pub use_instead: &'static str,
    /// Assumptions about keys the documents do not show, if any.
    pub assumptions: &'static str,
    /// The safe fix `--fix` and editors apply, when the rule has one (empty when not).
    pub fix: &'static str,
    /// The check.
    pub check: fn(&Context<'_>, &mut Vec<Finding>),
}

/// Everything a rule sees of one file and its plugin.
pub struct Context<'a> {
    /// The file.
    pub source: &'a SourceFile,
    /// The root node, when the file parsed.
    pub root: Option<&'a Node>,
    /// What the YAML reader met (syntax errors, limits).
    pub problems: &'a [YamlProblem],
    /// The file's kind, if known.
    pub kind: Option<FileKind>,
    /// The typed model.
    pub model: &'a Model<'a>,
    /// What the schema check found.
    pub schema: &'a [Problem],
    /// The plugin's agents.
    pub plugin: &'a PluginIndex,
    /// The plugin folder (`""` for the current one) when the file sits in a kind folder.
    pub plugin_root: Option<&'a str>,
    /// How to tell whether a file exists, when the caller can.
    pub file_exists: Option<&'a crate::FileExists>,
    /// The configuration.
    pub config: &'a Config,
    /// Whether the file was named on the command line (not found in a folder).
    pub explicit: bool,
    /// Whether the path is a stand-in for standard input, so that its name means nothing.
    pub anonymous: bool,
}

impl std::fmt::Debug for Context<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Context")
            .field("path", &self.source.path)
            .field("kind", &self.kind)
            .finish_non_exhaustive()
    }
}

/// Every rule, in the order of the docs.
pub const RULES: &[Rule] = &[
    invalid_yaml::RULE,
    duplicate_key::RULE,
    unknown_key::RULE,
    wrong_type::RULE,
    missing_key::RULE,
    merge_key::RULE,
    missing_instructions::RULE,
    unknown_file_kind::RULE,
    compound_timeout::RULE,
    fractional_timeout::RULE,
    timeout_too_long::RULE,
    invalid_timeout::RULE,
    invalid_since::RULE,
    empty_wait_argument::RULE,
    invalid_filter::RULE,
    invalid_when::RULE,
    invalid_template::RULE,
    unknown_step_reference::RULE,
    duplicate_step_id::RULE,
    duplicate_trigger_name::RULE,
    duplicate_output_name::RULE,
    invalid_name::RULE,
    name_mismatch::RULE,
    step_action_count::RULE,
    allow_senders_without_sender::RULE,
    unknown_agent::RULE,
    wait_tool_unsupported_runtime::RULE,
    wait_and_delegate::RULE,
    routine_missing_wait_tool::RULE,
    invalid_suppression::RULE,
    unused_suppression::RULE,
];

/// The rule with this id.
pub fn find(id: &str) -> Option<&'static Rule> {
    RULES.iter().find(|r| r.id == id)
}

/// A rule's default severity (error for an id not in the registry, which a test rules out).
pub fn default_severity(id: &str) -> Severity {
    find(id).map_or(Severity::Error, |r| r.severity)
}

/// The name of the wait tool agents list.
pub const WAIT_TOOL: &str = "oz.wait_for_event";

/// Every wait and trigger event spec of a file, for the rules about their fields.
pub fn event_specs<'m, 'a>(model: &'m Model<'a>) -> Vec<&'m crate::model::EventSpec<'a>> {
    match model {
        Model::Flow(flow) => flow
            .trigger_event
            .iter()
            .chain(flow.steps.iter().filter_map(|s| s.wait.as_ref()))
            .collect(),
        Model::Routine(routine) => routine
            .triggers
            .iter()
            .filter_map(|t| t.event.as_ref())
            .collect(),
        _ => Vec::new(),
    }
}

/// Shared by the four timeout rules: each reports the errors of the grammar that carry its id.
pub fn timeout_findings(cx: &Context<'_>, rule: &'static str, out: &mut Vec<Finding>) {
    let mut report = |node: &Node, bounded: bool| {
        let Some(text) = node.text() else { return };
        let result = if bounded {
            ozcheck_analyzer::wait_args::parse_timeout(text)
        } else {
            ozcheck_analyzer::wait_args::parse_duration(text)
        };
        if let Err(error) = result
            && error.code() == rule
        {
            let mut finding = Finding::new(rule, node.span.clone(), error.to_string())
                .label("timeout")
                .help(error.help());
            if let WaitArgError::CompoundTimeout {
                suggestion: Some(single),
                ..
            }
            | WaitArgError::FractionalTimeout {
                suggestion: Some(single),
                ..
            } = &error
                && let Some(span) = crate::position::literal_span(&cx.source.text, node)
            {
                finding = finding.fix(Fix::replace(format!("write {single}"), span, single));
            }
            out.push(finding);
        }
    };
    for spec in event_specs(cx.model) {
        if let Some(timeout) = spec.timeout {
            report(timeout, true);
        }
    }
    if let Model::Agent(agent) = cx.model
        && let Some(timeout) = agent.timeout
    {
        report(timeout, false);
    }
}

/// The spans `unknown-step-reference` reports in an expression of step `index`.
pub(crate) fn unknown_step_reference_spans(
    flow: &crate::model::Flow<'_>,
    index: usize,
    expr: &str,
) -> Vec<std::ops::Range<usize>> {
    unknown_step_reference::spans(flow, index, expr)
}

pub(crate) use invalid_when::overlaps as invalid_when_overlaps;

/// Reports every node whose text an earlier node of `nodes` already has.
pub fn duplicates(
    cx: &Context<'_>,
    rule: &'static str,
    what: &str,
    nodes: &[&Node],
    out: &mut Vec<Finding>,
) {
    let mut first_of: std::collections::HashMap<&str, &Node> =
        std::collections::HashMap::with_capacity(nodes.len());
    for node in nodes {
        let Some(text) = node.text() else { continue };
        let Some(first) = first_of.get(text).copied() else {
            first_of.insert(text, node);
            continue;
        };
        {
            let (line, _) = cx.source.line_col(first.span.start);
            out.push(
                Finding::new(
                    rule,
                    node.span.clone(),
                    format!("{what} `{text}` is already used on line {line}"),
                )
                .label(format!("repeated {what}"))
                .help(format!("give each a different {what}")),
            );
        }
    }
}

/// Runs every rule on one file.
pub fn run(cx: &Context<'_>) -> Vec<Finding> {
    let mut out = Vec::new();
    for rule in RULES {
        // A rule turned off in `ozcheck.toml` is not run at all.
        if cx.config.rules.get(rule.id) == Some(&crate::Level::Off) {
            continue;
        }
        (rule.check)(cx, &mut out);
    }
    out
}
