//! `ozcheck server`: a language server over standard input and output (LSP 3.17, over the
//! bounded transport of [`transport`] and the few protocol types of [`protocol`]).
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
//! microseconds on a plugin file, so nothing needs cancelling. Its memory is bounded by the
//! transport's limits on a message and by [`documents`]' limits on what stays open.

mod actions;
mod convert;
mod documents;
mod protocol;
mod transport;

use std::collections::HashMap;
use std::hash::{Hash, Hasher};
use std::io::{Read, Write};
use std::time::{Duration, Instant};

use crossbeam_channel::{Receiver, RecvTimeoutError, Sender};
use serde::Serialize;
use serde_json::value::RawValue;

use protocol::{
    CodeActionOptions, CodeActionParams, DidChangeTextDocumentParams, DidCloseTextDocumentParams,
    DidOpenTextDocumentParams, DidSaveTextDocumentParams, HoverParams, InitializeParams,
    InitializeResult, MessageType, PublishDiagnosticsParams, ServerCapabilities, ServerInfo,
    ShowMessageParams, TextDocumentSyncKind, TextDocumentSyncOptions, Uri, action_kind, method,
};

use convert::{Encoding, LineIndex};
use documents::{Documents, Refused};
use transport::{Incoming, Params, Transport, code};

pub use documents::{MAX_OPEN_BYTES, MAX_OPEN_DOCUMENTS, MAX_URI};
pub use transport::{MAX_BODY, MAX_HEADER_LINE, MAX_HEADERS};

/// How many characters of a refused over-long URI its warning shows.
const URI_SHOWN: usize = 80;

/// How long typing must pause before a changed document is linted again.
pub const DEBOUNCE: Duration = Duration::from_millis(150);

/// Runs the server over standard input and output until the client says `exit` or closes the
/// connection.
pub fn run() -> Result<(), String> {
    run_on(std::io::stdin(), std::io::stdout())
}

/// Runs the server over any byte streams (the fuzz target feeds it raw bytes). `Err` says why
/// the input was given up: framing that cannot be followed, or an input that ended inside a
/// message.
pub fn run_on(
    input: impl Read + Send + 'static,
    output: impl Write + Send + 'static,
) -> Result<(), String> {
    let transport = Transport::spawn(input, output).map_err(|e| e.to_string())?;
    serve(&transport.incoming, transport.outgoing.clone());
    transport.join()
}

/// Answers `initialize`, then handles messages until `exit` or the end of the input.
fn serve(incoming: &Receiver<Incoming>, outgoing: Sender<String>) {
    let Some((id, params)) = initialize_start(incoming, &outgoing) else {
        return;
    };
    let params: InitializeParams = params.parse().unwrap_or_default();
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
    let _ = outgoing.send(transport::ok_response(&id, result));
    let mut server = Server {
        incoming,
        outgoing,
        encoding,
        documents: Documents::default(),
        due: HashMap::new(),
        config_errors: HashMap::new(),
        published: HashMap::new(),
        shut_down: false,
    };
    server.serve();
}

/// Waits for `initialize`, answering other requests with an error; `None` when the client
/// leaves first.
fn initialize_start(
    incoming: &Receiver<Incoming>,
    outgoing: &Sender<String>,
) -> Option<(Box<RawValue>, Params)> {
    loop {
        match incoming.recv().ok()? {
            Incoming::Request { id, method, params } if method == "initialize" => {
                return Some((id, params));
            }
            Incoming::Request { id, .. } => {
                let _ = outgoing.send(transport::error_response(
                    Some(&id),
                    code::SERVER_NOT_INITIALIZED,
                    "the server is not initialized",
                ));
            }
            Incoming::Notification { method, .. } if method == "exit" => return None,
            Incoming::Notification { .. } => {}
        }
    }
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
    incoming: &'c Receiver<Incoming>,
    outgoing: Sender<String>,
    encoding: Encoding,
    documents: Documents,
    /// Documents changed since they were last linted, with when to lint them.
    due: HashMap<Uri, Instant>,
    /// The last configuration error shown per document, so it is shown once.
    config_errors: HashMap<Uri, String>,
    /// A hash of the diagnostics (and version) last published per open document, so that
    /// linting a document again publishes nothing when its diagnostics did not change.
    published: HashMap<Uri, u64>,
    /// Whether `shutdown` was asked: requests after it are refused.
    shut_down: bool,
}

impl Server<'_> {
    /// Handles messages until `exit` or the end of the input.
    fn serve(&mut self) {
        loop {
            let next = self.due.values().min().copied();
            let message = match next {
                Some(at) => match self
                    .incoming
                    .recv_timeout(at.saturating_duration_since(Instant::now()))
                {
                    Ok(message) => Some(message),
                    Err(RecvTimeoutError::Timeout) => None,
                    Err(RecvTimeoutError::Disconnected) => return,
                },
                None => match self.incoming.recv() {
                    Ok(message) => Some(message),
                    Err(_) => return,
                },
            };
            match message {
                None => self.lint_due(),
                Some(Incoming::Request { id, method, params }) => {
                    self.request(&id, &method, &params);
                }
                Some(Incoming::Notification { method, .. }) if method == "exit" => return,
                Some(Incoming::Notification { method, params }) => {
                    self.notification(&method, &params);
                }
            }
        }
    }

    fn send(&self, body: String) {
        // The client went away: the receive loop ends on its own.
        let _ = self.outgoing.send(body);
    }

    fn notify(&self, method: &str, params: impl Serialize) {
        self.send(transport::notification(method, params));
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
        let body = transport::notification(
            method::PUBLISH_DIAGNOSTICS,
            PublishDiagnosticsParams {
                uri: uri.clone(),
                diagnostics,
                version,
            },
        );
        let hash = {
            let mut hasher = std::hash::DefaultHasher::new();
            body.hash(&mut hasher);
            hasher.finish()
        };
        if self.published.insert(uri.clone(), hash) != Some(hash) {
            self.send(body);
        }
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

    /// Lints a document, and the other open documents of its plugin when `others` (the
    /// document changed what they read).
    fn publish_affected(&mut self, uri: &Uri, others: bool) {
        if others {
            self.publish_plugin(uri);
        } else {
            self.due.remove(uri);
            self.publish(uri);
        }
    }

    fn notification(&mut self, method: &str, params: &Params) {
        match method {
            method::DID_OPEN => {
                if let Ok(params) = params.parse::<DidOpenTextDocumentParams>() {
                    let doc = params.text_document;
                    match self.documents.open(doc.uri.clone(), doc.text, doc.version) {
                        Ok(others) => self.publish_affected(&doc.uri, others),
                        Err(refused) => self.refused(&doc.uri, &refused),
                    }
                }
            }
            method::DID_CHANGE => {
                if let Ok(params) = params.parse::<DidChangeTextDocumentParams>() {
                    // Full synchronisation: the last change holds the whole text (and is the
                    // only one the parameters keep).
                    if let Some(change) = params.content_changes {
                        let uri = params.text_document.uri;
                        let changed =
                            self.documents
                                .change(&uri, change.text, params.text_document.version);
                        let due = Instant::now() + DEBOUNCE;
                        match changed {
                            Err(refused) => self.refused(&uri, &refused),
                            Ok(true) => {
                                for other in self.documents.same_plugin(&uri) {
                                    self.due.insert(other, due);
                                }
                            }
                            Ok(false) => {
                                if self.documents.get(&uri).is_some() {
                                    self.due.insert(uri, due);
                                }
                            }
                        }
                    }
                }
            }
            method::DID_SAVE => {
                if let Ok(params) = params.parse::<DidSaveTextDocumentParams>() {
                    self.publish_plugin(&params.text_document.uri);
                }
            }
            method::DID_CLOSE => {
                if let Ok(params) = params.parse::<DidCloseTextDocumentParams>() {
                    let uri = params.text_document.uri;
                    let (was_open, plugin) = self.documents.close(&uri);
                    if was_open || self.published.contains_key(&uri) {
                        self.forget(uri);
                    }
                    // The plugin's other files read the agent's text on disk again.
                    for other in plugin
                        .map(|root| self.documents.in_plugin(&root))
                        .unwrap_or_default()
                    {
                        self.due.remove(&other);
                        self.publish(&other);
                    }
                }
            }
            _ => {}
        }
    }

    /// Drops what the server holds for a document that is not open, and clears its
    /// diagnostics.
    fn forget(&mut self, uri: Uri) {
        self.due.remove(&uri);
        self.config_errors.remove(&uri);
        self.published.remove(&uri);
        self.notify(
            method::PUBLISH_DIAGNOSTICS,
            PublishDiagnosticsParams {
                uri,
                diagnostics: Vec::new(),
                version: None,
            },
        );
    }

    /// Says why a document is not linted (it is not kept open).
    fn refused(&mut self, uri: &Uri, refused: &Refused) {
        match refused {
            Refused::NotAFile => {}
            Refused::OverLimit(why) => {
                self.notify(
                    method::SHOW_MESSAGE,
                    ShowMessageParams {
                        typ: MessageType::WARNING,
                        message: format!("ozcheck: {} is not linted: {why}", uri.as_str()),
                    },
                );
                self.forget(uri.clone());
            }
            // Not opened, so nothing is cleared; the message shows the URI's start only, so
            // that no answer holds a copy of it.
            Refused::UriTooLong(length) => {
                let head: String = uri.as_str().chars().take(URI_SHOWN).collect();
                self.notify(
                    method::SHOW_MESSAGE,
                    ShowMessageParams {
                        typ: MessageType::WARNING,
                        message: format!(
                            "ozcheck: {head}… is not linted: its URI is {length} bytes long, \
                             over the {MAX_URI} the server accepts"
                        ),
                    },
                );
            }
        }
    }

    fn request(&mut self, id: &RawValue, method: &str, params: &Params) {
        if self.shut_down {
            self.send(transport::error_response(
                Some(id),
                code::INVALID_REQUEST,
                "the server is shutting down",
            ));
            return;
        }
        let result = match method {
            "shutdown" => {
                self.shut_down = true;
                Ok(Ok(serde_json::Value::Null))
            }
            method::HOVER => params.parse::<HoverParams>().map(|params| {
                serde_json::to_value(actions::hover(&self.documents, self.encoding, &params))
            }),
            method::CODE_ACTION => params.parse::<CodeActionParams>().map(|params| {
                serde_json::to_value(actions::code_actions(
                    &self.documents,
                    self.encoding,
                    &params,
                ))
            }),
            _ => {
                self.send(transport::error_response(
                    Some(id),
                    code::METHOD_NOT_FOUND,
                    &format!("ozcheck server does not handle {method}"),
                ));
                return;
            }
        };
        let body = match result {
            Ok(Ok(value)) => transport::ok_response(id, value),
            Ok(Err(e)) => transport::error_response(Some(id), code::INTERNAL_ERROR, &e.to_string()),
            Err(e) => transport::error_response(Some(id), code::INVALID_PARAMS, &e.to_string()),
        };
        self.send(body);
    }
}
