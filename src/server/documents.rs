//! The open documents and how one is linted: with the `ozcheck.toml` found above it, the
//! plugin's agents read from disk (or from their open buffers) for cross-file rules, and the
//! disk asked whether the files it points at exist.
//!
//! What stays open is bounded, so that a client cannot grow the server's memory by opening
//! documents: at most [`MAX_OPEN_DOCUMENTS`] of them, holding at most [`MAX_OPEN_BYTES`] of
//! text, URIs and paths together. A document that would pass either bound is not kept (the
//! server says so and lints it no more until others are closed). A URI longer than
//! [`MAX_URI`] is refused outright: nothing the server keeps or sends holds a copy of it.
//!
//! A plugin's other files read an agent's text only when the agent is a file on disk in the
//! plugin's `agents/` folder (an open buffer then replaces the disk's text). Opening, changing
//! or closing a document reports whether it changed what the plugin's other files read, so the
//! server lints them again only then.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use ozcheck_lint::{Config, FileKind, FileReport, Input, PluginContext, discover};

use super::convert;
use super::protocol::Uri;

/// The most documents open at once.
pub const MAX_OPEN_DOCUMENTS: usize = 1_000;

/// The most bytes the open documents hold together (texts, URIs and paths): sixteen
/// documents at the lint's 1 MiB limit, or thousands of plugin files.
pub const MAX_OPEN_BYTES: usize = 16 * 1024 * 1024;

/// The longest URI of a document the server opens (in bytes): far over any real path, short
/// enough that what the server keeps and sends for a document stays small.
pub const MAX_URI: usize = 4 * 1024;

/// Why a document is not kept open.
pub enum Refused {
    /// Its URI is not a `file:` URI.
    NotAFile,
    /// Its URI is longer than [`MAX_URI`] bytes (the URI's length).
    UriTooLong(usize),
    /// Keeping it would pass a bound on the open documents (the reason, for the user).
    OverLimit(String),
}

/// One open document.
pub struct Document {
    /// Its path on disk (the lint reports under it and reads its plugin from there).
    pub path: PathBuf,
    /// The editor's text.
    pub text: String,
    /// The editor's version of it.
    pub version: i32,
}

/// The open documents by URI.
#[derive(Default)]
pub struct Documents {
    open: HashMap<Uri, Document>,
    /// The bytes the open documents hold, as [`held`] counts them.
    held: usize,
}

/// The result of linting a document: its report (when it is a plugin file) and a problem with
/// its configuration, if any.
pub struct Linted {
    /// The findings, or `None` for a file that is no agent, flow or routine.
    pub report: Option<FileReport>,
    /// Why `ozcheck.toml` could not be used, if it could not.
    pub config_error: Option<String>,
}

impl Documents {
    /// Opens or replaces a document; `Ok(true)` when this changes what the other files of its
    /// plugin read. When it is refused, an earlier version of it is closed.
    pub fn open(&mut self, uri: Uri, text: String, version: i32) -> Result<bool, Refused> {
        if uri.as_str().len() > MAX_URI {
            return Err(Refused::UriTooLong(uri.as_str().len()));
        }
        let earlier = self.take(&uri).map(|(_, doc)| doc.text);
        let path = convert::uri_to_path(&uri).ok_or(Refused::NotAFile)?;
        let read = read_by_plugin(&path)
            && match earlier {
                Some(earlier) => earlier != text,
                None => !same_as_disk(&path, &text),
            };
        let doc = Document {
            path,
            text,
            version,
        };
        self.keep(uri, doc)?;
        Ok(read)
    }

    /// Replaces a document's text; `Ok(true)` when this changes what the other files of its
    /// plugin read. When the new text is refused, the document is closed.
    pub fn change(&mut self, uri: &Uri, text: String, version: i32) -> Result<bool, Refused> {
        let Some((uri, mut doc)) = self.take(uri) else {
            return Ok(false);
        };
        let read = doc.text != text && read_by_plugin(&doc.path);
        doc.text = text;
        doc.version = version;
        self.keep(uri, doc)?;
        Ok(read)
    }

    /// Closes a document: whether it was open, and the plugin folder whose other files must
    /// be linted again (they read the disk's text of it from now on), if any.
    pub fn close(&mut self, uri: &Uri) -> (bool, Option<PathBuf>) {
        let Some((_, doc)) = self.take(uri) else {
            return (false, None);
        };
        let root = (read_by_plugin(&doc.path) && !same_as_disk(&doc.path, &doc.text))
            .then(|| plugin_root(&doc.path))
            .flatten();
        (true, root)
    }

    fn take(&mut self, uri: &Uri) -> Option<(Uri, Document)> {
        let (uri, doc) = self.open.remove_entry(uri)?;
        self.held -= held(&uri, &doc);
        Some((uri, doc))
    }

    /// Keeps a document that is not open, if the bounds allow.
    fn keep(&mut self, uri: Uri, doc: Document) -> Result<(), Refused> {
        if self.open.len() >= MAX_OPEN_DOCUMENTS {
            return Err(Refused::OverLimit(format!(
                "{MAX_OPEN_DOCUMENTS} documents are open, the most the server keeps"
            )));
        }
        let bytes = held(&uri, &doc);
        if self.held + bytes > MAX_OPEN_BYTES {
            return Err(Refused::OverLimit(format!(
                "the open documents would hold more than {} MiB, the most the server keeps",
                MAX_OPEN_BYTES >> 20
            )));
        }
        self.held += bytes;
        self.open.insert(uri, doc);
        Ok(())
    }

    /// The document of a URI.
    pub fn get(&self, uri: &Uri) -> Option<&Document> {
        self.open.get(uri)
    }

    /// The URIs of the open documents in the same plugin folder as `uri` (itself included).
    pub fn same_plugin(&self, uri: &Uri) -> Vec<Uri> {
        let Some(root) = self.get(uri).and_then(|d| plugin_root(&d.path)) else {
            return vec![uri.clone()];
        };
        self.in_plugin(&root)
    }

    /// The URIs of the open documents in a plugin folder.
    pub fn in_plugin(&self, root: &Path) -> Vec<Uri> {
        self.open
            .iter()
            .filter(|(_, d)| plugin_root(&d.path).as_deref() == Some(root))
            .map(|(u, _)| u.clone())
            .collect()
    }

    /// Lints one document.
    pub fn lint(&self, uri: &Uri) -> Option<Linted> {
        let doc = self.get(uri)?;
        let (config, config_error) = match discover::nearest_config(&doc.path) {
            Ok(config) => (config, None),
            Err(e) => (Config::default(), Some(e)),
        };
        let path = convert::display(&doc.path);
        if !is_plugin_file(&path, &doc.text) {
            return Some(Linted {
                report: None,
                config_error,
            });
        }
        let input = Input::from_text(path.clone(), doc.text.clone(), true);
        let context = self.context(&doc.path, &path);
        let report = ozcheck_lint::lint(&[input], &context, &config)
            .into_iter()
            .find(|r| r.source.path == path);
        Some(Linted {
            report,
            config_error,
        })
    }

    /// The document's text with every safe fix applied (`ozcheck lint --fix` on the buffer),
    /// when that changes it.
    pub fn fixed_text(&self, uri: &Uri) -> Option<String> {
        let doc = self.get(uri)?;
        let config = discover::nearest_config(&doc.path).unwrap_or_default();
        let path = convert::display(&doc.path);
        let input = Input::from_text(path.clone(), doc.text.clone(), true);
        let context = self.context(&doc.path, &path);
        let fixed = ozcheck_lint::fix::fix(&[input], &context, &config);
        fixed
            .into_iter()
            .find(|f| f.report.source.path == path && f.changed())
            .map(|f| f.report.source.text)
    }

    /// The plugin's agents (open buffers before the disk) and the disk's view of other files.
    fn context(&self, file: &Path, display: &str) -> PluginContext {
        let mut context = PluginContext {
            file_exists: Some(discover::disk_file_exists()),
            ..PluginContext::default()
        };
        let Some(root) = plugin_root(file) else {
            return context;
        };
        let agents = root.join("agents");
        if !agents.is_dir() {
            return context;
        }
        context.agents_complete = true;
        let on_disk = discover::collect(&[agents])
            .map(|(files, _)| files)
            .unwrap_or_default();
        // The open buffers by the path the lint shows (one look-up per file on disk, not a
        // scan of every open document for each).
        let buffers: HashMap<String, &Document> = self
            .open
            .values()
            .map(|d| (convert::display(&d.path), d))
            .collect();
        for mut input in on_disk {
            if input.path == display {
                continue;
            }
            if let Some(open) = buffers.get(&input.path) {
                input.text.clone_from(&open.text);
                input.too_large = false;
                input.invalid_utf8_at = None;
            }
            context.files.push(input);
        }
        context
    }
}

/// The bytes a document holds, as the bound on open documents counts them.
fn held(uri: &Uri, doc: &Document) -> usize {
    doc.text.len() + uri.as_str().len() + doc.path.as_os_str().len()
}

/// Whether the other files of a plugin read this file (as `Documents::context` gathers
/// them): a file on disk in the plugin's `agents/` folder. A file that is not on disk is read
/// by none until it is saved (a save lints the whole plugin again).
fn read_by_plugin(path: &Path) -> bool {
    plugin_root(path).is_some()
        && path.parent().and_then(Path::file_name) == Some("agents".as_ref())
        && path.is_file()
}

/// Whether a file's text on disk is `text` (a file over the lint's limit, or unreadable, is
/// taken to differ).
fn same_as_disk(path: &Path, text: &str) -> bool {
    use std::io::Read;
    let Ok(file) = std::fs::File::open(path) else {
        return false;
    };
    let mut disk = Vec::with_capacity(text.len().min(ozcheck_lint::MAX_FILE_BYTES) + 1);
    let limit = ozcheck_lint::MAX_FILE_BYTES as u64 + 1;
    file.take(limit).read_to_end(&mut disk).is_ok() && disk == text.as_bytes()
}

/// The folder above a file's `agents/`, `flows/` or `routines/` folder.
fn plugin_root(file: &Path) -> Option<PathBuf> {
    let dir = file.parent()?;
    let name = dir.file_name()?.to_str()?;
    matches!(name, "agents" | "flows" | "routines").then(|| dir.parent().map(Path::to_path_buf))?
}

/// Whether the lint has something to say about a file: it sits in a kind folder, or its keys
/// tell its kind. Other YAML the editor opens (CI workflows and the like) gets no diagnostics.
fn is_plugin_file(path: &str, text: &str) -> bool {
    if FileKind::from_path(path).is_some() {
        return true;
    }
    // A text over the lint's limit is not parsed to learn its kind (the lint reads no more of
    // a file that size on disk either).
    if text.len() > ozcheck_lint::MAX_FILE_BYTES {
        return false;
    }
    let source = ozcheck_lint::SourceFile::new(path, text);
    ozcheck_lint::yaml::parse(&source)
        .root
        .as_ref()
        .and_then(FileKind::from_content)
        .is_some()
}
