//! What `ozcheck lint` reads: the configuration (named, or the nearest `ozcheck.toml` above the
//! first path) and the files, from disk or standard input.

use std::io::Read;
use std::path::{Path, PathBuf};

use ozcheck_lint::{Config, Input, PluginContext, discover};

use super::LintArgs;

/// The path standard input is reported under when `--stdin-filename` does not name it.
const STDIN_NAME: &str = "-";

/// The configuration: `--config`, else the nearest `ozcheck.toml` in the folder of the first
/// path (or of `--stdin-filename`, or the current folder) or above it, else the defaults.
pub fn config(args: &LintArgs) -> Result<Config, String> {
    if let Some(path) = &args.config {
        return discover::read_config(path);
    }
    let start = args
        .stdin_filename
        .as_deref()
        .map(PathBuf::from)
        .or_else(|| args.paths.iter().find(|p| p.as_os_str() != "-").cloned())
        .unwrap_or_else(|| PathBuf::from("."));
    discover::nearest_config(&start)
}

/// The files to lint, their plugin context, and whether they came from standard input.
pub fn collect(args: &LintArgs) -> Result<(Vec<Input>, PluginContext, bool), String> {
    let reads_stdin = args.paths.iter().any(|p| p.as_os_str() == "-")
        || (args.paths.is_empty() && args.stdin_filename.is_some());
    if reads_stdin {
        if args.paths.len() > 1 {
            return Err("`-` (standard input) cannot be combined with other paths".to_owned());
        }
        let (targets, context) =
            stdin_input(args.stdin_filename.as_deref()).map_err(|e| e.to_string())?;
        return Ok((targets, context, true));
    }
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let (targets, context) = discover::collect(&paths).map_err(|e| e.to_string())?;
    Ok((targets, context, false))
}

/// The input from standard input and the plugin context of the path it stands for.
fn stdin_input(name: Option<&str>) -> std::io::Result<(Vec<Input>, PluginContext)> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(ozcheck_lint::MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    let mut input = Input::from_bytes(name.unwrap_or(STDIN_NAME), &bytes, true);
    input.too_large = bytes.len() > ozcheck_lint::MAX_FILE_BYTES;
    input.anonymous = name.is_none();
    // The agents of the plugin the named file belongs to, if it exists on disk.
    let mut context = PluginContext {
        file_exists: Some(discover::disk_file_exists()),
        ..PluginContext::default()
    };
    let path = Path::new(name.unwrap_or(""));
    if let Some(dir) = path.parent()
        && matches!(
            dir.file_name().and_then(|n| n.to_str()),
            Some("routines" | "flows" | "agents")
        )
        && let Some(root) = dir.parent()
        && root.join("agents").is_dir()
    {
        let (files, _) = discover::collect(&[root.join("agents")])?;
        // The buffer replaces the file of the same path on disk.
        context.files = files.into_iter().filter(|f| f.path != input.path).collect();
        context.agents_complete = true;
    }
    Ok((vec![input], context))
}
