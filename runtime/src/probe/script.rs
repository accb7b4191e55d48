//! Scripts for the scripted MCP test server: what a tool answers on each call.
//!
//! A script is a list of rules; a call uses the first rule whose selectors all hold. Selectors
//! are `calls` (the 1-based call number: `3`, `"2..4"` inclusive, or `"5.."`) and `after_sec`
//! (seconds since the server started, inclusive); a rule without selectors always applies. A
//! rule's reply is `text`, or `bytes: N` (exactly N bytes of `x`), and may add `is_error`,
//! `delay_ms` before answering, `hang` (never answer), `structured` (a JSON value as
//! `structuredContent`), `image` (an image block beside the text) or `no_text` (no text block).
//! A call that no rule covers answers an empty text. Scripts are data, so they are read from the
//! same YAML or JSON as the scenarios that use them.

use serde::Deserialize;
use serde_json::Value;

/// The largest `bytes` a rule may ask for: scripts are data from scenario files, and a reply
/// is built in memory, so the size is bounded (64 times the probe output limit).
pub const MAX_SCRIPT_BYTES: usize = 16 * 1024 * 1024;

/// A scripted tool's behaviour over its calls.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(try_from = "Vec<Rule>")]
pub struct ToolScript {
    /// The rules, tried in order.
    pub rules: Vec<Rule>,
}

impl TryFrom<Vec<Rule>> for ToolScript {
    type Error = String;

    fn try_from(rules: Vec<Rule>) -> Result<Self, String> {
        if let Some(bytes) = rules
            .iter()
            .filter_map(|r| r.bytes)
            .find(|b| *b > MAX_SCRIPT_BYTES)
        {
            return Err(format!(
                "`bytes: {bytes}` exceeds the limit of {MAX_SCRIPT_BYTES} bytes"
            ));
        }
        Ok(ToolScript { rules })
    }
}

/// One rule: when it applies, and the reply.
#[derive(Debug, Clone, Default, Deserialize, PartialEq)]
#[serde(deny_unknown_fields)]
// The flags mirror the keys of the script format one to one, which keeps scripts readable.
#[allow(clippy::struct_excessive_bools)]
pub struct Rule {
    /// The call numbers the rule applies to.
    #[serde(default)]
    pub calls: Option<CallRange>,
    /// The rule applies from this many seconds after the server started.
    #[serde(default)]
    pub after_sec: Option<f64>,
    /// The text content of the reply.
    #[serde(default)]
    pub text: Option<String>,
    /// Replaces `text` with exactly this many bytes of `x`.
    #[serde(default)]
    pub bytes: Option<usize>,
    /// Marks the result `isError: true`.
    #[serde(default)]
    pub is_error: bool,
    /// Waits this long before answering.
    #[serde(default)]
    pub delay_ms: u64,
    /// Never answers.
    #[serde(default)]
    pub hang: bool,
    /// Adds `structuredContent`.
    #[serde(default)]
    pub structured: Option<Value>,
    /// Adds an image content block.
    #[serde(default)]
    pub image: bool,
    /// Leaves out the text block.
    #[serde(default)]
    pub no_text: bool,
}

/// The reply a rule gives, resolved for one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Reply {
    /// The text block, unless the rule has `no_text`.
    pub text: Option<String>,
    /// Whether the result is an error result.
    pub is_error: bool,
    /// How long to wait before answering, in milliseconds.
    pub delay_ms: u64,
    /// Whether to never answer.
    pub hang: bool,
    /// The structured content, if any.
    pub structured: Option<Value>,
    /// Whether to add an image block.
    pub image: bool,
}

/// An inclusive range of 1-based call numbers, written `3`, `"2..4"` or `"5.."`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CallRange {
    /// The first call covered.
    pub first: u64,
    /// The last call covered, or `None` for every later call.
    pub last: Option<u64>,
}

impl CallRange {
    fn contains(self, call: u64) -> bool {
        call >= self.first && self.last.is_none_or(|last| call <= last)
    }

    fn parse(text: &str) -> Result<Self, String> {
        let bad = || format!("`{text}` is not a call range (3, \"2..4\" or \"5..\")");
        let Some((first, last)) = text.split_once("..") else {
            let n = text.trim().parse().map_err(|_| bad())?;
            return Ok(CallRange {
                first: n,
                last: Some(n),
            });
        };
        let first = first.trim().parse().map_err(|_| bad())?;
        let last = match last.trim() {
            "" => None,
            l => Some(l.parse().map_err(|_| bad())?),
        };
        Ok(CallRange { first, last })
    }
}

impl<'de> Deserialize<'de> for CallRange {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        #[serde(untagged)]
        enum Raw {
            One(u64),
            Text(String),
        }
        match Raw::deserialize(d)? {
            Raw::One(n) => Ok(CallRange {
                first: n,
                last: Some(n),
            }),
            Raw::Text(t) => CallRange::parse(&t).map_err(serde::de::Error::custom),
        }
    }
}

impl ToolScript {
    /// The reply to call number `call` (1-based), made `elapsed_sec` after the server started.
    pub fn reply(&self, call: u64, elapsed_sec: f64) -> Reply {
        let rule = self.rules.iter().find(|r| {
            r.calls.is_none_or(|c| c.contains(call)) && r.after_sec.is_none_or(|s| elapsed_sec >= s)
        });
        let Some(rule) = rule else {
            return Reply {
                text: Some(String::new()),
                is_error: false,
                delay_ms: 0,
                hang: false,
                structured: None,
                image: false,
            };
        };
        let text = match (rule.no_text, rule.bytes) {
            (true, _) => None,
            (false, Some(n)) => Some("x".repeat(n)),
            (false, None) => Some(rule.text.clone().unwrap_or_default()),
        };
        Reply {
            text,
            is_error: rule.is_error,
            delay_ms: rule.delay_ms,
            hang: rule.hang,
            structured: rule.structured.clone(),
            image: rule.image,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn script(yaml: &str) -> ToolScript {
        yaml_serde::from_str(yaml).expect("valid script")
    }

    #[test]
    fn first_matching_rule_wins_by_call_number() {
        let s =
            script("- {calls: 1..2, text: Pending}\n- {calls: 3, text: Odd}\n- {text: Running}");
        let texts: Vec<_> = (1..=5).map(|c| s.reply(c, 0.0).text.unwrap()).collect();
        assert_eq!(texts, ["Pending", "Pending", "Odd", "Running", "Running"]);
    }

    #[test]
    fn after_sec_selects_by_elapsed_time() {
        let s = script("- {after_sec: 5, text: Ready}\n- {text: Waiting}");
        assert_eq!(s.reply(1, 4.999).text.as_deref(), Some("Waiting"));
        assert_eq!(s.reply(2, 5.0).text.as_deref(), Some("Ready"));
    }

    #[test]
    fn bytes_gives_exact_sizes_and_open_ranges_cover_later_calls() {
        let s = script("- {calls: '2..', bytes: 262145}\n- {text: small}");
        assert_eq!(s.reply(1, 0.0).text.as_deref(), Some("small"));
        assert_eq!(s.reply(9, 0.0).text.map(|t| t.len()), Some(262_145));
    }

    #[test]
    fn reply_sizes_are_bounded() {
        assert!(yaml_serde::from_str::<ToolScript>("- {bytes: 16777216}").is_ok());
        let err = yaml_serde::from_str::<ToolScript>("- {bytes: 16777217}").unwrap_err();
        assert!(err.to_string().contains("exceeds the limit"), "{err}");
    }

    #[test]
    fn bad_ranges_and_unknown_keys_are_rejected() {
        assert!(yaml_serde::from_str::<ToolScript>("- {calls: 'x..2', text: a}").is_err());
        assert!(yaml_serde::from_str::<ToolScript>("- {txt: a}").is_err());
    }
}
