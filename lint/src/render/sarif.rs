//! SARIF 2.1.0: one run, the whole rule catalogue as `tool.driver.rules` (each with a
//! `helpUri` into docs/rules.md), a result per finding, and the safe fix as a SARIF `fix`.
//!
//! Artifact locations follow the standard's rules on URIs: a relative path is a relative
//! reference under the `%SRCROOT%` base (what code-scanning services resolve against the
//! checkout), and an absolute path is an absolute `file:` URI with no base, since a base with an
//! absolute URI is an error (SARIF1004 in Microsoft's SARIF Multitool). Path bytes other than
//! unreserved characters and `/` are percent-encoded, so a `:` or a space in a file name cannot
//! turn the reference into something else.

use std::fmt::Write as _;

use serde_json::{Value as Json, json};

use crate::finding::{Finding, Severity};
use crate::rules::RULES;
use crate::source::SourceFile;
use crate::{FileReport, Position};

fn pascal(id: &str) -> String {
    id.split('-')
        .map(|w| {
            let mut c = w.chars();
            c.next()
                .map(|f| f.to_ascii_uppercase().to_string() + c.as_str())
                .unwrap_or_default()
        })
        .collect()
}

/// The percent-encoded form of a path's bytes, keeping unreserved characters and `/`.
fn encode_path(path: &str) -> String {
    let mut out = String::with_capacity(path.len());
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'~' | b'/') {
            out.push(char::from(b));
        } else {
            let _ = write!(out, "%{b:02X}");
        }
    }
    out
}

/// The SARIF `artifactLocation` of a reported path.
pub fn artifact_location(path: &str) -> Json {
    let path = path.replace('\\', "/");
    let bytes = path.as_bytes();
    let drive =
        bytes.len() >= 3 && bytes[0].is_ascii_alphabetic() && bytes[1] == b':' && bytes[2] == b'/';
    if drive {
        // `C:/x` → `file:///C:/x`: the drive's colon stays as the standard writes it.
        return json!({ "uri": format!("file:///{}:{}", char::from(bytes[0]), encode_path(&path[2..])) });
    }
    if path.starts_with('/') {
        return json!({ "uri": format!("file://{}", encode_path(&path)) });
    }
    json!({ "uri": encode_path(&path), "uriBaseId": "%SRCROOT%" })
}

fn region(p: Position) -> Json {
    json!({
        "startLine": p.line,
        "startColumn": p.column,
        "endLine": p.end_line,
        "endColumn": p.end_column,
    })
}

fn level(severity: Severity) -> &'static str {
    severity.as_str()
}

fn fixes(source: &SourceFile, finding: &Finding) -> Option<Json> {
    let fix = finding.fix.as_ref()?;
    let replacements: Vec<Json> = fix
        .edits
        .iter()
        .map(|edit| {
            json!({
                "deletedRegion": region(source.position(&edit.span)),
                "insertedContent": { "text": edit.replacement },
            })
        })
        .collect();
    Some(json!([{
        "description": { "text": fix.title },
        "artifactChanges": [{
            "artifactLocation": artifact_location(&source.path),
            "replacements": replacements,
        }],
    }]))
}

fn result(report: &FileReport, finding: &Finding) -> Json {
    let index = RULES.iter().position(|r| r.id == finding.rule).unwrap_or(0);
    let mut text = finding.message.clone();
    if let Some(help) = &finding.help {
        let _ = write!(text, " (help: {help})");
    }
    let mut result = json!({
        "ruleId": finding.rule,
        "ruleIndex": index,
        "level": level(finding.severity),
        "message": { "text": text },
        "locations": [{
            "physicalLocation": {
                "artifactLocation": artifact_location(&report.source.path),
                "region": region(report.position(finding)),
            },
        }],
    });
    if let Some(fixes) = fixes(&report.source, finding) {
        result["fixes"] = fixes;
    }
    result
}

/// SARIF 2.1.0: one run, the whole rule catalogue as `tool.driver.rules`.
pub fn sarif(reports: &[FileReport]) -> String {
    let rules: Vec<Json> = RULES
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": pascal(r.id),
                "shortDescription": { "text": r.summary },
                "fullDescription": { "text": r.what },
                "help": { "text": format!("{}\n\nWhy: {}", r.what, r.why), "markdown": crate::docs::rule_markdown(r) },
                "helpUri": crate::docs::rule_url(r.id),
                "defaultConfiguration": { "level": level(r.severity) },
            })
        })
        .collect();
    let results: Vec<Json> = reports
        .iter()
        .flat_map(|r| r.findings.iter().map(move |f| result(r, f)))
        .collect();
    let log = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": { "driver": {
                "name": "ozcheck",
                "version": env!("CARGO_PKG_VERSION"),
                "informationUri": env!("CARGO_PKG_REPOSITORY"),
                "rules": rules,
            }},
            "columnKind": "unicodeCodePoints",
            "results": results,
        }],
    });
    let mut text = serde_json::to_string_pretty(&log).unwrap_or_default();
    text.push('\n');
    text
}
