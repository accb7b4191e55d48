//! `ozcheck schema [agent|flow|routine]`: the JSON Schema (draft-07) of a plugin file kind, for
//! yaml-language-server and other editors. Without a kind, all three keyed by kind.

use std::process::ExitCode;

use clap::{Args, ValueEnum};
use ozcheck_lint::FileKind;
use ozcheck_lint::schema::json_schema;

/// A plugin file kind.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Kind {
    /// `agents/*.yaml`.
    Agent,
    /// `flows/*.yaml`.
    Flow,
    /// `routines/*.yaml`.
    Routine,
}

/// Arguments of `ozcheck schema`.
#[derive(Args)]
pub struct SchemaArgs {
    /// The file kind; without it, an object with all three.
    #[arg(value_enum)]
    pub kind: Option<Kind>,
}

/// Runs the subcommand.
pub fn run(args: &SchemaArgs) -> ExitCode {
    let value = match args.kind {
        Some(Kind::Agent) => json_schema(FileKind::Agent),
        Some(Kind::Flow) => json_schema(FileKind::Flow),
        Some(Kind::Routine) => json_schema(FileKind::Routine),
        None => serde_json::json!({
            "agent": json_schema(FileKind::Agent),
            "flow": json_schema(FileKind::Flow),
            "routine": json_schema(FileKind::Routine),
        }),
    };
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_default();
    text.push('\n');
    crate::out!("{text}");
    ExitCode::SUCCESS
}
