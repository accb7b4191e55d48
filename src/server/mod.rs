//! `ozcheck server`: a language server over standard input and output (LSP 3.17, through
//! rust-analyzer's `lsp-server` transport and the few protocol types of [`protocol`]).
//!
//! It lints agent, flow and routine files when they are opened or saved, and after every change
//! once the typing has paused for [`DEBOUNCE`]; it publishes the findings as diagnostics (CEL
//! findings at their exact range inside block and quoted scalars, as the lint maps them), offers
//! each safe fix as a quick fix and all of them as `source.fixAll.ozcheck`, and answers hovers
//! (a key's schema description; a filter's or `when`'s cost range, limit and dominating term).
//! Each document is linted with the `ozcheck.toml` found above it and with its plugin's agents,
//! read from disk or from their open buffers, so cross-file rules hold in the editor too.
//!
//! One thread does the work: requests are answered in order, and a lint is a few hundred
//! microseconds on a plugin file, so nothing needs cancelling.

mod actions;
mod convert;
mod documents;
mod protocol;

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crossbeam_channel::RecvTimeoutError;
use lsp_server::{Connection, Message, Notification, Request, Response};
use serde::Serialize;

use protocol::{
    CodeActionOptions, CodeActionParams, DidChangeTextDocumentParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, HoverParams, InitializeParams,
    InitializeResult, MessageType, PublishDiagnosticsParams, ServerCapabilities, ServerInfo,
    ShowMessageParams, TextDocumentSyncKind, TextDocumentSyncOptions, Uri, action_kind, method,
};

use convert::{Encoding, LineIndex};
use documents::Documents;

/// How long typing must pause before a changed document is linted again.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// Runs the server until the client says `exit` or closes the connection.
pub fn run() -> Result<(), String> {
    let (connection, io_threads) = Connection::stdio();
    let (id, params) = connection
        .initialize_start()
        .map_err(|e| format!("initialize: {e}"))?;
    let params: InitializeParams =
        serde_json::from_value(params).map_err(|e| format!("initialize: {e}"))?;
    let encoding = Encoding::choose(
        params
            .capabilities
            .general
            .as_ref()
            .and_then(|g| g.position_encodings.as_deref()),
    );
    let result = InitializeResult {
        capabilities: capabilities(encoding),
        server_info: ServerInfo {
            name: "ozcheck",
            version: env!("CARGO_PKG_VERSION"),
        },
    };
    let result = serde_json::to_value(result).map_err(|e| e.to_string())?;
    connection
        .initialize_finish(id, result)
        .map_err(|e| format!("initialize: {e}"))?;
    let mut server = Server {
        connection: &connection,
        encoding,
        documents: Documents::default(),
        due: HashMap::new(),
        config_errors: HashMap::new(),
    };
    server.serve()?;
    drop(connection);
    io_threads.join().map_err(|e| e.to_string())
}

fn capabilities(encoding: Encoding) -> ServerCapabilities {
    ServerCapabilities {
        position_encoding: encoding.kind(),
        text_document_sync: TextDocumentSyncOptions {
            open_close: true,
            change: TextDocumentSyncKind::FULL,
            save: true,
        },
        hover_provider: true,
        code_action_provider: CodeActionOptions {
            code_action_kinds: vec![action_kind::QUICKFIX, action_kind::FIX_ALL],
            resolve_provider: false,
        },
    }
}

/// The server's state.
struct Server<'c> {
    connection: &'c Connection,
    encoding: Encoding,
    documents: Documents,
    /// Documents changed since they were last linted, with when to lint them.
    due: HashMap<Uri, Instant>,
    /// The last configuration error shown per document, so it is shown once.
    config_errors: HashMap<Uri, String>,
}

impl Server<'_> {
    fn serve(&mut self) -> Result<(), String> {
        loop {
            let next = self.due.values().min().copied();
            let message = match next {
                Some(at) => {
                    match self
                        .connection
                        .receiver
                        .recv_timeout(at.saturating_duration_since(Instant::now()))
                    {
                        Ok(message) => Some(message),
                        Err(RecvTimeoutError::Timeout) => None,
                        Err(RecvTimeoutError::Disconnected) => return Ok(()),
                    }
                }
                None => match self.connection.receiver.recv() {
                    Ok(message) => Some(message),
                    Err(_) => return Ok(()),
                },
            };
            match message {
                None => self.lint_due(),
                Some(Message::Request(request)) => {
                    if self
                        .connection
                        .handle_shutdown(&request)
                        .map_err(|e| e.to_string())?
                    {
                        return Ok(());
                    }
                    self.request(request);
                }
                Some(Message::Notification(notification)) => self.notification(notification),
                Some(Message::Response(_)) => {}
            }
        }
    }

    fn send(&self, message: Message) {
        // The client went away: the receive loop ends on its own.
        let _ = self.connection.sender.send(message);
    }

    fn notify(&self, method: &str, params: impl Serialize) {
        self.send(Message::Notification(Notification::new(
            method.to_owned(),
            params,
        )));
    }

    fn lint_due(&mut self) {
        let now = Instant::now();
        let ready: Vec<Uri> = self
            .due
            .iter()
            .filter(|(_, at)| **at <= now)
            .map(|(uri, _)| uri.clone())
            .collect();
        for uri in ready {
            self.due.remove(&uri);
            self.publish(&uri);
        }
    }

    /// Lints a document and publishes its diagnostics.
    fn publish(&mut self, uri: &Uri) {
        let Some(linted) = self.documents.lint(uri) else {
            return;
        };
        let Some(doc) = self.documents.get(uri) else {
            return;
        };
        let index = LineIndex::new(&doc.text, self.encoding);
        let diagnostics = linted
            .report
            .iter()
            .flat_map(|r| &r.findings)
            .map(|f| convert::diagnostic(&index, f))
            .collect();
        let version = Some(doc.version);
        self.notify(
            method::PUBLISH_DIAGNOSTICS,
            PublishDiagnosticsParams {
                uri: uri.clone(),
                diagnostics,
                version,
            },
        );
        match linted.config_error {
            Some(error) if self.config_errors.get(uri) != Some(&error) => {
                self.notify(
                    method::SHOW_MESSAGE,
                    ShowMessageParams {
                        typ: MessageType::WARNING,
                        message: format!("ozcheck: the defaults are used: {error}"),
                    },
                );
                self.config_errors.insert(uri.clone(), error);
            }
            Some(_) => {}
            None => {
                self.config_errors.remove(uri);
            }
        }
    }

    /// Lints a document and the other open documents of its plugin (an agent's change can
    /// change a routine's findings).
    fn publish_plugin(&mut self, uri: &Uri) {
        for other in self.documents.same_plugin(uri) {
            self.due.remove(&other);
            self.publish(&other);
        }
    }

    fn notification(&mut self, notification: Notification) {
        match notification.method.as_str() {
            method::DID_OPEN => {
                if let Ok(params) =
                    notification.extract::<DidOpenTextDocumentParams>(method::DID_OPEN)
                {
                    let doc = params.text_document;
                    if self
                        .documents
                        .open(doc.uri.clone(), doc.text, doc.version)
                        .is_some()
                    {
                        self.publish_plugin(&doc.uri);
                    }
                }
            }
            method::DID_CHANGE => {
                if let Ok(params) =
                    notification.extract::<DidChangeTextDocumentParams>(method::DID_CHANGE)
                {
                    // Full synchronisation: the last change holds the whole text.
                    if let Some(change) = params.content_changes.into_iter().last() {
                        let uri = params.text_document.uri;
                        self.documents
                            .change(&uri, change.text, params.text_document.version);
                        for other in self.documents.same_plugin(&uri) {
                            self.due.insert(other, Instant::now() + DEBOUNCE);
                        }
                    }
                }
            }
            method::DID_SAVE => {
                if let Ok(params) =
                    notification.extract::<DidSaveTextDocumentParams>(method::DID_SAVE)
                {
                    self.publish_plugin(&params.text_document.uri);
                }
            }
            method::DID_CLOSE => {
                if let Ok(params) =
                    notification.extract::<DidCloseTextDocumentParams>(method::DID_CLOSE)
                {
                    let uri = params.text_document.uri;
                    self.documents.close(&uri);
                    self.due.remove(&uri);
                    self.notify(
                        method::PUBLISH_DIAGNOSTICS,
                        PublishDiagnosticsParams {
                            uri,
                            diagnostics: Vec::new(),
                            version: None,
                        },
                    );
                }
            }
            _ => {}
        }
    }

    fn request(&mut self, request: Request) {
        let id = request.id.clone();
        let result = match request.method.as_str() {
            method::HOVER => request
                .extract::<HoverParams>(method::HOVER)
                .map_err(|e| format!("{e:?}"))
                .map(|(_, params)| {
                    serde_json::to_value(actions::hover(&self.documents, self.encoding, &params))
                }),
            method::CODE_ACTION => request
                .extract::<CodeActionParams>(method::CODE_ACTION)
                .map_err(|e| format!("{e:?}"))
                .map(|(_, params)| {
                    serde_json::to_value(actions::code_actions(
                        &self.documents,
                        self.encoding,
                        &params,
                    ))
                }),
            _ => {
                self.send(Message::Response(Response::new_err(
                    id,
                    lsp_server::ErrorCode::MethodNotFound as i32,
                    format!("ozcheck server does not handle {}", request.method),
                )));
                return;
            }
        };
        let response = match result {
            Ok(Ok(value)) => Response::new_ok(id, value),
            Ok(Err(e)) => Response::new_err(
                id,
                lsp_server::ErrorCode::InternalError as i32,
                e.to_string(),
            ),
            Err(e) => Response::new_err(id, lsp_server::ErrorCode::InvalidParams as i32, e),
        };
        self.send(Message::Response(response));
    }
}
