//! ozcheck's plugin lint: agent, flow and routine YAML files, read with exact spans, checked by
//! one rule per file, with findings that point at the exact line and column, also inside the
//! CEL expressions of filters, `when`s and `${{ }}` templates.
//!
//! The library never prints: [`lint`] returns [`FileReport`]s, and [`render`] turns them into
//! text in each output format for the command line to print. [`lint_text`] is the save-time
//! call for one buffer.
//!
//! Untrusted input: files over [`MAX_FILE_BYTES`] are refused before parsing; YAML nesting is
//! bounded by [`yaml::MAX_DEPTH`] and alias expansion by [`yaml::MAX_NODES`]; expressions go
//! through the analyzer, which bounds their size and cost.
#![deny(missing_docs)]

pub mod cel;
pub mod config;
pub mod discover;
pub mod docs;
pub mod finding;
pub mod fix;
pub mod hover;
pub mod model;
pub mod position;
pub mod render;
pub mod rules;
pub mod schema;
pub mod source;
mod suppress;
pub mod yaml;

use std::collections::HashMap;
use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

pub use config::{Config, ConfigError, Level};
pub use finding::{Edit, Finding, Fix, Severity};
pub use model::FileKind;
pub use source::{Position, SourceFile};

use model::{Model, PluginIndex};
use yaml::{Document, YamlProblem};

/// Largest file the lint reads, in bytes.
pub const MAX_FILE_BYTES: usize = 1024 * 1024;

/// A file to lint (or to read for context).
#[derive(Clone, Debug)]
pub struct Input {
    /// Its path, with `/` separators.
    pub path: String,
    /// Its text (invalid UTF-8 replaced; see `invalid_utf8_at`).
    pub text: String,
    /// The byte offset of the first invalid UTF-8 sequence, if any.
    pub invalid_utf8_at: Option<usize>,
    /// Whether the file was named on the command line.
    pub explicit: bool,
    /// Whether the file is larger than [`MAX_FILE_BYTES`] (its text is then not read).
    pub too_large: bool,
    /// Whether the path is a stand-in (standard input without `--stdin-filename`): rules about
    /// the file's name stay quiet.
    pub anonymous: bool,
}

impl Input {
    /// An input from bytes, as read from a file or stdin.
    pub fn from_bytes(path: impl Into<String>, bytes: &[u8], explicit: bool) -> Self {
        let (text, invalid_utf8_at) = match std::str::from_utf8(bytes) {
            Ok(text) => (text.to_owned(), None),
            Err(e) => (
                String::from_utf8_lossy(bytes).into_owned(),
                Some(e.valid_up_to()),
            ),
        };
        Self {
            path: path.into(),
            text,
            invalid_utf8_at,
            explicit,
            too_large: bytes.len() > MAX_FILE_BYTES,
            anonymous: false,
        }
    }

    /// An input from text.
    pub fn from_text(path: impl Into<String>, text: impl Into<String>, explicit: bool) -> Self {
        Self {
            path: path.into(),
            text: text.into(),
            invalid_utf8_at: None,
            explicit,
            too_large: false,
            anonymous: false,
        }
    }
}

/// The findings of one file, sorted by position.
#[derive(Clone, Debug)]
pub struct FileReport {
    /// The file.
    pub source: SourceFile,
    /// What was found.
    pub findings: Vec<Finding>,
}

impl FileReport {
    /// The reported position of a finding.
    pub fn position(&self, finding: &Finding) -> Position {
        self.source.position(&finding.span)
    }
}

/// Whether a file exists, for rules about files a plugin points at (`instructions`). The
/// library does no file-system access of its own here: the caller decides (the command line
/// asks the disk; a save-time host may ask its store; tests ask a list).
pub type FileExists = Arc<dyn Fn(&Path) -> bool + Send + Sync>;

/// What a plugin's files need besides the files being linted.
#[derive(Clone, Default)]
pub struct PluginContext {
    /// Other files of the plugin (its agents), read but not reported on.
    pub files: Vec<Input>,
    /// Whether all of the plugin's agents are among the inputs or context files.
    pub agents_complete: bool,
    /// How to tell whether a file exists; rules that need it stay quiet without it.
    pub file_exists: Option<FileExists>,
    /// Whether `# ozcheck: ignore[…]` comments are disregarded (`--no-ignores`): every
    /// finding is reported and none is called an unused suppression.
    pub no_ignores: bool,
}

impl std::fmt::Debug for PluginContext {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PluginContext")
            .field("files", &self.files)
            .field("agents_complete", &self.agents_complete)
            .field("file_exists", &self.file_exists.is_some())
            .field("no_ignores", &self.no_ignores)
            .finish()
    }
}

struct Parsed {
    source: SourceFile,
    doc: Document,
    kind: Option<FileKind>,
    explicit: bool,
    anonymous: bool,
}

fn parse_input(input: &Input) -> Parsed {
    let source = SourceFile::new(input.path.clone(), input.text.clone());
    let mut doc = Document::default();
    if let Some(at) = input.invalid_utf8_at {
        doc.problems.push(YamlProblem {
            message: format!("the file is not valid UTF-8 (at byte {at})"),
            span: at..at,
        });
    } else if input.too_large || input.text.len() > MAX_FILE_BYTES {
        doc.problems.push(YamlProblem {
            message: format!("the file is larger than {MAX_FILE_BYTES} bytes"),
            span: 0..0,
        });
    } else {
        doc = yaml::parse(&source);
    }
    let kind = FileKind::from_path(&input.path)
        .or_else(|| doc.root.as_ref().and_then(FileKind::from_content));
    Parsed {
        source,
        doc,
        kind,
        explicit: input.explicit,
        anonymous: input.anonymous,
    }
}

/// Maps `f` over `items` on all cores (std threads; no work-stealing pool is needed for
/// independent files of similar size).
fn par_map<T: Sync, R: Send>(items: &[T], f: impl Fn(&T) -> R + Sync) -> Vec<R> {
    let threads = std::thread::available_parallelism()
        .map_or(1, std::num::NonZero::get)
        .min(items.len());
    if threads <= 1 {
        return items.iter().map(f).collect();
    }
    let next = AtomicUsize::new(0);
    let mut results: Vec<(usize, R)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..threads)
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    loop {
                        let i = next.fetch_add(1, Ordering::Relaxed);
                        let Some(item) = items.get(i) else { break };
                        done.push((i, f(item)));
                    }
                    done
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    });
    results.sort_unstable_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, r)| r).collect()
}

/// The plugin folder of a path: what comes before its `agents/`, `flows/` or `routines/`
/// folder (empty for a path without one).
pub(crate) fn plugin_root(path: &str) -> &str {
    let mut parts = path.rsplitn(3, '/');
    let _file = parts.next();
    match (parts.next(), parts.next()) {
        (Some("agents" | "flows" | "routines"), root) => root.unwrap_or(""),
        _ => "",
    }
}

fn file_stem(path: &str) -> &str {
    let name = path.rsplit(['/', '\\']).next().unwrap_or(path);
    name.rsplit_once('.').map_or(name, |(stem, _)| stem)
}

/// Lints `targets` (with the plugin's other files as context) under one configuration and
/// returns one report per target whose kind is known or that was named explicitly.
pub fn lint(targets: &[Input], context: &PluginContext, config: &Config) -> Vec<FileReport> {
    lint_each(targets, context, &vec![config; targets.len()])
}

/// Lints `targets`, each under its own configuration (`configs[i]` for `targets[i]`: the
/// command line finds the nearest `ozcheck.toml` of every file, so that the result does not
/// depend on the order or grouping of the paths given). A target without an entry in
/// `configs` gets the defaults.
pub fn lint_each(
    targets: &[Input],
    context: &PluginContext,
    configs: &[&Config],
) -> Vec<FileReport> {
    let parsed = par_map(targets, parse_input);
    let context_parsed = par_map(&context.files, parse_input);
    // One index of agents per plugin folder, so that a routine only sees its own plugin's
    // agents when several plugins are linted at once.
    let mut plugins: HashMap<&str, PluginIndex> = HashMap::new();
    for p in parsed.iter().chain(&context_parsed) {
        if p.kind == Some(FileKind::Agent)
            && let Model::Agent(agent) = Model::build(p.doc.root.as_ref(), p.kind)
        {
            plugins
                .entry(plugin_root(&p.source.path))
                .or_default()
                .add_agent(&agent, file_stem(&p.source.path));
        }
    }
    for index in plugins.values_mut() {
        index.complete = context.agents_complete;
    }
    let empty = PluginIndex {
        complete: context.agents_complete,
        ..PluginIndex::default()
    };
    let defaults = Config::default();
    let indexed: Vec<(usize, &Parsed)> = parsed.iter().enumerate().collect();
    let reports = par_map(&indexed, |&(i, p)| {
        let plugin = plugins.get(plugin_root(&p.source.path)).unwrap_or(&empty);
        let config = configs.get(i).copied().unwrap_or(&defaults);
        check_parsed(p, plugin, context, config)
    });
    reports.into_iter().flatten().collect()
}

/// Lints one buffer alone (the save-time call): cross-file rules that need the plugin's other
/// files stay quiet.
pub fn lint_text(path: &str, text: &str, config: &Config) -> FileReport {
    let input = Input::from_text(path, text, true);
    let parsed = parse_input(&input);
    let plugin = PluginIndex::default();
    check_parsed(&parsed, &plugin, &PluginContext::default(), config).unwrap_or_else(|| {
        FileReport {
            source: parsed.source.clone(),
            findings: Vec::new(),
        }
    })
}

fn check_parsed(
    p: &Parsed,
    plugin: &PluginIndex,
    context: &PluginContext,
    config: &Config,
) -> Option<FileReport> {
    let file_exists = context.file_exists.as_ref();
    if p.kind.is_none() && !p.explicit && p.doc.problems.is_empty() {
        return None;
    }
    let root = p.doc.root.as_ref();
    let model = Model::build(root, p.kind);
    let schema = match (root, p.kind) {
        (Some(root), Some(kind)) => schema::check(&p.source.text, root, kind),
        // An empty or comment-only plugin file: the schema refuses the null it reads as.
        (None, Some(_)) if p.doc.problems.is_empty() => vec![schema::empty_file()],
        _ => Vec::new(),
    };
    let cx = rules::Context {
        source: &p.source,
        root,
        problems: &p.doc.problems,
        kind: p.kind,
        model: &model,
        schema: &schema,
        plugin,
        plugin_root: FileKind::from_path(&p.source.path).map(|_| plugin_root(&p.source.path)),
        file_exists,
        config,
        explicit: p.explicit,
        anonymous: p.anonymous,
    };
    let mut findings = rules::run(&cx);
    let complete = plugin.complete && file_exists.is_some() && !p.anonymous;
    let about_suppressions = suppress::apply(
        &p.source,
        &mut findings,
        !context.no_ignores,
        complete,
        |id| config.rules.get(id) != Some(&Level::Off),
    );
    findings.extend(about_suppressions);
    findings.retain_mut(|f| {
        match config.rules.get(f.rule) {
            Some(Level::Off) => return false,
            Some(Level::Warning) => f.severity = Severity::Warning,
            Some(Level::Error) => f.severity = Severity::Error,
            None => {}
        }
        true
    });
    findings.sort_by(|a, b| {
        (a.span.start, a.span.end, a.rule).cmp(&(b.span.start, b.span.end, b.rule))
    });
    findings.dedup();
    Some(FileReport {
        source: p.source.clone(),
        findings,
    })
}

/// Whether any finding is at error level (exit code 1).
pub fn has_errors(reports: &[FileReport]) -> bool {
    reports
        .iter()
        .flat_map(|r| &r.findings)
        .any(|f| f.severity == Severity::Error)
}
