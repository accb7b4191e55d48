//! `--statistics`: how many findings each rule has, most first, and whether a safe fix exists,
//! then the total, as ruff prints them; as JSON for scripts (an array of rows: the total is
//! their sum). SARIF and GitHub annotations have no statistics: the command line refuses them.

use std::collections::BTreeMap;
use std::fmt::Write as _;

use serde_json::json;

use ozcheck_analyzer::cost::group;

use crate::FileReport;
use crate::rules;

/// One line per rule with findings (`COUNT  RULE  [*]  summary`, `[*]` when some finding of it
/// has a safe fix), or a JSON array of `{code, count, fixable, summary}` when `json`.
pub fn statistics(reports: &[FileReport], json: bool) -> String {
    let mut counts: BTreeMap<&'static str, (usize, bool)> = BTreeMap::new();
    for finding in reports.iter().flat_map(|r| &r.findings) {
        let entry = counts.entry(finding.rule).or_default();
        entry.0 += 1;
        entry.1 |= finding.fix.is_some();
    }
    let mut rows: Vec<(&'static str, usize, bool)> = counts
        .into_iter()
        .map(|(id, (n, fix))| (id, n, fix))
        .collect();
    rows.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let summary = |id: &str| rules::find(id).map_or("", |r| r.summary);
    if json {
        let rows: Vec<_> = rows
            .iter()
            .map(|(id, n, fix)| {
                json!({ "code": id, "count": n, "fixable": fix, "summary": summary(id) })
            })
            .collect();
        let mut text = serde_json::to_string_pretty(&rows).unwrap_or_default();
        text.push('\n');
        return text;
    }
    // Counts are for people here, grouped by thousands as everywhere in text.
    let count = |n: usize| group(u64::try_from(n).unwrap_or(u64::MAX));
    let count_width = rows.iter().map(|r| count(r.1).len()).max().unwrap_or(1);
    let id_width = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
    let total: usize = rows.iter().map(|r| r.1).sum();
    let fixable = reports
        .iter()
        .flat_map(|r| &r.findings)
        .filter(|f| f.fix.is_some())
        .count();
    let mut out = String::new();
    for (id, n, fix) in rows {
        let _ = writeln!(
            out,
            "{:>count_width$}  {id:<id_width$}  {}  {}",
            count(n),
            if fix { "[*]" } else { "[ ]" },
            summary(id)
        );
    }
    // The total, as ruff ends its table, with how many a safe fix removes.
    let _ = writeln!(
        out,
        "Found {} ({} fixable with `ozcheck lint --fix`).",
        super::plural(total, "finding"),
        count(fixable)
    );
    out
}
