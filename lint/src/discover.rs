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

/// The files to lint for `paths` and the context they need. A folder contributes every
/// `.yaml`/`.yml` file in an `agents/`, `flows/` or `routines/` folder under it or beside one
/// (hidden folders skipped); a file named is linted even when its kind must be told from its
/// content.
pub fn collect(paths: &[PathBuf]) -> io::Result<(Vec<Input>, PluginContext)> {
    let mut targets = Vec::new();
    let mut seen = BTreeSet::new();
    for path in paths {
        let meta = fs::metadata(path)
            .map_err(|e| io::Error::new(e.kind(), format!("{}: {e}", path.display())))?;
        if meta.is_dir() {
            let mut files = Vec::new();
            walk(path, 0, &mut files)?;
            files.sort();
            for file in files {
                if seen.insert(file.clone()) {
                    targets.push(read(&file, false)?);
                }
            }
        } else if seen.insert(path.clone()) {
            targets.push(read(path, true)?);
        }
    }
    let mut context = PluginContext {
        file_exists: Some(disk_file_exists()),
        ..PluginContext::default()
    };
    let mut roots = BTreeSet::new();
    for target in &targets {
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
            if !seen.contains(&file) {
                context.files.push(read(&file, false)?);
            }
        }
    }
    Ok((targets, context))
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
    let absolute = std::path::absolute(&start).unwrap_or(start);
    absolute
        .ancestors()
        .map(|dir| dir.join(CONFIG_FILE))
        .find(|candidate| candidate.is_file())
}

/// Reads the configuration file at `path`; an unreadable or invalid one is an error that names
/// the file.
pub fn read_config(path: &Path) -> Result<crate::Config, String> {
    let text = fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
    crate::Config::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// The configuration that applies at `start` ([`find_config`]), or the defaults when there is
/// none.
pub fn nearest_config(start: &Path) -> Result<crate::Config, String> {
    find_config(start).map_or_else(|| Ok(crate::Config::default()), |path| read_config(&path))
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
