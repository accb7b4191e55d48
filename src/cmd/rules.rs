//! `ozcheck rules [ID]`: the rule catalogue, or one rule's documentation.

use std::io::Write;
use std::process::ExitCode;

use clap::Args;
use ozcheck_lint::{docs, rules};

/// Arguments of `ozcheck rules`.
#[derive(Args)]
pub struct RulesArgs {
    /// A rule id; without it, every rule with its default level and summary.
    pub id: Option<String>,
}

/// Runs the subcommand.
pub fn run(args: &RulesArgs) -> ExitCode {
    let text = match &args.id {
        None => docs::catalogue(),
        Some(id) => {
            let Some(rule) = rules::find(id) else {
                let hint = ozcheck_lint::schema::closest(id, rules::RULES.iter().map(|r| r.id))
                    .map(|s| format!("; did you mean `{s}`?"))
                    .unwrap_or_default();
                let _ = writeln!(std::io::stderr(), "ozcheck rules: no rule `{id}`{hint}");
                return ExitCode::from(2);
            };
            format!(
                "{}Documentation: {}\n",
                docs::rule_markdown(rule),
                docs::rule_url(rule.id)
            )
        }
    };
    crate::out!("{text}");
    ExitCode::SUCCESS
}
