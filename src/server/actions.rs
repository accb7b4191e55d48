//! The answers to requests about a document: hovers, and code actions for the safe fixes of
//! the findings under the cursor (`quickfix`) or all of them (`source.fixAll.ozcheck`).

use std::collections::HashMap;

use ozcheck_lint::discover;

use super::convert::{self, Encoding, LineIndex};
use super::documents::Documents;
use super::protocol::{
    CodeAction, CodeActionParams, Hover, HoverParams, MarkupContent, TextEdit, WorkspaceEdit,
    action_kind,
};

/// The hover at a position, if there is something to say.
pub fn hover(documents: &Documents, encoding: Encoding, params: &HoverParams) -> Option<Hover> {
    let doc = documents.get(&params.text_document.uri)?;
    // Over the lint's limit the text is not parsed, as the lint does not parse it.
    if doc.text.len() > ozcheck_lint::MAX_FILE_BYTES {
        return None;
    }
    let index = LineIndex::new(&doc.text, encoding);
    let offset = index.offset(params.position);
    let config = discover::nearest_config(&doc.path).unwrap_or_default();
    let found =
        ozcheck_lint::hover::hover(&convert::display(&doc.path), &doc.text, offset, &config)?;
    Some(Hover {
        contents: MarkupContent::markdown(found.markdown),
        range: Some(index.range(&found.span)),
    })
}

fn overlaps(a: &std::ops::Range<usize>, b: &std::ops::Range<usize>) -> bool {
    a.start <= b.end && b.start <= a.end
}

/// The quick fixes of the findings that overlap the requested range, and a fix-all action when
/// the document has any fix.
pub fn code_actions(
    documents: &Documents,
    encoding: Encoding,
    params: &CodeActionParams,
) -> Vec<CodeAction> {
    let uri = &params.text_document.uri;
    let (Some(doc), Some(linted)) = (documents.get(uri), documents.lint(uri)) else {
        return Vec::new();
    };
    let Some(report) = linted.report else {
        return Vec::new();
    };
    let index = LineIndex::new(&doc.text, encoding);
    let wanted = index.offset(params.range.start)..index.offset(params.range.end);
    let only = params.context.only.as_deref();
    let allows =
        |kind: &str| only.is_none_or(|kinds| kinds.iter().any(|k| kind.starts_with(k.as_str())));
    let mut out = Vec::new();
    if allows(action_kind::QUICKFIX) {
        for finding in report.findings.iter().filter(|f| f.fix.is_some()) {
            if !overlaps(&finding.span, &wanted) {
                continue;
            }
            let title = finding
                .fix
                .as_ref()
                .map_or_else(String::new, |f| f.title.clone());
            let changes = HashMap::from([(uri.clone(), convert::edits(&index, finding))]);
            out.push(CodeAction {
                title: format!("{title} ({})", finding.rule),
                kind: action_kind::QUICKFIX,
                diagnostics: Some(vec![convert::diagnostic(&index, finding)]),
                edit: WorkspaceEdit { changes },
                is_preferred: Some(true),
            });
        }
    }
    if allows(action_kind::FIX_ALL) && report.findings.iter().any(|f| f.fix.is_some()) {
        // Every round of fixes, as `ozcheck lint --fix` applies them, as one edit of the text.
        if let Some(fixed) = documents.fixed_text(uri) {
            let whole = index.range(&(0..doc.text.len()));
            let changes = HashMap::from([(uri.clone(), vec![TextEdit::new(whole, fixed)])]);
            out.push(CodeAction {
                title: "Fix all ozcheck findings that have a safe fix".to_owned(),
                kind: action_kind::FIX_ALL,
                diagnostics: None,
                edit: WorkspaceEdit { changes },
                is_preferred: None,
            });
        }
    }
    out
}
