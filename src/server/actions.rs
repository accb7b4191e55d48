//! The answers to requests about a document: hovers, and code actions for the safe fixes of
//! the findings under the cursor (`quickfix`) or all of them (`source.fixAll.ozcheck`).

use std::collections::HashMap;

use lsp_types::{
    CodeAction, CodeActionKind, CodeActionOrCommand, CodeActionParams, Hover, HoverContents,
    HoverParams, MarkupContent, MarkupKind, TextEdit, WorkspaceEdit,
};
use ozcheck_lint::discover;

use super::convert::{self, Encoding, LineIndex};
use super::documents::Documents;

/// The kind of the action that applies every safe fix of a document.
pub fn fix_all_kind() -> CodeActionKind {
    CodeActionKind::new("source.fixAll.ozcheck")
}

/// The hover at a position, if there is something to say.
pub fn hover(documents: &Documents, encoding: Encoding, params: &HoverParams) -> Option<Hover> {
    let at = &params.text_document_position_params;
    let doc = documents.get(&at.text_document.uri)?;
    let index = LineIndex::new(&doc.text, encoding);
    let offset = index.offset(at.position);
    let config = discover::nearest_config(&doc.path).unwrap_or_default();
    let found =
        ozcheck_lint::hover::hover(&convert::display(&doc.path), &doc.text, offset, &config)?;
    Some(Hover {
        contents: HoverContents::Markup(MarkupContent {
            kind: MarkupKind::Markdown,
            value: found.markdown,
        }),
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
) -> Vec<CodeActionOrCommand> {
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
    let allows = |kind: &CodeActionKind| {
        only.is_none_or(|kinds| kinds.iter().any(|k| kind.as_str().starts_with(k.as_str())))
    };
    let mut out = Vec::new();
    if allows(&CodeActionKind::QUICKFIX) {
        for finding in report.findings.iter().filter(|f| f.fix.is_some()) {
            if !overlaps(&finding.span, &wanted) {
                continue;
            }
            let title = finding
                .fix
                .as_ref()
                .map_or_else(String::new, |f| f.title.clone());
            let changes = HashMap::from([(uri.clone(), convert::edits(&index, finding))]);
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: format!("{title} ({})", finding.rule),
                kind: Some(CodeActionKind::QUICKFIX),
                diagnostics: Some(vec![convert::diagnostic(&index, finding)]),
                edit: Some(WorkspaceEdit {
                    changes: Some(changes),
                    ..WorkspaceEdit::default()
                }),
                is_preferred: Some(true),
                ..CodeAction::default()
            }));
        }
    }
    if allows(&fix_all_kind()) && report.findings.iter().any(|f| f.fix.is_some()) {
        // Every round of fixes, as `ozcheck lint --fix` applies them, as one edit of the text.
        if let Some(fixed) = documents.fixed_text(uri) {
            let whole = index.range(&(0..doc.text.len()));
            let changes = HashMap::from([(uri.clone(), vec![TextEdit::new(whole, fixed)])]);
            out.push(CodeActionOrCommand::CodeAction(CodeAction {
                title: "Fix all ozcheck findings that have a safe fix".to_owned(),
                kind: Some(fix_all_kind()),
                edit: Some(WorkspaceEdit {
                    changes: Some(changes),
                    ..WorkspaceEdit::default()
                }),
                ..CodeAction::default()
            }));
        }
    }
    out
}
