//! The parts of the LSP 3.17 protocol the server reads and writes, as plain serde types.
//!
//! The `lsp-types` crate covers the whole protocol, and its derives were about a tenth of the
//! light build that `cargo install` and the pre-commit hook compile (BENCHMARKS.md,
//! "pre-commit"); the server needs a few dozen fields. The wire format is the protocol's:
//! camelCase names, optional fields left out when absent, numeric enumerations as numbers.
//! Parameters are read leniently: only the fields the server uses are required, the rest of
//! what a client sends is ignored.

use std::collections::HashMap;
use std::fmt;
use std::marker::PhantomData;

use serde::de::{Deserializer, IgnoredAny, SeqAccess, Visitor};
use serde::{Deserialize, Serialize};

/// The method names the server handles or sends.
pub mod method {
    pub const DID_OPEN: &str = "textDocument/didOpen";
    pub const DID_CHANGE: &str = "textDocument/didChange";
    pub const DID_SAVE: &str = "textDocument/didSave";
    pub const DID_CLOSE: &str = "textDocument/didClose";
    pub const HOVER: &str = "textDocument/hover";
    pub const CODE_ACTION: &str = "textDocument/codeAction";
    pub const PUBLISH_DIAGNOSTICS: &str = "textDocument/publishDiagnostics";
    pub const SHOW_MESSAGE: &str = "window/showMessage";
}

/// A document's URI, as the client spelt it (documents are keyed by it).
#[derive(Clone, Debug, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(transparent)]
pub struct Uri(String);

impl Uri {
    #[cfg(test)]
    pub fn new(uri: impl Into<String>) -> Uri {
        Uri(uri.into())
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A line and a character in it, both counted from zero (characters in the negotiated
/// encoding).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Position {
    pub line: u32,
    pub character: u32,
}

impl Position {
    pub fn new(line: u32, character: u32) -> Position {
        Position { line, character }
    }
}

/// From `start` to `end`, `end` excluded.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    pub start: Position,
    pub end: Position,
}

impl Range {
    pub fn new(start: Position, end: Position) -> Range {
        Range { start, end }
    }
}

/// The protocol's names of the position encodings.
pub mod encoding {
    pub const UTF8: &str = "utf-8";
    pub const UTF16: &str = "utf-16";
}

/// The code action kinds the server offers (`source.fixAll.ozcheck` is the fix-all action's).
pub mod action_kind {
    pub const QUICKFIX: &str = "quickfix";
    pub const FIX_ALL: &str = "source.fixAll.ozcheck";
}

// ---- initialize ----

/// What the server reads of `initialize`'s parameters.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeParams {
    #[serde(default)]
    pub capabilities: ClientCapabilities,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    pub general: Option<GeneralClientCapabilities>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct GeneralClientCapabilities {
    /// The encodings the client can count characters in, preferred first (the first
    /// [`FEW`]).
    #[serde(default, deserialize_with = "first_few")]
    pub position_encodings: Option<Vec<String>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct InitializeResult {
    pub capabilities: ServerCapabilities,
    pub server_info: ServerInfo,
}

#[derive(Debug, Serialize)]
pub struct ServerInfo {
    pub name: &'static str,
    pub version: &'static str,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    pub position_encoding: &'static str,
    pub text_document_sync: TextDocumentSyncOptions,
    pub hover_provider: bool,
    pub code_action_provider: CodeActionOptions,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TextDocumentSyncOptions {
    pub open_close: bool,
    pub change: TextDocumentSyncKind,
    pub save: bool,
}

/// How documents are synchronised (a number on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct TextDocumentSyncKind(u8);

impl TextDocumentSyncKind {
    /// Every change sends the whole text.
    pub const FULL: TextDocumentSyncKind = TextDocumentSyncKind(1);
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeActionOptions {
    pub code_action_kinds: Vec<&'static str>,
    pub resolve_provider: bool,
}

// ---- document synchronisation ----

#[derive(Debug, Deserialize)]
pub struct TextDocumentIdentifier {
    pub uri: Uri,
}

#[derive(Debug, Deserialize)]
pub struct VersionedTextDocumentIdentifier {
    pub uri: Uri,
    pub version: i32,
}

/// An opened document (its `languageId` is not read).
#[derive(Debug, Deserialize)]
pub struct TextDocumentItem {
    pub uri: Uri,
    pub version: i32,
    pub text: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidOpenTextDocumentParams {
    pub text_document: TextDocumentItem,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidChangeTextDocumentParams {
    pub text_document: VersionedTextDocumentIdentifier,
    /// The last of the changes: with full synchronisation it holds the whole text, and
    /// keeping only it bounds what a change with many entries costs.
    #[serde(deserialize_with = "last_of")]
    pub content_changes: Option<TextDocumentContentChangeEvent>,
}

/// A change; with full synchronisation the text is the whole document.
#[derive(Debug, Deserialize)]
pub struct TextDocumentContentChangeEvent {
    pub text: String,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidSaveTextDocumentParams {
    pub text_document: TextDocumentIdentifier,
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DidCloseTextDocumentParams {
    pub text_document: TextDocumentIdentifier,
}

// ---- diagnostics and messages ----

#[derive(Debug, Serialize)]
pub struct PublishDiagnosticsParams {
    pub uri: Uri,
    pub diagnostics: Vec<Diagnostic>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version: Option<i32>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Diagnostic {
    pub range: Range,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub severity: Option<DiagnosticSeverity>,
    /// The rule's name (the protocol allows a number or a string).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code_description: Option<CodeDescription>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<&'static str>,
    pub message: String,
}

/// A diagnostic's severity (a number on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct DiagnosticSeverity(u8);

impl DiagnosticSeverity {
    pub const ERROR: DiagnosticSeverity = DiagnosticSeverity(1);
    pub const WARNING: DiagnosticSeverity = DiagnosticSeverity(2);
}

/// Where a diagnostic's code is documented.
#[derive(Clone, Debug, Serialize)]
pub struct CodeDescription {
    pub href: String,
}

#[derive(Debug, Serialize)]
pub struct ShowMessageParams {
    #[serde(rename = "type")]
    pub typ: MessageType,
    pub message: String,
}

/// A message's type (a number on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(transparent)]
pub struct MessageType(u8);

impl MessageType {
    pub const WARNING: MessageType = MessageType(2);
}

// ---- hover ----

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HoverParams {
    pub text_document: TextDocumentIdentifier,
    pub position: Position,
}

#[derive(Debug, Serialize)]
pub struct Hover {
    pub contents: MarkupContent,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<Range>,
}

/// Markdown text (the server sends no plain text).
#[derive(Debug, Serialize)]
pub struct MarkupContent {
    pub kind: &'static str,
    pub value: String,
}

impl MarkupContent {
    pub fn markdown(value: String) -> MarkupContent {
        MarkupContent {
            kind: "markdown",
            value,
        }
    }
}

// ---- code actions and edits ----

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeActionParams {
    pub text_document: TextDocumentIdentifier,
    pub range: Range,
    #[serde(default)]
    pub context: CodeActionContext,
}

#[derive(Debug, Default, Deserialize)]
pub struct CodeActionContext {
    /// The kinds the client asks for (prefixes: `source` covers `source.fixAll.ozcheck`; the
    /// first [`FEW`]).
    #[serde(default, deserialize_with = "first_few")]
    pub only: Option<Vec<String>>,
}

#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct CodeAction {
    pub title: String,
    pub kind: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub diagnostics: Option<Vec<Diagnostic>>,
    pub edit: WorkspaceEdit,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub is_preferred: Option<bool>,
}

/// Edits of documents by URI.
#[derive(Debug, Serialize)]
pub struct WorkspaceEdit {
    pub changes: HashMap<Uri, Vec<TextEdit>>,
}

#[derive(Clone, Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct TextEdit {
    pub range: Range,
    pub new_text: String,
}

impl TextEdit {
    pub fn new(range: Range, new_text: String) -> TextEdit {
        TextEdit { range, new_text }
    }
}

// ---- bounded lists ----

/// How many entries of a list of names the server keeps (encodings, code action kinds): a
/// client names a handful, and a list of empty strings would cost eight times its bytes.
pub const FEW: usize = 16;

/// A list's last element (`None` for an empty list), each earlier one dropped as the next is
/// read.
fn last_of<'de, D, T>(deserializer: D) -> Result<Option<T>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Last<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for Last<T> {
        type Value = Option<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Option<T>, A::Error> {
            let mut last = None;
            while let Some(item) = seq.next_element()? {
                last = Some(item);
            }
            Ok(last)
        }
    }
    deserializer.deserialize_seq(Last(PhantomData))
}

/// A list's first [`FEW`] elements, the rest checked and skipped; `null` reads as `None`.
fn first_few<'de, D, T>(deserializer: D) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de>,
{
    struct Few<T>(Vec<T>);
    impl<'de, T: Deserialize<'de>> Deserialize<'de> for Few<T> {
        fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
            deserializer.deserialize_seq(FewVisitor(PhantomData))
        }
    }
    struct FewVisitor<T>(PhantomData<T>);
    impl<'de, T: Deserialize<'de>> Visitor<'de> for FewVisitor<T> {
        type Value = Few<T>;
        fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            f.write_str("a list")
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Few<T>, A::Error> {
            let mut kept = Vec::new();
            while kept.len() < FEW {
                match seq.next_element()? {
                    Some(item) => kept.push(item),
                    None => return Ok(Few(kept)),
                }
            }
            while seq.next_element::<IgnoredAny>()?.is_some() {}
            Ok(Few(kept))
        }
    }
    Ok(Option::<Few<T>>::deserialize(deserializer)?.map(|few| few.0))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn numeric_enumerations_and_absent_fields_on_the_wire() {
        let diagnostic = Diagnostic {
            range: Range::new(Position::new(1, 2), Position::new(1, 5)),
            severity: Some(DiagnosticSeverity::WARNING),
            code: Some("unknown-key".to_owned()),
            code_description: None,
            source: Some("ozcheck"),
            message: "m".to_owned(),
        };
        assert_eq!(
            serde_json::to_value(&diagnostic).expect("json"),
            json!({
                "range": { "start": { "line": 1, "character": 2 }, "end": { "line": 1, "character": 5 } },
                "severity": 2,
                "code": "unknown-key",
                "source": "ozcheck",
                "message": "m",
            })
        );
        let closed = PublishDiagnosticsParams {
            uri: Uri::new("file:///a.yaml"),
            diagnostics: Vec::new(),
            version: None,
        };
        assert_eq!(
            serde_json::to_value(&closed).expect("json"),
            json!({ "uri": "file:///a.yaml", "diagnostics": [] })
        );
        let message = ShowMessageParams {
            typ: MessageType::WARNING,
            message: "x".to_owned(),
        };
        assert_eq!(
            serde_json::to_value(&message).expect("json"),
            json!({ "type": 2, "message": "x" })
        );
    }

    #[test]
    fn parameters_are_read_leniently() {
        let params: InitializeParams =
            serde_json::from_value(json!({ "processId": null, "capabilities": {} }))
                .expect("initialize");
        assert!(params.capabilities.general.is_none());
        let params: InitializeParams = serde_json::from_value(json!({
            "capabilities": { "general": { "positionEncodings": ["utf-8", "utf-16"] } }
        }))
        .expect("initialize");
        assert_eq!(
            params
                .capabilities
                .general
                .and_then(|g| g.position_encodings),
            Some(vec!["utf-8".to_owned(), "utf-16".to_owned()])
        );
        let params: CodeActionParams = serde_json::from_value(json!({
            "textDocument": { "uri": "file:///a.yaml" },
            "range": { "start": { "line": 0, "character": 0 }, "end": { "line": 0, "character": 1 } },
            "context": { "diagnostics": [], "triggerKind": 1 }
        }))
        .expect("code action");
        assert_eq!(params.context.only, None);
    }

    #[test]
    fn lists_keep_their_last_change_and_their_first_few_names() {
        let params: DidChangeTextDocumentParams = serde_json::from_value(json!({
            "textDocument": { "uri": "file:///a.yaml", "version": 2 },
            "contentChanges": [{ "text": "a" }, { "text": "b" }, { "text": "c" }]
        }))
        .expect("change");
        assert_eq!(params.content_changes.map(|c| c.text).as_deref(), Some("c"));
        let names: Vec<String> = (0..100).map(|n| n.to_string()).collect();
        let params: CodeActionContext =
            serde_json::from_value(json!({ "only": names })).expect("context");
        assert_eq!(params.only.as_deref(), Some(&names[..FEW]));
        let params: CodeActionContext =
            serde_json::from_value(json!({ "only": null })).expect("context");
        assert_eq!(params.only, None);
        // What is skipped must still be names.
        assert!(
            serde_json::from_value::<CodeActionContext>(
                json!({ "only": names.iter().chain(["x".to_owned()].iter()).collect::<Vec<_>>() })
            )
            .is_ok()
        );
    }
}
