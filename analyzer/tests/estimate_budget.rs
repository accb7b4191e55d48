//! The table of docs/cost-model.md §6: for ten representative filters, the bound with the
//! shared attribute budget against the bound with independent sizes (cel-go's way), both
//! computed by the estimator. The test fails when the document is stale; run it with
//! `OZCHECK_BLESS=1` to rewrite the table.

use std::fmt::Write as _;
use std::path::PathBuf;

use ozcheck_analyzer::cost::SizeModel;
use ozcheck_analyzer::{Options, Verdict, check_filter};

const FILTERS: [&str; 10] = [
    "event.action == 'opened' && !event.attributes.draft",
    "event.text.contains('LGTM')",
    "event.attributes.labels.exists(l, l == 'urgent')",
    "event.attributes.labels.all(l, l.startsWith('area/'))",
    "event.attributes.title.contains(event.attributes.keyword)",
    "event.attributes.reviewers.exists(r, r in event.attributes.owners)",
    "event.attributes.exists(k, event.attributes[k].contains('x'))",
    "event.attributes.a.map(x, x + x).filter(y, y.size() > 3).size() > 0",
    "event.attributes.labels.exists(l, event.text.contains(l))",
    "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))",
];

const START: &str = "<!-- budget-table:start -->\n";
const END: &str = "<!-- budget-table:end -->";

fn bound(source: &str, sizes: SizeModel) -> (u64, Verdict) {
    let report = check_filter(
        source,
        &Options {
            sizes,
            ..Options::default()
        },
    );
    (report.cost.expect("estimated").max, report.verdict)
}

fn verdict(v: Verdict) -> &'static str {
    match v {
        Verdict::Accepted => "accepted",
        Verdict::Refused => "refused",
    }
}

fn table() -> String {
    let mut out =
        String::from("| filter | shared budget | independent sizes | ratio |\n|---|--:|--:|--:|\n");
    for source in FILTERS {
        let (shared, vs) = bound(source, SizeModel::Shared);
        let (independent, vi) = bound(source, SizeModel::Independent);
        // Soundness of the comparison itself: sharing a budget can only tighten a bound.
        assert!(shared <= independent, "{source}: {shared} > {independent}");
        let _ = writeln!(
            out,
            "| `{source}` | {shared} ({}) | {independent} ({}) | {:.1}× |",
            verdict(vs),
            verdict(vi),
            independent as f64 / shared as f64
        );
    }
    out
}

#[test]
fn shared_budget_is_tighter_where_it_applies() {
    for source in &FILTERS[4..] {
        let (shared, _) = bound(source, SizeModel::Shared);
        let (independent, _) = bound(source, SizeModel::Independent);
        assert!(
            shared * 2 < independent,
            "{source}: {shared} vs {independent}"
        );
    }
}

#[test]
fn cost_model_doc_table_is_current() {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../docs/cost-model.md");
    let doc = std::fs::read_to_string(&path).expect("docs/cost-model.md");
    let start = doc.find(START).expect("start marker") + START.len();
    let end = doc.find(END).expect("end marker");
    let fresh = table();
    if std::env::var_os("OZCHECK_BLESS").is_some() {
        let updated = format!("{}{fresh}{}", &doc[..start], &doc[end..]);
        std::fs::write(&path, updated).expect("write doc");
        return;
    }
    assert_eq!(
        &doc[start..end],
        fresh,
        "docs/cost-model.md §6 is stale: run with OZCHECK_BLESS=1"
    );
}
