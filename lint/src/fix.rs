//! Safe fixes: the edits that findings carry, applied to a file's text. Every byte outside an
//! edit is kept as it was (comments, quoting, indentation, line breaks), so a fixed file differs
//! from the original only where a finding pointed.
//!
//! A fix is applied only when it is certain (see each rule's `fix` text). Fixes of one round
//! that overlap are not applied together: the first one wins and the file is linted again, so
//! the others are reconsidered on the new text. Rounds are bounded by [`MAX_ROUNDS`], so fixes
//! that would undo each other cannot loop.

use std::ops::Range;

use crate::finding::{Edit, Finding};
use crate::{Config, FileReport, Input, PluginContext};

/// Most lint-and-fix rounds over one set of files.
pub const MAX_ROUNDS: usize = 8;

/// The edits of the fixes of `findings` that can be applied together, in file order: a fix is
/// left out when one of its edits overlaps an edit already taken, or does not lie on character
/// boundaries of `text`.
pub fn compatible_edits<'f>(text: &str, findings: &'f [Finding]) -> Vec<&'f Edit> {
    let mut fixes: Vec<&crate::finding::Fix> =
        findings.iter().filter_map(|f| f.fix.as_ref()).collect();
    fixes.sort_by_key(|fix| fix.edits.iter().map(|e| e.span.start).min());
    let mut taken: Vec<&Edit> = Vec::new();
    for fix in fixes {
        let fits = fix.edits.iter().all(|e| {
            on_boundaries(text, &e.span)
                && !taken.iter().any(|t| overlaps(&t.span, &e.span))
                && !fix
                    .edits
                    .iter()
                    .any(|o| !std::ptr::eq(o, e) && overlaps(&o.span, &e.span))
        });
        if fits {
            taken.extend(&fix.edits);
        }
    }
    taken.sort_by_key(|e| (e.span.start, e.span.end));
    taken
}

/// `text` with `edits` (non-overlapping, in file order) applied.
pub fn apply_edits(text: &str, edits: &[&Edit]) -> String {
    let mut out = String::with_capacity(text.len());
    let mut at = 0;
    for edit in edits {
        out.push_str(&text[at..edit.span.start]);
        out.push_str(&edit.replacement);
        at = edit.span.end;
    }
    out.push_str(&text[at..]);
    out
}

/// `text` with every compatible fix of `findings` applied, and how many fixes that was.
pub fn apply(text: &str, findings: &[Finding]) -> (String, usize) {
    let edits = compatible_edits(text, findings);
    let fixes = findings
        .iter()
        .filter_map(|f| f.fix.as_ref())
        .filter(|fix| {
            fix.edits
                .iter()
                .all(|e| edits.iter().any(|t| std::ptr::eq(*t, e)))
        })
        .count();
    (apply_edits(text, &edits), fixes)
}

/// One file after fixing: its new text, the fixes applied, and the findings that remain.
#[derive(Clone, Debug)]
pub struct FixedFile {
    /// The text as it was read.
    pub original: String,
    /// The report of the fixed text (the findings that remain).
    pub report: FileReport,
    /// How many fixes were applied over all rounds.
    pub applied: usize,
}

impl FixedFile {
    /// Whether the text changed.
    pub fn changed(&self) -> bool {
        self.original != self.report.source.text
    }
}

/// Lints `targets`, applies the safe fixes, and lints again until no fix is left (at most
/// [`MAX_ROUNDS`] rounds). Returns one entry per reported target, in the order of
/// [`crate::lint`].
pub fn fix(targets: &[Input], context: &PluginContext, config: &Config) -> Vec<FixedFile> {
    fix_each(targets, context, &vec![config; targets.len()])
}

/// [`fix`] with a configuration per target, as [`crate::lint_each`].
pub fn fix_each(targets: &[Input], context: &PluginContext, configs: &[&Config]) -> Vec<FixedFile> {
    let mut current: Vec<Input> = targets.to_vec();
    let mut applied = vec![0usize; current.len()];
    let mut reports = crate::lint_each(&current, context, configs);
    for _ in 0..MAX_ROUNDS {
        let mut any = false;
        for report in &reports {
            let Some(i) = current.iter().position(|t| t.path == report.source.path) else {
                continue;
            };
            if current[i].invalid_utf8_at.is_some() || current[i].too_large {
                continue;
            }
            let (text, count) = apply(&report.source.text, &report.findings);
            if count > 0 && text != report.source.text {
                current[i].text = text;
                applied[i] += count;
                any = true;
            }
        }
        if !any {
            break;
        }
        reports = crate::lint_each(&current, context, configs);
    }
    reports
        .into_iter()
        .map(|report| {
            let i = targets.iter().position(|t| t.path == report.source.path);
            FixedFile {
                original: i.map_or_else(|| report.source.text.clone(), |i| targets[i].text.clone()),
                applied: i.map_or(0, |i| applied[i]),
                report,
            }
        })
        .collect()
}

fn overlaps(a: &Range<usize>, b: &Range<usize>) -> bool {
    // Two insertions at one point, or an insertion inside a replacement, also conflict.
    a.start < b.end.max(b.start + 1) && b.start < a.end.max(a.start + 1)
}

fn on_boundaries(text: &str, span: &Range<usize>) -> bool {
    span.start <= span.end
        && span.end <= text.len()
        && text.is_char_boundary(span.start)
        && text.is_char_boundary(span.end)
}

/// The fixes as a unified diff (`--- a/PATH`, `+++ b/PATH`, three lines of context), one file
/// after another; empty when nothing changed.
pub fn unified_diff(fixed: &[FixedFile]) -> String {
    let mut out = String::new();
    for file in fixed.iter().filter(|f| f.changed()) {
        let path = &file.report.source.path;
        let diff =
            similar::TextDiff::from_lines(file.original.as_str(), file.report.source.text.as_str());
        out.push_str(
            &diff
                .unified_diff()
                .context_radius(3)
                .header(&format!("a/{path}"), &format!("b/{path}"))
                .to_string(),
        );
    }
    out
}
