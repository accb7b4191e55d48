//! `ozcheck wait-for`: runs one probe wait against a real MCP server and prints its result.
//!
//! The server is started as a child process from `--server` and spoken to over stdio; the call
//! is validated and run by the reference runtime exactly as a worker's `wait_for` would be, and
//! the server's start and handshake count against `--max-wait-sec` (a server that never answers
//! ends the wait with `timeout`). Stdout is one JSON object: the result, or `{"error": {kind,
//! code, message}}` for every error after the flags parsed.
//!
//! Exit codes: 0 the condition held (`matched` or `settled`); 1 `timeout`; 2 a usage error or an
//! invalid call; 3 a failure (the server could not be started or broke the handshake, or a probe
//! failed while the wait ran).

use std::process::ExitCode;

use clap::Args;
use ozcheck_runtime::probe::observe::ToolCallEvents;
use ozcheck_runtime::probe::{StopReason, WaitError, wait_on_server};
use serde_json::{Map, Value, json};

/// Arguments of `ozcheck wait-for`.
#[derive(Args, Debug)]
pub struct WaitForArgs {
    /// The MCP server command line, split on whitespace; single or double quotes keep a
    /// word together.
    #[arg(long)]
    pub server: String,
    /// The MCP tool to probe.
    #[arg(long)]
    pub tool: String,
    /// The probe's arguments as a JSON object.
    #[arg(long, default_value = "{}")]
    pub args: String,
    /// The stop condition (exactly one).
    #[command(flatten)]
    pub until: UntilArgs,
    /// Seconds between probe calls (default 5).
    #[arg(long)]
    pub poll_sec: Option<u64>,
    /// The bound in seconds, clamped to 300 (default 300).
    #[arg(long)]
    pub max_wait_sec: Option<u64>,
}

/// The three conditions, of which clap requires exactly one.
#[derive(Args, Debug)]
#[group(required = true, multiple = false)]
pub struct UntilArgs {
    /// Stop when the output matches this regex (searched anywhere).
    #[arg(long)]
    pub matches: Option<String>,
    /// Stop when the output no longer matches this regex.
    #[arg(long)]
    pub not_matches: Option<String>,
    /// Stop when the output stayed unchanged this many whole seconds.
    #[arg(long)]
    pub quiet_for_sec: Option<u64>,
}

/// Exit code of a wait that timed out.
const EXIT_TIMEOUT: u8 = 1;
/// Exit code of a usage error or an invalid call.
const EXIT_USAGE: u8 = 2;
/// Exit code of a failure: no server, a broken handshake, a probe that failed mid-wait.
const EXIT_FAILURE: u8 = 3;

/// Runs the subcommand.
pub fn run(args: &WaitForArgs) -> ExitCode {
    let call = match call_json(args) {
        Ok(call) => call,
        Err(message) => return usage(&message),
    };
    let words = match split_command(&args.server) {
        Ok(words) if !words.is_empty() => words,
        Ok(_) => return usage("--server is empty"),
        Err(message) => return usage(&message),
    };
    let runtime = match tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    {
        Ok(runtime) => runtime,
        Err(e) => return failure("runtime-start", &e.to_string()),
    };
    let outcome = runtime.block_on(wait_on_server(
        &words[0],
        &words[1..],
        &call,
        ToolCallEvents::default(),
    ));
    match outcome {
        Ok(result) => {
            // Struct order (reason first) reads better than sorted keys.
            let text = serde_json::to_string(&result).unwrap_or_default();
            crate::outln!("{text}");
            if result.reason == StopReason::Timeout {
                ExitCode::from(EXIT_TIMEOUT)
            } else {
                ExitCode::SUCCESS
            }
        }
        Err(error) => {
            crate::outln!("{}", json!({"error": error.to_json()}));
            match error {
                WaitError::Invalid(_) => ExitCode::from(EXIT_USAGE),
                WaitError::Runtime(_) | WaitError::Server(_) => ExitCode::from(EXIT_FAILURE),
            }
        }
    }
}

/// A usage error, in the same JSON shape as every other error.
fn usage(message: &str) -> ExitCode {
    crate::outln!(
        "{}",
        json!({"error": {"kind": "invalid_args", "code": "usage", "message": message}})
    );
    eprintln!("ozcheck wait-for: {message}");
    ExitCode::from(EXIT_USAGE)
}

fn failure(code: &str, message: &str) -> ExitCode {
    crate::outln!(
        "{}",
        json!({"error": {"kind": "runtime", "code": code, "message": message}})
    );
    eprintln!("ozcheck wait-for: {message}");
    ExitCode::from(EXIT_FAILURE)
}

/// The `wait_for` call a worker would make with these flags. `--args` that is JSON but not an
/// object is passed through, so the runtime rejects it with its own error.
fn call_json(args: &WaitForArgs) -> Result<Value, String> {
    let probe_args: Value =
        serde_json::from_str(&args.args).map_err(|e| format!("--args is not JSON: {e}"))?;
    let until = match (
        &args.until.matches,
        &args.until.not_matches,
        args.until.quiet_for_sec,
    ) {
        (Some(re), _, _) => json!({"matches": re}),
        (_, Some(re), _) => json!({"not_matches": re}),
        (_, _, Some(secs)) => json!({"quiet_for_sec": secs}),
        (None, None, None) => {
            return Err("one of --matches, --not-matches, --quiet-for-sec is required".into());
        }
    };
    let mut call = Map::new();
    call.insert(
        "probe".into(),
        json!({"tool": args.tool, "args": probe_args}),
    );
    call.insert("until".into(), until);
    if let Some(poll) = args.poll_sec {
        call.insert("poll_sec".into(), poll.into());
    }
    if let Some(max) = args.max_wait_sec {
        call.insert("max_wait_sec".into(), max.into());
    }
    Ok(Value::Object(call))
}

/// Splits a command line into words: whitespace separates, single quotes keep everything
/// literally, double quotes keep whitespace and honour `\"` and `\\`, and a backslash outside
/// quotes escapes the next character. No shell is involved.
fn split_command(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = line.chars();
    while let Some(c) = chars.next() {
        match c {
            c if c.is_whitespace() => words.extend(word.take()),
            '\'' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => w.push(c),
                        None => return Err("--server has an unclosed single quote".into()),
                    }
                }
            }
            '"' => {
                let w = word.get_or_insert_with(String::new);
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c @ ('"' | '\\')) => w.push(c),
                            Some(c) => {
                                w.push('\\');
                                w.push(c);
                            }
                            None => return Err("--server has an unclosed double quote".into()),
                        },
                        Some(c) => w.push(c),
                        None => return Err("--server has an unclosed double quote".into()),
                    }
                }
            }
            '\\' => {
                let next = chars.next().ok_or("--server ends with a lone backslash")?;
                word.get_or_insert_with(String::new).push(next);
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    Ok(words)
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;

    /// Parses flags as the CLI would.
    #[derive(Parser)]
    struct TestCli {
        #[command(flatten)]
        args: WaitForArgs,
    }

    fn parse(flags: &[&str]) -> Result<WaitForArgs, clap::Error> {
        let argv = std::iter::once("wait-for").chain(flags.iter().copied());
        TestCli::try_parse_from(argv).map(|cli| cli.args)
    }

    #[test]
    fn flags_become_the_call_a_worker_would_make() {
        let args = parse(&[
            "--server",
            "srv",
            "--tool",
            "pods",
            "--args",
            r#"{"ns":"web"}"#,
            "--not-matches",
            "Pending",
            "--poll-sec",
            "2",
        ])
        .expect("valid flags");
        assert_eq!(
            call_json(&args).expect("json"),
            json!({"probe": {"tool": "pods", "args": {"ns": "web"}},
                   "until": {"not_matches": "Pending"}, "poll_sec": 2})
        );
    }

    #[test]
    fn exactly_one_condition_is_required() {
        assert!(parse(&["--server", "s", "--tool", "t"]).is_err());
        assert!(
            parse(&[
                "--server",
                "s",
                "--tool",
                "t",
                "--matches",
                "a",
                "--quiet-for-sec",
                "3"
            ])
            .is_err()
        );
    }

    #[test]
    fn args_must_be_json() {
        let args = parse(&[
            "--server",
            "s",
            "--tool",
            "t",
            "--args",
            "{ns: web}",
            "--matches",
            "a",
        ])
        .expect("flags parse");
        assert!(call_json(&args).unwrap_err().contains("not JSON"));
    }

    #[test]
    fn server_command_lines_split_like_a_shell_without_one() {
        assert_eq!(
            split_command(r#"srv --script '[{"text": "a b"}]' "x \"y\"" z\ w"#).expect("split"),
            ["srv", "--script", r#"[{"text": "a b"}]"#, r#"x "y""#, "z w"]
        );
        assert_eq!(split_command("  a   b ").expect("split"), ["a", "b"]);
        assert_eq!(split_command("a ''").expect("split"), ["a", ""]);
        assert!(split_command("a 'b").is_err());
        assert!(split_command("a \"b").is_err());
        assert!(split_command("a \\").is_err());
    }
}
