//! What `ozcheck lint` reads: the files, from disk or standard input, what went wrong with the
//! paths given, and the configuration of each file (named, none, or the nearest
//! `ozcheck.toml` above it).

use std::io::Read;
use std::path::{Path, PathBuf};

use ozcheck_lint::discover::{self, ConfigSource, Configs, PathProblem};
use ozcheck_lint::{Config, Input, PluginContext};

use super::LintArgs;

/// The path standard input is reported under when `--stdin-filename` does not name it.
const STDIN_NAME: &str = "-";

/// What the paths of the command line gave.
pub struct Inputs {
    /// The files to lint.
    pub targets: Vec<Input>,
    /// Their plugins' other agents.
    pub context: PluginContext,
    /// Whether the one target came from standard input.
    pub from_stdin: bool,
    /// The paths that could not be read or held nothing to lint, one line each.
    pub problems: Vec<String>,
}

/// Each target's configuration: `--config` for all, the defaults for all with `--isolated`,
/// else the nearest `ozcheck.toml` above each file (`--stdin-filename`'s for standard input,
/// the current folder's for an unnamed one). Returns the resolver and one index per target.
pub fn configs(args: &LintArgs, targets: &[Input]) -> Result<(Configs, Vec<usize>), String> {
    let source = if args.isolated {
        ConfigSource::Defaults
    } else if let Some(path) = &args.config {
        ConfigSource::File(path.clone())
    } else {
        ConfigSource::Nearest
    };
    let mut configs = Configs::new(source)?;
    let indices = targets
        .iter()
        .map(|t| {
            let path = if t.anonymous {
                Path::new(".").join(STDIN_NAME)
            } else {
                PathBuf::from(&t.path)
            };
            configs.index_for(&path)
        })
        .collect::<Result<Vec<_>, _>>()?;
    Ok((configs, indices))
}

/// The configurations of the targets, in target order.
pub fn each<'c>(configs: &'c Configs, indices: &[usize]) -> Vec<&'c Config> {
    indices.iter().map(|&i| configs.get(i)).collect()
}

/// The files to lint, their plugin context, and what went wrong with the paths. A folder with
/// nothing to lint is a problem unless `--allow-empty`.
pub fn collect(args: &LintArgs) -> Result<Inputs, String> {
    let mut inputs = collect_paths(args)?;
    inputs.context.no_ignores = args.no_ignores;
    Ok(inputs)
}

fn collect_paths(args: &LintArgs) -> Result<Inputs, String> {
    let reads_stdin = args.paths.iter().any(|p| p.as_os_str() == "-")
        || (args.paths.is_empty() && args.stdin_filename.is_some());
    if reads_stdin {
        if args.paths.len() > 1 {
            return Err("`-` (standard input) cannot be combined with other paths".to_owned());
        }
        let (targets, context) =
            stdin_input(args.stdin_filename.as_deref()).map_err(|e| e.to_string())?;
        return Ok(Inputs {
            targets,
            context,
            from_stdin: true,
            problems: Vec::new(),
        });
    }
    let paths = if args.paths.is_empty() {
        vec![PathBuf::from(".")]
    } else {
        args.paths.clone()
    };
    let collected = discover::collect_all(&paths);
    let problems = collected
        .problems
        .iter()
        .filter(|p| !(args.allow_empty && matches!(p, PathProblem::NothingToLint(_))))
        .map(ToString::to_string)
        .collect();
    Ok(Inputs {
        targets: collected.targets,
        context: collected.context,
        from_stdin: false,
        problems,
    })
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
