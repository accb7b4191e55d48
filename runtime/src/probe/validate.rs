//! Validation of a `wait_for` call before any probe runs (W2, W4, W5, W7).
//!
//! The worker is a language model, so its arguments are untrusted JSON. [`WaitFor::from_json`]
//! checks them in a fixed order and reports the first problem as one distinct [`InvalidWait`]
//! variant, so a worker can correct exactly what was wrong. The order is: shape of the call,
//! probe tool name, probe arguments, the condition count, the regex, zero values, and finally
//! the relations between the durations (compared with the clamped bound, the one enforced).

use std::fmt;
use std::time::Duration;

use regex_automata::meta::Regex;
use serde_json::{Map, Value};

use super::tools::NativeTool;
use super::{DEFAULT_MAX_WAIT_SEC, DEFAULT_POLL_SEC, MAX_WAIT_CEILING_SEC};

/// The most memory a compiled condition regex may take. Patterns beyond it are rejected as
/// invalid instead of being compiled, so a hostile pattern cannot exhaust memory.
pub const REGEX_SIZE_LIMIT: usize = 1 << 20;

/// A validated `wait_for` call: everything the poll loop needs, nothing it must re-check.
#[derive(Debug, Clone)]
pub struct WaitFor {
    /// The MCP tool to call.
    pub probe_tool: String,
    /// Its arguments, always a JSON object.
    pub probe_args: Map<String, Value>,
    /// The stop condition.
    pub until: Until,
    /// Seconds between the starts of two probe calls.
    pub poll_sec: u64,
    /// The bound the worker asked for.
    pub requested_max_wait_sec: u64,
    /// The bound enforced: the request clamped to [`MAX_WAIT_CEILING_SEC`].
    pub effective_max_wait_sec: u64,
}

/// The one stop condition of a wait (W4).
#[derive(Debug, Clone)]
pub enum Until {
    /// Stop when the output matches the pattern.
    Matches(Pattern),
    /// Stop when the output does not match the pattern.
    NotMatches(Pattern),
    /// Stop when the output stayed the same for this many whole seconds.
    QuietForSec(u64),
}

impl Until {
    /// The condition's name, as written in the call and recorded in the span (`wait_condition`).
    pub fn name(&self) -> &'static str {
        match self {
            Until::Matches(_) => "matches",
            Until::NotMatches(_) => "not_matches",
            Until::QuietForSec(_) => "quiet_for_sec",
        }
    }
}

/// A condition regex: the source as given and its linear-time compiled form.
///
/// Matching is a search anywhere in the output (unanchored); a pattern anchors itself with `^`,
/// `$` or `\A`/`\z`. The syntax is that of the regex crate, which has no backreferences or
/// lookaround, so every match runs in time linear in the output.
#[derive(Clone)]
pub struct Pattern {
    source: String,
    regex: Regex,
}

impl Pattern {
    /// Compiles a pattern under [`REGEX_SIZE_LIMIT`].
    pub fn new(source: &str) -> Result<Self, String> {
        let config = Regex::config()
            .nfa_size_limit(Some(REGEX_SIZE_LIMIT))
            .onepass_size_limit(Some(REGEX_SIZE_LIMIT))
            .dfa_size_limit(Some(REGEX_SIZE_LIMIT))
            .hybrid_cache_capacity(2 * REGEX_SIZE_LIMIT);
        let regex = Regex::builder()
            .configure(config)
            .build(source)
            .map_err(|e| e.to_string())?;
        Ok(Pattern {
            source: source.to_owned(),
            regex,
        })
    }

    /// Whether the pattern matches anywhere in `output`.
    pub fn is_match(&self, output: &str) -> bool {
        self.regex.is_match(output)
    }

    /// The pattern as the worker wrote it.
    pub fn as_str(&self) -> &str {
        &self.source
    }
}

impl fmt::Debug for Pattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_tuple("Pattern").field(&self.source).finish()
    }
}

/// Why a `wait_for` call was rejected before the call (W2, W7). Each rule has its own variant
/// and code.
#[derive(Debug, Clone, PartialEq, thiserror::Error, miette::Diagnostic)]
pub enum InvalidWait {
    /// A field is missing or has the wrong JSON type.
    #[error("`{field}` must be {expected}")]
    #[diagnostic(code(wait_for::malformed))]
    Malformed {
        /// The path of the field, e.g. `probe.tool`.
        field: String,
        /// What it must be.
        expected: &'static str,
    },
    /// A field the call does not know.
    #[error("unknown field `{field}`")]
    #[diagnostic(
        code(wait_for::unknown_field),
        help("the fields are probe {{tool, args}}, until, poll_sec and max_wait_sec")
    )]
    UnknownField {
        /// The path of the field.
        field: String,
    },
    /// `probe.tool` is the empty string.
    #[error("the probe tool name is empty")]
    #[diagnostic(code(wait_for::empty_probe_tool))]
    EmptyProbeTool,
    /// `probe.tool` names a native tool, which cannot be probed (W2).
    #[error("`{tool}` is a native tool and cannot be probed; probes are MCP tools")]
    #[diagnostic(code(wait_for::native_probe_tool))]
    NativeProbeTool {
        /// The native tool named.
        tool: String,
    },
    /// `probe.tool` is not offered by the MCP server.
    #[error("the MCP server offers no tool `{tool}`; {}", offered(available))]
    #[diagnostic(code(wait_for::unknown_probe_tool))]
    UnknownProbeTool {
        /// The tool named.
        tool: String,
        /// The tools the server offers, in its order.
        available: Vec<String>,
    },
    /// `probe.args` is present but not a JSON object.
    #[error("`probe.args` must be an object, found {found}")]
    #[diagnostic(code(wait_for::probe_args_not_object))]
    ProbeArgsNotObject {
        /// The JSON type found.
        found: &'static str,
    },
    /// `until` holds no condition or more than one.
    #[error("`until` must hold exactly one of matches, not_matches, quiet_for_sec; found {found}")]
    #[diagnostic(code(wait_for::not_one_condition))]
    NotOneCondition {
        /// How many conditions were given.
        found: usize,
    },
    /// A `matches` or `not_matches` pattern does not compile.
    #[error("`until.{field}` is not a valid regex: {message}")]
    #[diagnostic(code(wait_for::invalid_regex))]
    InvalidRegex {
        /// `matches` or `not_matches`.
        field: &'static str,
        /// The compiler's message.
        message: String,
    },
    /// `poll_sec` is zero.
    #[error("`poll_sec` must be at least 1")]
    #[diagnostic(code(wait_for::zero_poll_sec))]
    ZeroPollSec,
    /// `until.quiet_for_sec` is zero.
    #[error("`until.quiet_for_sec` must be at least 1")]
    #[diagnostic(code(wait_for::zero_quiet_for_sec))]
    ZeroQuietForSec,
    /// `max_wait_sec` is zero.
    #[error("`max_wait_sec` must be at least 1")]
    #[diagnostic(code(wait_for::zero_max_wait_sec))]
    ZeroMaxWaitSec,
    /// `poll_sec` is not below the enforced bound.
    #[error(
        "`poll_sec` ({poll_sec}) must be less than the effective max_wait_sec ({max_wait_sec})"
    )]
    #[diagnostic(code(wait_for::poll_not_below_max_wait))]
    PollNotBelowMaxWait {
        /// The requested poll interval.
        poll_sec: u64,
        /// The effective bound.
        max_wait_sec: u64,
    },
    /// `until.quiet_for_sec` exceeds the enforced bound.
    #[error(
        "`until.quiet_for_sec` ({quiet_for_sec}) must not exceed the effective max_wait_sec ({max_wait_sec})"
    )]
    #[diagnostic(code(wait_for::quiet_exceeds_max_wait))]
    QuietExceedsMaxWait {
        /// The requested quiet window.
        quiet_for_sec: u64,
        /// The effective bound.
        max_wait_sec: u64,
    },
}

/// How many tool names an unknown-tool message lists before it says how many more there are.
const LISTED_TOOLS: usize = 20;

fn offered(available: &[String]) -> String {
    match available {
        [] => "it offers no tools".to_owned(),
        names if names.len() <= LISTED_TOOLS => format!("it offers: {}", names.join(", ")),
        names => format!(
            "it offers: {} and {} more",
            names[..LISTED_TOOLS].join(", "),
            names.len() - LISTED_TOOLS
        ),
    }
}

impl InvalidWait {
    /// The stable machine-readable code of the rejection.
    pub fn error_code(&self) -> &'static str {
        match self {
            InvalidWait::Malformed { .. } => "malformed",
            InvalidWait::UnknownField { .. } => "unknown-field",
            InvalidWait::EmptyProbeTool => "empty-probe-tool",
            InvalidWait::NativeProbeTool { .. } => "native-probe-tool",
            InvalidWait::UnknownProbeTool { .. } => "unknown-probe-tool",
            InvalidWait::ProbeArgsNotObject { .. } => "probe-args-not-object",
            InvalidWait::NotOneCondition { .. } => "not-one-condition",
            InvalidWait::InvalidRegex { .. } => "invalid-regex",
            InvalidWait::ZeroPollSec => "zero-poll-sec",
            InvalidWait::ZeroQuietForSec => "zero-quiet-for-sec",
            InvalidWait::ZeroMaxWaitSec => "zero-max-wait-sec",
            InvalidWait::PollNotBelowMaxWait { .. } => "poll-not-below-max-wait",
            InvalidWait::QuietExceedsMaxWait { .. } => "quiet-exceeds-max-wait",
        }
    }
}

impl WaitFor {
    /// Validates the arguments of a `wait_for` call as the worker sent them.
    ///
    /// The call is `{"probe": {"tool": NAME, "args": {...}}, "until": {ONE CONDITION},
    /// "poll_sec": N, "max_wait_sec": N}`; `probe.args` defaults to `{}`, `max_wait_sec` to
    /// [`DEFAULT_MAX_WAIT_SEC`], and `poll_sec` to [`DEFAULT_POLL_SEC`] or, under a shorter
    /// bound, one second less than the bound (at least one second).
    pub fn from_json(call: &Value) -> Result<WaitFor, InvalidWait> {
        let call = object(call, "arguments")?;
        reject_unknown(call, "", &["probe", "until", "poll_sec", "max_wait_sec"])?;
        let probe = object(required(call, "probe", "probe")?, "probe")?;
        reject_unknown(probe, "probe.", &["tool", "args"])?;
        let until = object(required(call, "until", "until")?, "until")?;
        reject_unknown(
            until,
            "until.",
            &["matches", "not_matches", "quiet_for_sec"],
        )?;

        let probe_tool = match required(probe, "tool", "probe.tool")? {
            Value::String(s) => s.clone(),
            _ => return Err(malformed("probe.tool", "a string")),
        };
        if probe_tool.is_empty() {
            return Err(InvalidWait::EmptyProbeTool);
        }
        if NativeTool::from_name(&probe_tool).is_some() {
            return Err(InvalidWait::NativeProbeTool { tool: probe_tool });
        }
        let probe_args = match probe.get("args") {
            None => Map::new(),
            Some(Value::Object(args)) => args.clone(),
            Some(other) => {
                return Err(InvalidWait::ProbeArgsNotObject {
                    found: json_type(other),
                });
            }
        };

        let until = parse_until(until)?;
        let asked_poll_sec = seconds(call, "poll_sec", "poll_sec")?;
        let requested_max_wait_sec =
            seconds(call, "max_wait_sec", "max_wait_sec")?.unwrap_or(DEFAULT_MAX_WAIT_SEC);

        if asked_poll_sec == Some(0) {
            return Err(InvalidWait::ZeroPollSec);
        }
        if matches!(until, Until::QuietForSec(0)) {
            return Err(InvalidWait::ZeroQuietForSec);
        }
        if requested_max_wait_sec == 0 {
            return Err(InvalidWait::ZeroMaxWaitSec);
        }
        let effective_max_wait_sec = requested_max_wait_sec.min(MAX_WAIT_CEILING_SEC);
        // Without a `poll_sec` the default fits the bound (a second call before it ends), so a
        // short `max_wait_sec` alone is a valid call; a `poll_sec` the worker gave is checked.
        let poll_sec = asked_poll_sec.unwrap_or_else(|| {
            DEFAULT_POLL_SEC.min(effective_max_wait_sec.saturating_sub(1).max(1))
        });
        if asked_poll_sec.is_some() && poll_sec >= effective_max_wait_sec {
            return Err(InvalidWait::PollNotBelowMaxWait {
                poll_sec,
                max_wait_sec: effective_max_wait_sec,
            });
        }
        if let Until::QuietForSec(quiet_for_sec) = until
            && quiet_for_sec > effective_max_wait_sec
        {
            return Err(InvalidWait::QuietExceedsMaxWait {
                quiet_for_sec,
                max_wait_sec: effective_max_wait_sec,
            });
        }
        Ok(WaitFor {
            probe_tool,
            probe_args,
            until,
            poll_sec,
            requested_max_wait_sec,
            effective_max_wait_sec,
        })
    }

    /// The poll interval as a duration.
    pub fn poll_interval(&self) -> Duration {
        Duration::from_secs(self.poll_sec)
    }

    /// The enforced bound as a duration.
    pub fn max_wait(&self) -> Duration {
        Duration::from_secs(self.effective_max_wait_sec)
    }
}

/// Parses `until` once its keys are known: exactly one condition, then its value.
fn parse_until(until: &Map<String, Value>) -> Result<Until, InvalidWait> {
    if until.len() != 1 {
        return Err(InvalidWait::NotOneCondition { found: until.len() });
    }
    if let Some(value) = until.get("quiet_for_sec") {
        let secs = whole_seconds(value, "until.quiet_for_sec")?;
        return Ok(Until::QuietForSec(secs));
    }
    let (field, value) = until.iter().next().expect("until has exactly one key");
    let field: &'static str = if field == "matches" {
        "matches"
    } else {
        "not_matches"
    };
    let Value::String(source) = value else {
        return Err(malformed(&format!("until.{field}"), "a string"));
    };
    let pattern =
        Pattern::new(source).map_err(|message| InvalidWait::InvalidRegex { field, message })?;
    Ok(if field == "matches" {
        Until::Matches(pattern)
    } else {
        Until::NotMatches(pattern)
    })
}

fn object<'a>(value: &'a Value, field: &str) -> Result<&'a Map<String, Value>, InvalidWait> {
    value
        .as_object()
        .ok_or_else(|| malformed(field, "an object"))
}

fn required<'a>(
    map: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a Value, InvalidWait> {
    map.get(key).ok_or_else(|| malformed(path, "present"))
}

fn reject_unknown(
    map: &Map<String, Value>,
    prefix: &str,
    known: &[&str],
) -> Result<(), InvalidWait> {
    match map.keys().find(|k| !known.contains(&k.as_str())) {
        Some(field) => Err(InvalidWait::UnknownField {
            field: format!("{prefix}{field}"),
        }),
        None => Ok(()),
    }
}

/// An optional whole-seconds field.
fn seconds(map: &Map<String, Value>, key: &str, path: &str) -> Result<Option<u64>, InvalidWait> {
    map.get(key).map(|v| whole_seconds(v, path)).transpose()
}

/// Whole seconds are non-negative JSON integers; `5.0`, `-1` and `"5"` are all rejected, so a
/// worker learns the unit instead of having its value silently rounded.
fn whole_seconds(value: &Value, path: &str) -> Result<u64, InvalidWait> {
    value
        .as_u64()
        .ok_or_else(|| malformed(path, "a whole number of seconds (a non-negative integer)"))
}

fn malformed(field: &str, expected: &'static str) -> InvalidWait {
    InvalidWait::Malformed {
        field: field.to_owned(),
        expected,
    }
}

fn json_type(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
