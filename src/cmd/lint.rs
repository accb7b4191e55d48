//! `ozcheck lint`: lints agent, flow and routine YAML files and prints the findings, or fixes
//! them (`--fix`, `--diff`). Exit 0 when no finding is at error level (or `--exit-zero`), 1 when
//! one is (with `--diff`: when a fix would change a file), 2 on a usage, configuration or I/O
//! error. The flags follow ruff's and zizmor's; docs/cli.md is the contract.

use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};
use ozcheck_lint::fix::{self, FixedFile};
use ozcheck_lint::render::{self, Format};
use ozcheck_lint::{Config, FileReport};

mod inputs;

/// Output format.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum LintFormat {
    /// Reports with a source snippet and a label under the cause.
    Full,
    /// `file:line:col: severity[rule] message (help: …)`, one per line.
    Concise,
    /// One JSON object (the stable contract in docs/cli.md).
    Json,
    /// SARIF 2.1.0 for code scanning.
    Sarif,
    /// GitHub Actions workflow commands (annotations).
    Github,
}

/// When to colour the `full` output.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum ColorChoice {
    /// When writing to a terminal, unless `NO_COLOR` is set; `FORCE_COLOR` forces it.
    Auto,
    /// Always.
    Always,
    /// Never.
    Never,
}

/// Arguments of `ozcheck lint`.
// Each bool is one command-line switch, as ruff's are.
#[allow(clippy::struct_excessive_bools)]
#[derive(Args)]
pub struct LintArgs {
    /// Files or folders to lint; `-` reads standard input. Without a path: the plugin files
    /// (YAML under agents/, flows/, routines/) below the current folder.
    pub paths: Vec<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "full")]
    pub format: LintFormat,
    /// Configuration file for every file (default: each file's nearest ozcheck.toml, in its
    /// folder or a folder above it).
    #[arg(long)]
    pub config: Option<PathBuf>,
    /// Read no ozcheck.toml: every file gets the default configuration.
    #[arg(long, conflicts_with = "config")]
    pub isolated: bool,
    /// Accept a folder with no plugin file to lint (for scripts over generated trees); without
    /// it such a folder is a usage error (exit 2).
    #[arg(long)]
    pub allow_empty: bool,
    /// Disregard `# ozcheck: ignore[…]` comments: report every finding.
    #[arg(long)]
    pub no_ignores: bool,
    /// Report standard input under this path (its plugin is read from disk for context).
    #[arg(long)]
    pub stdin_filename: Option<String>,
    /// Apply the safe fixes to the files (to standard input: print the fixed text), then report
    /// what remains.
    #[arg(long)]
    pub fix: bool,
    /// Print the safe fixes as a unified diff instead of applying them; exit 1 when there is one.
    #[arg(long, conflicts_with = "fix")]
    pub diff: bool,
    /// Exit 0 even when error-level findings remain (usage and I/O errors still exit 2).
    #[arg(long)]
    pub exit_zero: bool,
    /// Print the findings and nothing else (no summary line, no note about fixes).
    #[arg(long, short = 'q')]
    pub quiet: bool,
    /// Print how many findings each rule has instead of the findings.
    #[arg(long, conflicts_with = "diff")]
    pub statistics: bool,
    /// When to colour the full output; `NO_COLOR` and `FORCE_COLOR` apply to `auto`.
    #[arg(long, value_enum, default_value = "auto")]
    pub color: ColorChoice,
    /// Write the output to this file instead of standard output.
    #[arg(long, short = 'o')]
    pub output_file: Option<PathBuf>,
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

/// Whether to colour: `--color` first, then `NO_COLOR`, then `FORCE_COLOR` (each when set and not
/// empty), then whether the output is a terminal.
fn use_color(choice: ColorChoice, to_terminal: bool) -> bool {
    let set = |name: &str| std::env::var_os(name).is_some_and(|v| !v.is_empty());
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto if set("NO_COLOR") => false,
        ColorChoice::Auto if set("FORCE_COLOR") => true,
        ColorChoice::Auto => to_terminal,
    }
}

/// The findings (or statistics) as the chosen format says.
fn findings_text(args: &LintArgs, reports: &[FileReport], color: bool) -> String {
    if args.statistics {
        return render::statistics(reports, args.format == LintFormat::Json);
    }
    let text = render::render(reports, format(args.format), color);
    if args.quiet && args.format == LintFormat::Full {
        let summary = render::summary(reports);
        return text.strip_suffix(&summary).unwrap_or(&text).to_owned();
    }
    text
}

/// Writes `text` to the output file or standard output; false when that fails (a file that
/// cannot be written is said on standard error).
fn emit(args: &LintArgs, text: &str) -> bool {
    if let Some(path) = &args.output_file {
        return match std::fs::write(path, text) {
            Ok(()) => true,
            Err(e) => {
                let _ = writeln!(std::io::stderr(), "ozcheck lint: {}: {e}", path.display());
                false
            }
        };
    }
    let mut stdout = std::io::stdout().lock();
    stdout
        .write_all(text.as_bytes())
        .and_then(|()| stdout.flush())
        .is_ok()
}

/// Writes the fixed files back (or the fixed standard input to standard output) and says how
/// many fixes were applied.
fn write_fixes(args: &LintArgs, fixed: &[FixedFile], from_stdin: bool) -> Result<(), String> {
    let mut files = 0;
    for file in fixed.iter().filter(|f| f.changed()) {
        files += 1;
        if from_stdin {
            continue;
        }
        std::fs::write(&file.report.source.path, &file.report.source.text)
            .map_err(|e| format!("{}: {e}", file.report.source.path))?;
    }
    if from_stdin {
        if let Some(file) = fixed.first() {
            let mut stdout = std::io::stdout().lock();
            stdout
                .write_all(file.report.source.text.as_bytes())
                .map_err(|e| format!("standard output: {e}"))?;
        }
    }
    let applied: usize = fixed.iter().map(|f| f.applied).sum();
    if !args.quiet && applied > 0 {
        let plural = ozcheck_lint::render::plural;
        let _ = writeln!(
            std::io::stderr(),
            "ozcheck lint: fixed {} in {}",
            plural(applied, "finding"),
            plural(files, "file")
        );
    }
    Ok(())
}

/// Runs the subcommand.
pub fn run(args: &LintArgs) -> ExitCode {
    // Statistics are a table (text, or JSON for scripts); SARIF and GitHub annotations have no
    // place for one, so asking for both is refused rather than answered in another format.
    if args.statistics && matches!(args.format, LintFormat::Sarif | LintFormat::Github) {
        return usage_error(
            "--statistics prints a table as text or JSON; use it with --format full, concise or json",
        );
    }
    let inputs = match inputs::collect(args) {
        Ok(inputs) => inputs,
        Err(e) => return usage_error(&e),
    };
    // Every path that could not be read or held nothing is reported, and the others are still
    // linted; the run then ends with 2 whatever the findings.
    for problem in &inputs.problems {
        let _ = writeln!(std::io::stderr(), "ozcheck lint: {problem}");
    }
    let path_problems = !inputs.problems.is_empty();
    if path_problems && inputs.targets.is_empty() {
        return ExitCode::from(2);
    }
    let (configs, indices) = match inputs::configs(args, &inputs.targets) {
        Ok(c) => c,
        Err(e) => return usage_error(&e),
    };
    let config = inputs::each(&configs, &indices);
    let code = lint_and_print(args, &inputs, &config);
    if path_problems {
        ExitCode::from(2)
    } else {
        code
    }
}

/// Lints (or fixes) the inputs, prints the result and picks the exit code.
fn lint_and_print(args: &LintArgs, inputs: &inputs::Inputs, config: &[&Config]) -> ExitCode {
    let (targets, context, from_stdin) = (&inputs.targets, &inputs.context, inputs.from_stdin);
    let to_terminal = args.output_file.is_none() && std::io::stdout().is_terminal();
    let color = args.format == LintFormat::Full && use_color(args.color, to_terminal);
    if args.diff {
        let fixed = fix::fix_each(targets, context, config);
        let diff = fix::unified_diff(&fixed);
        if !emit(args, &diff) {
            return ExitCode::from(2);
        }
        return ExitCode::from(u8::from(!diff.is_empty()));
    }
    let reports: Vec<FileReport> = if args.fix {
        let fixed = fix::fix_each(targets, context, config);
        if let Err(e) = write_fixes(args, &fixed, from_stdin) {
            return usage_error(&e);
        }
        fixed.into_iter().map(|f| f.report).collect()
    } else {
        ozcheck_lint::lint_each(targets, context, config)
    };
    let text = findings_text(args, &reports, color);
    // With `--fix` on standard input the fixed text owns standard output; findings go beside.
    let written = if args.fix && from_stdin && args.output_file.is_none() {
        std::io::stderr().write_all(text.as_bytes()).is_ok()
    } else {
        emit(args, &text)
    };
    if !written {
        return ExitCode::from(2);
    }
    if ozcheck_lint::has_errors(&reports) && !args.exit_zero {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
