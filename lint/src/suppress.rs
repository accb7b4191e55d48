//! Inline suppressions, as ruff's `# noqa`: `# ozcheck: ignore[rule-id]` or
//! `# ozcheck: ignore[a, b]` on the finding's line or on the line above it. A suppression that
//! does nothing is itself reported, so that none fails silently: a bare `# ozcheck: ignore`
//! and an id that names no rule are `invalid-suppression`, an id that suppressed no finding is
//! `unused-suppression` (with a safe fix that removes it). `--no-ignores` applies none of them.

use std::ops::Range;

use crate::finding::{Finding, Fix};
use crate::source::SourceFile;

/// One `# ozcheck: ignore` comment.
struct Marker {
    /// Its line, 1-based.
    line: usize,
    /// The comment's bytes in the file, from `#` to the end of the line.
    comment: Range<usize>,
    /// The bytes to delete to remove the comment (its whole line when it stands alone).
    removal: Range<usize>,
    /// The bytes of `[…]`, when it has one.
    brackets: Option<Range<usize>>,
    /// The ids written, with their bytes.
    ids: Vec<(String, Range<usize>)>,
}

/// Where a YAML comment starts: a `#` at the line start or after whitespace (a `#` inside a
/// word, as in `a#b`, is text).
fn comment_start(line: &str) -> Option<usize> {
    let bytes = line.as_bytes();
    (0..bytes.len())
        .find(|&i| bytes[i] == b'#' && (i == 0 || bytes[i - 1] == b' ' || bytes[i - 1] == b'\t'))
}

/// The marker on line `line`, if its comment is an `ozcheck: ignore`.
fn marker(source: &SourceFile, line: usize) -> Option<Marker> {
    let text = source.line_text(line);
    let start = source.line_start(line);
    let hash = comment_start(text)?;
    let after_hash = &text[hash + 1..];
    let comment = after_hash.trim_start();
    let rest = comment.strip_prefix("ozcheck:")?.trim_start();
    let rest_at = text.len() - rest.len();
    let rest = rest.strip_prefix("ignore")?;
    // `# ozcheck: ignored by …` is prose, not a marker.
    if rest.starts_with(|c: char| c.is_alphanumeric() || c == '-' || c == '_') {
        return None;
    }
    let open = rest_at + "ignore".len();
    let own_line = text[..hash].trim().is_empty();
    let removal = if own_line {
        start..source.line_start(line + 1)
    } else {
        let kept = text[..hash].trim_end().len();
        start + kept..start + text.len()
    };
    let mut found = Marker {
        line,
        comment: start + hash..start + text.len(),
        removal,
        brackets: None,
        ids: Vec::new(),
    };
    if let Some(inside) = rest.strip_prefix('[') {
        let close = inside.find(']').map_or(text.len(), |c| open + 1 + c);
        found.brackets = Some(start + open..start + (close + 1).min(text.len()));
        let mut at = open + 1;
        for part in text[open + 1..close].split(',') {
            let id = part.trim();
            let lead = part.len() - part.trim_start().len();
            if !id.is_empty() {
                found.ids.push((
                    id.to_owned(),
                    start + at + lead..start + at + lead + id.len(),
                ));
            }
            at += part.len() + 1;
        }
    }
    Some(found)
}

/// Every marker of a file.
fn markers(source: &SourceFile) -> Vec<Marker> {
    // Only lines with the marker's words are parsed, so a file without suppressions costs one
    // search.
    if !source.text.contains("ozcheck:") {
        return Vec::new();
    }
    (1..=source.line_count())
        .filter_map(|line| marker(source, line))
        .collect()
}

/// Rules that stay quiet when the lint lacks the plugin's other files or the disk (an editor's
/// buffer alone), so that their suppressions cannot be called unused then.
const NEED_CONTEXT: &[&str] = &["unknown-agent", "missing-instructions", "name-mismatch"];

/// What applying the suppressions leaves: the findings not suppressed, and the findings about
/// the suppressions themselves.
pub fn apply(
    source: &SourceFile,
    findings: &mut Vec<Finding>,
    apply_ignores: bool,
    complete: bool,
    enabled: impl Fn(&str) -> bool,
) -> Vec<Finding> {
    let markers = markers(source);
    if markers.is_empty() {
        return Vec::new();
    }
    let mut used: Vec<Vec<bool>> = markers.iter().map(|m| vec![false; m.ids.len()]).collect();
    // The ids each line's findings have, for the message of a bare marker.
    let mut on_line: std::collections::BTreeMap<usize, Vec<&'static str>> =
        std::collections::BTreeMap::new();
    findings.retain(|f| {
        let line = source.line_col(f.span.start).0;
        on_line.entry(line).or_default().push(f.rule);
        if !apply_ignores {
            return true;
        }
        let mut suppressed = false;
        for (m, marker) in markers.iter().enumerate() {
            if marker.line != line && marker.line + 1 != line {
                continue;
            }
            for (i, (id, _)) in marker.ids.iter().enumerate() {
                if id == f.rule {
                    used[m][i] = true;
                    suppressed = true;
                }
            }
        }
        !suppressed
    });
    let mut out = Vec::new();
    for (m, marker) in markers.iter().enumerate() {
        if marker.brackets.is_none() {
            out.push(bare(marker, &on_line));
            continue;
        }
        for (i, (id, span)) in marker.ids.iter().enumerate() {
            if crate::rules::find(id).is_none() {
                let hint = crate::schema::closest(id, crate::rules::RULES.iter().map(|r| r.id));
                let mut finding = Finding::new(
                    "invalid-suppression",
                    span.clone(),
                    format!("`{id}` is not a rule id; this suppression does nothing"),
                )
                .label("no such rule");
                finding = match hint {
                    Some(s) => finding.help(format!("did you mean `{s}`?")),
                    None => finding.help("`ozcheck rules` lists the rule ids"),
                };
                out.push(finding);
            } else if apply_ignores
                && !used[m][i]
                && enabled(id)
                && (complete || !NEED_CONTEXT.contains(&id.as_str()))
            {
                out.push(unused(marker, i, &used[m]));
            }
        }
    }
    out
}

/// The finding of a marker without ids, naming the ids it would have to list.
fn bare(
    marker: &Marker,
    on_line: &std::collections::BTreeMap<usize, Vec<&'static str>>,
) -> Finding {
    let mut ids: Vec<&str> = [marker.line, marker.line + 1]
        .iter()
        .filter_map(|l| on_line.get(l))
        .flatten()
        .copied()
        .collect();
    ids.sort_unstable();
    ids.dedup();
    let (message, help) = if ids.is_empty() {
        (
            "`# ozcheck: ignore` names no rule, and nothing here is reported".to_owned(),
            "remove it, or name the rules: `# ozcheck: ignore[rule-id]`".to_owned(),
        )
    } else {
        (
            format!(
                "`# ozcheck: ignore` names no rule, so it suppresses nothing; reported here: {}",
                ids.join(", ")
            ),
            format!("write `# ozcheck: ignore[{}]`", ids.join(", ")),
        )
    };
    Finding::new("invalid-suppression", marker.comment.clone(), message)
        .label("no rule ids")
        .help(help)
}

/// The finding of an id that suppressed nothing, with the fix that removes it (the whole
/// comment when no id of it was used).
fn unused(marker: &Marker, index: usize, used: &[bool]) -> Finding {
    let (id, span) = &marker.ids[index];
    let kept: Vec<&str> = marker
        .ids
        .iter()
        .enumerate()
        .filter(|&(i, _)| i != index && used[i])
        .map(|(_, (id, _))| id.as_str())
        .collect();
    let fix = match (&marker.brackets, kept.is_empty()) {
        (Some(brackets), false) => Fix::replace(
            format!("remove `{id}` from the suppression"),
            brackets.clone(),
            format!("[{}]", kept.join(", ")),
        ),
        _ => Fix::replace(
            "remove the unused suppression",
            marker.removal.clone(),
            String::new(),
        ),
    };
    Finding::new(
        "unused-suppression",
        span.clone(),
        format!("`{id}` is suppressed here but reported nothing on this line or the next"),
    )
    .label("nothing to suppress")
    .help("remove it")
    .fix(fix)
}
