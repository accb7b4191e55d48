//! Finding the files to lint: the paths given, the plugin files under folders, the plugin's agent
//! files that cross-file rules need as context, and `ozcheck.toml` in the folders above. This is
//! the lint's only file-system access.
//!
//! A folder contributes the YAML files that sit in an `agents/`, `flows/` or `routines/` folder
//! below it, and those beside such folders (a plugin's top), and nothing else: a repository
//! holds other YAML (CI workflows, test scenarios) that is no plugin file and must not be read as
//! one. A file named on the command line is linted
//! whatever its folder, its kind told from its keys.

use std::collections::BTreeSet;
use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::{Input, MAX_FILE_BYTES, PluginContext};

/// Folders skipped when walking: build output and dependencies, never plugin files.
const SKIPPED_DIRS: &[&str] = &["target", "node_modules"];

/// Deepest folder nesting walked.
const MAX_WALK_DEPTH: usize = 32;

/// The files to lint for `paths`, the context they need, and what went wrong with paths on
/// the way.
#[derive(Debug, Default)]
pub struct Collected {
    /// The files to lint, in the order of the paths, each folder's files sorted.
    pub targets: Vec<Input>,
    /// The plugins' agents that are not targets.
    pub context: PluginContext,
    /// One line per path that could not be read or held nothing to lint, in path order.
    pub problems: Vec<PathProblem>,
}

/// Why a path given contributed nothing (or not everything) to the lint.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PathProblem {
    /// The path, or a file or folder under it, could not be read (it does not exist, say).
    Unreadable(String),
    /// A folder with no agent, flow or routine file under it.
    NothingToLint(String),
}

impl std::fmt::Display for PathProblem {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PathProblem::Unreadable(message) => f.write_str(message),
            PathProblem::NothingToLint(path) => write!(
                f,
                "{path}: no agent, flow or routine file to lint (YAML under agents/, flows/ or \
                 routines/); pass --allow-empty to accept that"
            ),
        }
    }
}

/// The files to lint for `paths` and the context they need; the first path that cannot be
/// read, or a folder with nothing to lint, is an error (what a caller that needs everything
/// wants; the command line uses [`collect_all`], which goes on past such paths).
pub fn collect(paths: &[PathBuf]) -> io::Result<(Vec<Input>, PluginContext)> {
    let collected = collect_all(paths);
    if let Some(PathProblem::Unreadable(message)) = collected.problems.first() {
        return Err(io::Error::other(message.clone()));
    }
    Ok((collected.targets, collected.context))
}

/// The files to lint for `paths` and the context they need. A folder contributes every
/// `.yaml`/`.yml` file in an `agents/`, `flows/` or `routines/` folder under it or beside one
/// (hidden folders skipped); a file named is linted even when its kind must be told from its
/// content. A path that cannot be read, and a folder with no plugin file, are recorded in
/// [`Collected::problems`] and the other paths are still collected, as ruff goes on past a
/// missing path.
pub fn collect_all(paths: &[PathBuf]) -> Collected {
    let mut collected = Collected::default();
    let mut seen = BTreeSet::new();
    for path in paths {
        let meta = match fs::metadata(path) {
            Ok(meta) => meta,
            Err(e) => {
                collected
                    .problems
                    .push(PathProblem::Unreadable(format!("{}: {e}", path.display())));
                continue;
            }
        };
        if !meta.is_dir() {
            if seen.insert(path.clone()) {
                match read(path, true) {
                    Ok(input) => collected.targets.push(input),
                    Err(e) => collected
                        .problems
                        .push(PathProblem::Unreadable(e.to_string())),
                }
            }
            continue;
        }
        let mut files = Vec::new();
        if let Err(e) = walk(path, 0, &mut files) {
            collected
                .problems
                .push(PathProblem::Unreadable(format!("{}: {e}", path.display())));
        }
        if files.is_empty() {
            collected
                .problems
                .push(PathProblem::NothingToLint(path.display().to_string()));
        }
        files.sort();
        for file in files {
            if seen.insert(file.clone()) {
                match read(&file, false) {
                    Ok(input) => collected.targets.push(input),
                    Err(e) => collected
                        .problems
                        .push(PathProblem::Unreadable(e.to_string())),
                }
            }
        }
    }
    collected.context = plugin_context(&collected.targets, &seen);
    collected
}

/// The agents of the targets' plugins that are not targets themselves.
fn plugin_context(targets: &[Input], seen: &BTreeSet<PathBuf>) -> PluginContext {
    let mut context = PluginContext {
        file_exists: Some(disk_file_exists()),
        ..PluginContext::default()
    };
    let mut roots = BTreeSet::new();
    for target in targets {
        if let Some(root) = plugin_root(Path::new(&target.path)) {
            roots.insert(root);
        }
    }
    for root in roots {
        let agents = root.join("agents");
        let Ok(entries) = fs::read_dir(&agents) else {
            continue;
        };
        context.agents_complete = true;
        let mut files: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| is_yaml(p) && p.is_file())
            .collect();
        files.sort();
        for file in files {
            // An agent that cannot be read is left out of the context; rules that need every
            // agent then stay quiet only if it was a target, which reports it.
            if !seen.contains(&file)
                && let Ok(input) = read(&file, false)
            {
                context.files.push(input);
            }
        }
    }
    context
}

/// The name of the configuration file.
pub const CONFIG_FILE: &str = "ozcheck.toml";

/// The nearest `ozcheck.toml` in `start` (a folder, or a file's folder) or a folder above it, as
/// ruff and zizmor find theirs. A relative `start` is taken from the current folder.
pub fn find_config(start: &Path) -> Option<PathBuf> {
    let start = if start.is_dir() {
        start.to_path_buf()
    } else {
        start.parent().map_or_else(PathBuf::new, Path::to_path_buf)
    };
    let start = if start.as_os_str().is_empty() {
        PathBuf::from(".")
    } else {
        start
    };
    let absolute = lexical(&std::path::absolute(&start).unwrap_or(start));
    absolute
        .ancestors()
        .map(|dir| dir.join(CONFIG_FILE))
        .find(|candidate| candidate.is_file())
}

/// `path` with `.` and `a/..` taken out, so that the folders above `x/../y` are those above
/// `y`, not `x` (the file system is not asked: a link is taken as a plain folder).
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                if !out.pop() {
                    out.push(part);
                }
            }
            other => out.push(other),
        }
    }
    out
}

/// Reads the configuration file at `path`; an unreadable or invalid one is an error that names
/// the file.
pub fn read_config(path: &Path) -> Result<crate::Config, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    crate::Config::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The configuration that applies at `start` ([`find_config`]), or the defaults when there is
/// none. The lint (per file, through [`Configs`]), `ozcheck filter` and the language server all
/// find their configuration through [`find_config`], so one file gets the same configuration
/// from each.
pub fn nearest_config(start: &Path) -> Result<crate::Config, String> {
    find_config(start).map_or_else(|| Ok(crate::Config::default()), |path| read_config(&path))
}

/// Where each file's configuration comes from.
#[derive(Clone, Debug)]
pub enum ConfigSource {
    /// The nearest `ozcheck.toml` above each file ([`find_config`]).
    Nearest,
    /// This file for every file (`--config`).
    File(PathBuf),
    /// The defaults for every file (`--isolated`).
    Defaults,
}

/// The configuration of each file, each `ozcheck.toml` read once however many files it
/// governs, and each folder's lookup done once.
#[derive(Debug)]
pub struct Configs {
    source: ConfigSource,
    /// The configuration files read, by path; index 0 is the defaults.
    loaded: Vec<crate::Config>,
    by_path: std::collections::HashMap<PathBuf, usize>,
    /// The index in `loaded` of each folder's configuration.
    by_dir: std::collections::HashMap<PathBuf, usize>,
}

impl Configs {
    /// A resolver for `source`; a `--config` file is read now, so that an error in it is
    /// reported before anything is linted.
    pub fn new(source: ConfigSource) -> Result<Self, String> {
        let mut configs = Self {
            source,
            loaded: vec![crate::Config::default()],
            by_path: std::collections::HashMap::new(),
            by_dir: std::collections::HashMap::new(),
        };
        if let ConfigSource::File(path) = &configs.source {
            let path = path.clone();
            configs.load(&path)?;
        }
        Ok(configs)
    }

    /// The index of the configuration of the file at `path` (its folder need not exist: a
    /// `--stdin-filename` may name a file that is not on disk).
    pub fn index_for(&mut self, path: &Path) -> Result<usize, String> {
        match &self.source {
            ConfigSource::Defaults => Ok(0),
            ConfigSource::File(file) => {
                let file = file.clone();
                self.load(&file)
            }
            ConfigSource::Nearest => {
                let dir = path.parent().map_or_else(PathBuf::new, Path::to_path_buf);
                if let Some(&i) = self.by_dir.get(&dir) {
                    return Ok(i);
                }
                let i = match find_config(path) {
                    Some(config) => self.load(&config)?,
                    None => 0,
                };
                self.by_dir.insert(dir, i);
                Ok(i)
            }
        }
    }

    /// The configuration at an index from [`Configs::index_for`].
    pub fn get(&self, index: usize) -> &crate::Config {
        &self.loaded[index.min(self.loaded.len() - 1)]
    }

    fn load(&mut self, path: &Path) -> Result<usize, String> {
        let key = std::path::absolute(path).unwrap_or_else(|_| path.to_path_buf());
        if let Some(&i) = self.by_path.get(&key) {
            return Ok(i);
        }
        self.loaded.push(read_config(path)?);
        let i = self.loaded.len() - 1;
        self.by_path.insert(key, i);
        Ok(i)
    }
}

/// Asks the disk whether a file exists (what the command line passes to the lint).
pub fn disk_file_exists() -> crate::FileExists {
    std::sync::Arc::new(|path: &Path| path.is_file())
}

/// Reads one file, refusing to load more than the lint would read.
pub fn read(path: &Path, explicit: bool) -> io::Result<Input> {
    let display = path.to_string_lossy().replace('\\', "/");
    let display = display.strip_prefix("./").unwrap_or(&display).to_owned();
    let meta = fs::metadata(path)?;
    if meta.len() > MAX_FILE_BYTES as u64 {
        // Keep the read bounded; the lint reports the size as `invalid-yaml`.
        let mut input = Input::from_text(display, String::new(), explicit);
        input.too_large = true;
        return Ok(input);
    }
    let bytes = fs::read(path).map_err(|e| io::Error::new(e.kind(), format!("{display}: {e}")))?;
    Ok(Input::from_bytes(display, &bytes, explicit))
}

fn is_yaml(path: &Path) -> bool {
    path.extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("yaml") || e.eq_ignore_ascii_case("yml"))
}

/// Whether a folder is a plugin folder: it has an `agents/`, `flows/` or `routines/` folder.
fn is_plugin_folder(dir: &Path) -> bool {
    ["agents", "flows", "routines"]
        .iter()
        .any(|kind| dir.join(kind).is_dir())
}

fn walk(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) -> io::Result<()> {
    if depth > MAX_WALK_DEPTH {
        return Ok(());
    }
    // YAML beside a plugin's kind folders is the plugin's too (the documents show a routine in
    // `pr-review.yaml` at a plugin's top); its kind is told from its keys.
    let plugin_folder = is_plugin_folder(dir);
    for entry in fs::read_dir(dir)? {
        let entry = entry?;
        let path = entry.path();
        let name = entry.file_name();
        let name = name.to_string_lossy();
        // Symbolic links to folders are not followed, so a link cycle cannot loop the walk.
        let file_type = entry.file_type()?;
        if file_type.is_dir() {
            if !name.starts_with('.') && !SKIPPED_DIRS.contains(&name.as_ref()) {
                walk(&path, depth + 1, out)?;
            }
        } else if is_yaml(&path)
            && !name.starts_with('.')
            && (plugin_folder || plugin_root(&path).is_some())
            && path.is_file()
        {
            out.push(path);
        }
    }
    Ok(())
}

/// The plugin folder of a file: the parent of its `agents/`, `flows/` or `routines/` folder.
fn plugin_root(file: &Path) -> Option<PathBuf> {
    let parent = file.parent()?;
    let name = parent.file_name()?.to_str()?;
    if matches!(name, "agents" | "flows" | "routines") {
        Some(
            parent
                .parent()
                .map_or_else(|| PathBuf::from("."), Path::to_path_buf),
        )
    } else {
        None
    }
}
