//! `ozcheck filter`: checks one CEL expression (syntax, types, size, worst-case cost) and prints
//! the verdict. Exit 0 accepted, 1 refused, 2 usage, configuration or I/O error.
//!
//! The extensions the expression may use are those of `--extensions`, else those the
//! `[extensions]` table of `ozcheck.toml` enables in the context's environment (the file named
//! by `--config`, else the nearest one above the expression's file or the current folder, as
//! `ozcheck lint` finds it), else Kubernetes' set.

use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use ozcheck_analyzer::check::Env;
use ozcheck_analyzer::cost::group;
use ozcheck_analyzer::{Extensions, Options, Report, Verdict};

use crate::render;

/// Which environment the expression is checked in.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Context {
    /// A wait or trigger filter: CEL over `event` alone.
    Filter,
    /// A trigger's `sender` expression: CEL over `event` alone.
    Sender,
    /// A flow step's `when`: `trigger` and earlier `steps`.
    When,
    /// A `${{ }}` template: `trigger`, `steps`, `inputs`.
    Template,
}

/// Output format.
#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    /// Human-readable reports with the expression and a label under the cause.
    Full,
    /// One JSON object (the stable contract in docs/cli.md).
    Json,
}

/// Arguments of `ozcheck filter`.
#[derive(Args)]
pub struct FilterArgs {
    /// The expression to check (or use --file); `-` reads it from standard input.
    #[arg(required_unless_present = "file", conflicts_with = "file")]
    pub expr: Option<String>,
    /// Read the expression from this file (`-`: standard input).
    #[arg(long)]
    pub file: Option<PathBuf>,
    /// The environment the expression runs in.
    #[arg(long, value_enum, default_value = "filter")]
    pub context: Context,
    /// The cost limit in cost units.
    #[arg(long, default_value_t = ozcheck_analyzer::cost::DEFAULT_COST_LIMIT)]
    pub limit: u64,
    /// Largest `event.text` of the source, in bytes.
    #[arg(long, default_value_t = ozcheck_analyzer::EventBounds::DEFAULT.text)]
    pub max_text: u64,
    /// Largest `event.attributes` of the source (compact JSON), in bytes.
    #[arg(long, default_value_t = ozcheck_analyzer::EventBounds::DEFAULT.attributes)]
    pub max_attributes: u64,
    /// Largest header field (`event.id`, `source`, `type`, `action`, `subject`), in bytes.
    #[arg(long, default_value_t = ozcheck_analyzer::EventBounds::DEFAULT.header_field)]
    pub max_header: u64,
    /// Print the cost tree: every sub-expression's range and the size assumption behind it.
    #[arg(long)]
    pub explain: bool,
    /// Write the heaviest event within the bounds that the estimate leads to (JSON that
    /// `ozcheck eval --event` reads) to this file; for a refused filter, an event on which the
    /// metered evaluation passes the limit.
    #[arg(long, value_name = "FILE")]
    pub witness: Option<PathBuf>,
    /// Output format.
    #[arg(long, value_enum, default_value = "full")]
    pub format: Format,
    /// The extensions the expression may use, comma-separated (`strings,optional`; `none` for
    /// the standard library alone). Overrides `ozcheck.toml`.
    #[arg(long, value_name = "LIST", value_parser = parse_extensions)]
    pub extensions: Option<Extensions>,
    /// Configuration file whose `[extensions]` apply (default: the nearest ozcheck.toml in the
    /// folder of `--file`, or of the current folder, or above it).
    #[arg(long, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Also estimate the expression under cost-model version N, an earlier version this build
    /// still carries, and show both figures (docs/cost-model.md, "Versions").
    #[arg(long, value_name = "N", conflicts_with_all = ["witness", "explain"])]
    pub compare_model: Option<u32>,
}

/// Reads `--extensions`: names separated by commas, or `none`.
fn parse_extensions(list: &str) -> Result<Extensions, String> {
    if list.trim() == "none" {
        return Ok(Extensions::NONE);
    }
    let names: Vec<&str> = list.split(',').map(str::trim).collect();
    Extensions::from_names(&names).map_err(|e| e.to_string())
}

/// The environment of `args.context` with the extensions it may use (the module's doc).
fn environment(args: &FilterArgs) -> Result<Env, String> {
    let env = match args.context {
        Context::Filter => Env::filter(),
        Context::Sender => Env::sender(),
        Context::When => Env::when(true, &[]),
        Context::Template => Env::template(true, &[]),
    };
    if let Some(extensions) = args.extensions {
        return Ok(env.with_extensions(extensions));
    }
    let config = if let Some(path) = &args.config {
        ozcheck_lint::discover::read_config(path)?
    } else {
        let start = match &args.file {
            Some(file) if file.as_os_str() != "-" => file.clone(),
            _ => PathBuf::from("."),
        };
        ozcheck_lint::discover::nearest_config(&start)?
    };
    Ok(config.extensions.apply(env))
}

/// Most bytes read from standard input: far above the 1024-byte source limit, so the analyzer
/// still reports the size, and small enough that a stream without end cannot exhaust memory.
const MAX_STDIN_BYTES: u64 = 1024 * 1024;

/// The expression from standard input (`-`, as `ozcheck lint -` reads a file), without the one
/// line break a shell adds.
fn read_stdin() -> std::io::Result<String> {
    use std::io::Read;
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_STDIN_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_STDIN_BYTES {
        return Err(std::io::Error::other(format!(
            "more than {MAX_STDIN_BYTES} bytes"
        )));
    }
    let text = String::from_utf8(bytes).map_err(std::io::Error::other)?;
    Ok(text.strip_suffix('\n').map_or(text.clone(), str::to_owned))
}

/// Runs the subcommand.
pub fn run(args: &FilterArgs) -> ExitCode {
    let source = match (&args.expr, &args.file) {
        (Some(expr), _) if expr == "-" => match read_stdin() {
            Ok(text) => text,
            Err(err) => {
                eprintln!("error: cannot read standard input: {err}");
                return ExitCode::from(2);
            }
        },
        (Some(expr), _) => expr.clone(),
        (None, Some(path)) if path.as_os_str() == "-" => match read_stdin() {
            Ok(text) => text,
            Err(err) => {
                eprintln!("error: cannot read standard input: {err}");
                return ExitCode::from(2);
            }
        },
        (None, Some(path)) => match std::fs::read_to_string(path) {
            Ok(text) => text.strip_suffix('\n').map_or(text.clone(), str::to_owned),
            Err(err) => {
                eprintln!("error: cannot read {}: {err}", path.display());
                return ExitCode::from(2);
            }
        },
        (None, None) => {
            eprintln!("error: give an expression or --file");
            return ExitCode::from(2);
        }
    };
    let mut options = Options {
        limit: args.limit,
        ..Options::default()
    };
    options.bounds.text = args.max_text;
    options.bounds.attributes = args.max_attributes;
    options.bounds.header_field = args.max_header;
    let env = match environment(args) {
        Ok(env) => env,
        Err(err) => {
            eprintln!("error: {err}");
            return ExitCode::from(2);
        }
    };
    if let Some(version) = args.compare_model {
        return compare_model(&source, &env, &options, version, args.format);
    }
    let (report, witness) = match &args.witness {
        Some(_) => ozcheck_analyzer::check_with_witness(&source, &env, &options),
        None => (
            ozcheck_analyzer::check_expression(&source, &env, &options),
            None,
        ),
    };
    // Without a witness: a context that is not an event filter's is a usage error; an
    // expression that does not compile gets the report it gets without `--witness` (its
    // diagnostics, exit 1), and no file is written, which is said beside it.
    let mut unwritten = None;
    if let Some(path) = &args.witness {
        match &witness {
            Some(witness) => {
                if let Err(err) = std::fs::write(path, format!("{}\n", witness.event)) {
                    eprintln!("error: cannot write {}: {err}", path.display());
                    return ExitCode::from(2);
                }
            }
            None if matches!(args.context, Context::When | Context::Template) => {
                eprintln!(
                    "error: no witness: a witness is an event, and the {} context is not an \
                     event filter's (use --context filter or sender)",
                    match args.context {
                        Context::When => "when",
                        _ => "template",
                    }
                );
                return ExitCode::from(2);
            }
            None => {
                unwritten = Some(format!(
                    "witness: none written to {}: the expression does not compile",
                    path.display()
                ));
            }
        }
    }
    match args.format {
        Format::Json => {
            let mut value = json(&report);
            if let Some(witness) = &witness {
                ozcheck_analyzer::json::add_witness(&mut value, witness);
            }
            if args.explain {
                if let Ok(tree) = ozcheck_analyzer::explain_expression(&source, &env, &options) {
                    ozcheck_analyzer::json::add_explain(&mut value, &tree);
                }
            }
            crate::outln!("{value}");
            if let Some(line) = &unwritten {
                eprintln!("{line}");
            }
        }
        Format::Full => {
            crate::out!("{}", full(&source, &report));
            if let Some(line) = &unwritten {
                crate::outln!("{line}");
            }
            if let (Some(witness), Some(path)) = (&witness, &args.witness) {
                let reached = if witness.complete { "" } else { "more than " };
                crate::outln!(
                    "witness: {} costs {reached}{} (evaluated {} candidates)",
                    path.display(),
                    witness.cost,
                    witness.evaluations
                );
                if let Some(failure) = &witness.failure {
                    crate::outln!("witness: the filter fails on it: {failure}");
                }
                if let Some(shortfall) = &witness.shortfall {
                    crate::outln!("witness: it does not prove the refusal: {shortfall}");
                }
            }
            if args.explain {
                if let Ok(tree) = ozcheck_analyzer::explain_expression(&source, &env, &options) {
                    crate::out!("\n{tree}");
                }
            }
        }
    }
    match report.verdict {
        Verdict::Accepted => ExitCode::SUCCESS,
        Verdict::Refused => ExitCode::from(1),
    }
}

/// `--compare-model N`: the estimate under the current cost model and under version `N`, or,
/// when this build does not carry `N`, which versions it carries. Exits as without the flag
/// (the verdict under the current model), 2 for a version not carried.
fn compare_model(
    source: &str,
    env: &Env,
    options: &Options,
    version: u32,
    format: Format,
) -> ExitCode {
    use ozcheck_analyzer::cost::table::{CARRIED_VERSIONS, COST_MODEL_VERSION};
    let Some(earlier) = options.model.with_version(version) else {
        let carried: Vec<String> = CARRIED_VERSIONS.iter().map(u32::to_string).collect();
        eprintln!(
            "error: this build does not carry cost-model version {version}; it carries versions \
             {} (current: {COST_MODEL_VERSION})",
            carried.join(", ")
        );
        return ExitCode::from(2);
    };
    let current = ozcheck_analyzer::check_expression(source, env, options);
    let then = ozcheck_analyzer::check_expression(
        source,
        env,
        &Options {
            model: earlier,
            ..options.clone()
        },
    );
    let verdict = |r: &Report| match r.verdict {
        Verdict::Accepted => "accepted",
        Verdict::Refused => "refused",
    };
    match format {
        Format::Json => {
            let row = |v: u32, r: &Report| serde_json::json!({"version": v, "verdict": r.verdict, "cost": r.cost});
            crate::outln!(
                "{}",
                serde_json::json!({
                    "cost_model_version": COST_MODEL_VERSION,
                    "limit": options.limit,
                    "models": [row(COST_MODEL_VERSION, &current), row(version, &then)],
                })
            );
        }
        Format::Full => {
            for (v, r) in [(COST_MODEL_VERSION, &current), (version, &then)] {
                let cost = r.cost.map_or_else(
                    || "not estimated (it does not compile)".to_owned(),
                    |c| format!("{}..{}", group(c.min), group(c.max)),
                );
                let now = if v == COST_MODEL_VERSION {
                    " (current)"
                } else {
                    ""
                };
                crate::outln!("cost model {v}{now}: {cost}, {}", verdict(r));
            }
        }
    }
    match current.verdict {
        Verdict::Accepted => ExitCode::SUCCESS,
        Verdict::Refused => ExitCode::from(1),
    }
}

/// The JSON contract of docs/cli.md (the analyzer's shared serializer, [`ozcheck_analyzer::json`]).
pub fn json(report: &Report) -> serde_json::Value {
    ozcheck_analyzer::json::report(report)
}

/// Human-readable output: each diagnostic with the expression, then a verdict line.
pub fn full(source: &str, report: &Report) -> String {
    let mut out = String::new();
    for diagnostic in &report.diagnostics {
        out.push_str(&render::diagnostic(source, diagnostic));
    }
    let cost = report.cost.map_or_else(String::new, |c| {
        format!(
            ", cost {}..{} of {}",
            group(c.min),
            group(c.max),
            group(report.limit)
        )
    });
    let verdict = match report.verdict {
        Verdict::Accepted => "accepted",
        Verdict::Refused => "refused",
    };
    out.push_str(verdict);
    out.push_str(&cost);
    out.push('\n');
    if let Some(remedy) = &report.would_pass {
        for change in &remedy.changes {
            // The flag's value stays raw digits: it is an argument to copy.
            let _ = writeln!(
                out,
                "would pass with {} {} (cost ..{} of {})",
                ozcheck_analyzer::json::flag(change.bound),
                change.at_most,
                group(change.cost),
                group(report.limit)
            );
        }
        if remedy.changes.is_empty() {
            let _ = writeln!(out, "{}", remedy.describe());
        }
    }
    out
}
