//! `ozcheck lint`: lints agent, flow and routine YAML files and prints the findings. Exit 0 when
//! no finding is at error level, 1 when one is, 2 on a usage, configuration or I/O error.

use std::io::{IsTerminal, Read, Write};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use ozcheck_lint::render::{self, Format};
use ozcheck_lint::{Config, Input, PluginContext, discover};

/// Output format.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum LintFormat {
    /// Reports with a source snippet and a label under the cause.
    Full,
    /// `file:line:col: severity[rule] message`, one per line.
    Concise,
    /// One JSON object (the stable contract in DESIGN.md).
    Json,
    /// SARIF 2.1.0 for code scanning.
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
}

/// Arguments of `ozcheck lint`.
#[derive(Args)]
pub struct LintArgs {
    /// Files or folders to lint (default: the current folder); `-` reads standard input.
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "full")]
    pub format: LintFormat,
    /// Configuration file (default: ./ozcheck.toml when it exists).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Read the file from standard input and report it under this path.
    #[arg(long)]
    pub stdin_filename: Option<String>,
}

fn format(f: LintFormat) -> Format {
    match f {
        LintFormat::Full => Format::Full,
        LintFormat::Concise => Format::Concise,
        LintFormat::Json => Format::Json,
        LintFormat::Sarif => Format::Sarif,
        LintFormat::Github => Format::Github,
    }
}

fn usage_error(message: &str) -> ExitCode {
    let _ = writeln!(std::io::stderr(), "ozcheck lint: {message}");
    ExitCode::from(2)
}

fn load_config(path: Option<&Path>) -> Result<Config, String> {
    let (path, required) = match path {
        Some(p) => (p.to_path_buf(), true),
        None => (PathBuf::from("ozcheck.toml"), false),
    };
    match std::fs::read_to_string(&path) {
        Ok(text) => Config::parse(&text).map_err(|e| format!("{}: {e}", path.display())),
        Err(e) if required || e.kind() != std::io::ErrorKind::NotFound => {
            Err(format!("{}: {e}", path.display()))
        }
        Err(_) => Ok(Config::default()),
    }
}

/// The input from standard input and the plugin context of the path it stands for.
fn stdin_input(name: &str) -> std::io::Result<(Vec<Input>, PluginContext)> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(ozcheck_lint::MAX_FILE_BYTES as u64 + 1)
        .read_to_end(&mut bytes)?;
    let mut input = Input::from_bytes(name, &bytes, true);
    input.too_large = bytes.len() > ozcheck_lint::MAX_FILE_BYTES;
    // The agents of the plugin the named file belongs to, if it exists on disk.
    let mut context = PluginContext {
        file_exists: Some(discover::disk_file_exists()),
        ..PluginContext::default()
    };
    let path = Path::new(name);
    if let Some(dir) = path.parent()
        && matches!(dir.file_name().and_then(|n| n.to_str()), Some("routines"))
        && let Some(root) = dir.parent()
        && root.join("agents").is_dir()
    {
        let (files, _) = discover::collect(&[root.join("agents")])?;
        context.files = files;
        context.agents_complete = true;
    }
    Ok((vec![input], context))
}

/// Runs the subcommand.
pub fn run(args: &LintArgs) -> ExitCode {
    let config = match load_config(args.config.as_deref()) {
        Ok(c) => c,
        Err(e) => return usage_error(&e),
    };
    let reads_stdin = args.paths.iter().any(|p| p.as_os_str() == "-")
        || (args.paths.is_empty() && args.stdin_filename.is_some());
    let collected = if reads_stdin {
        if args.paths.len() > 1 {
            return usage_error("`-` (standard input) cannot be combined with other paths");
        }
        stdin_input(args.stdin_filename.as_deref().unwrap_or("<stdin>.yaml"))
    } else {
        let paths = if args.paths.is_empty() {
            vec![PathBuf::from(".")]
        } else {
            args.paths.clone()
        };
        discover::collect(&paths)
    };
    let (targets, context) = match collected {
        Ok(c) => c,
        Err(e) => return usage_error(&e.to_string()),
    };
    let reports = ozcheck_lint::lint(&targets, &context, &config);
    let color = matches!(args.format, LintFormat::Full)
        && std::io::stdout().is_terminal()
        && std::env::var_os("NO_COLOR").is_none();
    let text = render::render(&reports, format(args.format), color);
    let mut stdout = std::io::stdout().lock();
    if stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .is_err()
    {
        return ExitCode::from(2);
    }
    if ozcheck_lint::has_errors(&reports) {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
