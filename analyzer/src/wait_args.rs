//! The grammar of the arguments of an event wait (`oz.wait_for_event` and a flow's
//! `wait_for_event` step): `timeout`, `since`, `types`, `subject` and `source`.
//!
//! The lint and the runtime both validate these arguments, and the documents require that they
//! refuse the same values with the same messages (E1: `1h30m` and `1.5h` are refused "by the lint
//! and the runtime alike"). So there is exactly one implementation, here, with no I/O; the lint
//! maps a [`WaitArgError`] to a finding at the value's position, the runtime to a tool error.
//!
//! Decisions where the documents are silent (also stated on each item):
//! - a timeout of zero (`0s`) is refused: a wait that ends before it starts is a mistake;
//! - the number may not carry a sign, spaces, `_` separators or an exponent;
//! - a type name and a subject may not be empty; a subject longer than 256 bytes is allowed here
//!   (a source may declare larger header bounds), the lint warns about it separately if at all.

use std::fmt;
use std::time::Duration;

/// The timeout of a wait when none is given: one hour.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60 * 60);

/// The longest timeout a wait may have: seven days.
pub const MAX_TIMEOUT: Duration = Duration::from_secs(7 * 24 * 60 * 60);

/// The units a duration may use, with their length in milliseconds. `ms` comes before `m` so
/// that the longest suffix wins.
const UNITS: [(&str, u64); 5] = [
    ("ms", 1),
    ("s", 1_000),
    ("m", 60_000),
    ("h", 3_600_000),
    ("d", 86_400_000),
];

/// Why a wait argument was refused. [`WaitArgError::code`] is the stable id the lint reports;
/// `Display` is the message both the lint and the runtime show; [`WaitArgError::help`] says how
/// to fix it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum WaitArgError {
    /// More than one number-and-unit pair, such as `1h30m`.
    CompoundTimeout {
        /// The value as written.
        value: String,
        /// The same length in the largest single unit that expresses it exactly, if any.
        suggestion: Option<String>,
    },
    /// A fractional number, such as `1.5h`.
    FractionalTimeout {
        /// The value as written.
        value: String,
        /// The same length in the largest single unit that expresses it exactly, if any.
        suggestion: Option<String>,
    },
    /// Longer than [`MAX_TIMEOUT`].
    TimeoutTooLong {
        /// The value as written.
        value: String,
    },
    /// Zero length.
    ZeroTimeout {
        /// The value as written.
        value: String,
    },
    /// Anything else that is not a whole number followed by one unit.
    InvalidTimeout {
        /// The value as written.
        value: String,
    },
    /// `since` is neither `job` nor `now`.
    InvalidSince {
        /// The value as written.
        value: String,
    },
    /// An empty string in `types`.
    EmptyType,
    /// An empty `subject`.
    EmptySubject,
    /// An empty `source`.
    EmptySource,
}

impl WaitArgError {
    /// The stable kebab-case id (the lint's rule id for this error).
    pub fn code(&self) -> &'static str {
        match self {
            WaitArgError::CompoundTimeout { .. } => "compound-timeout",
            WaitArgError::FractionalTimeout { .. } => "fractional-timeout",
            WaitArgError::TimeoutTooLong { .. } => "timeout-too-long",
            WaitArgError::ZeroTimeout { .. } | WaitArgError::InvalidTimeout { .. } => {
                "invalid-timeout"
            }
            WaitArgError::InvalidSince { .. } => "invalid-since",
            WaitArgError::EmptyType | WaitArgError::EmptySubject | WaitArgError::EmptySource => {
                "empty-wait-argument"
            }
        }
    }

    /// How to fix it.
    pub fn help(&self) -> String {
        let single = "write a whole number and one unit: ms, s, m, h or d (such as 30m, 2h or 2d)";
        match self {
            WaitArgError::CompoundTimeout { suggestion, .. }
            | WaitArgError::FractionalTimeout { suggestion, .. } => match suggestion {
                Some(s) => format!("write {s}"),
                None => single.to_owned(),
            },
            WaitArgError::TimeoutTooLong { .. } => {
                "a wait lasts at most 7d; wait again when it times out".to_owned()
            }
            WaitArgError::ZeroTimeout { .. } => {
                "give the wait some time, such as 30m, or leave timeout out for the default 1h"
                    .to_owned()
            }
            WaitArgError::InvalidTimeout { .. } => single.to_owned(),
            WaitArgError::InvalidSince { .. } => {
                "write `job` (events since the job started count, the default) or `now` (only events from now on)"
                    .to_owned()
            }
            WaitArgError::EmptyType => "remove the empty entry, or leave types out for any type".to_owned(),
            WaitArgError::EmptySubject => "leave subject out to wait on any subject".to_owned(),
            WaitArgError::EmptySource => {
                "name the event source, such as github-events".to_owned()
            }
        }
    }
}

impl fmt::Display for WaitArgError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WaitArgError::CompoundTimeout { value, .. } => write!(
                f,
                "timeout `{value}` combines several units; a timeout is a whole number and one unit"
            ),
            WaitArgError::FractionalTimeout { value, .. } => write!(
                f,
                "timeout `{value}` is not a whole number; a timeout is a whole number and one unit"
            ),
            WaitArgError::TimeoutTooLong { value } => {
                write!(f, "timeout `{value}` is longer than the 7d a wait may last")
            }
            WaitArgError::ZeroTimeout { value } => {
                write!(f, "timeout `{value}` is zero; the wait would end at once")
            }
            WaitArgError::InvalidTimeout { value } => write!(
                f,
                "timeout `{value}` is not a duration; a timeout is a whole number and one unit"
            ),
            WaitArgError::InvalidSince { value } => {
                write!(f, "since `{value}` is neither `job` nor `now`")
            }
            WaitArgError::EmptyType => f.write_str("an event type is empty"),
            WaitArgError::EmptySubject => f.write_str("the subject is empty"),
            WaitArgError::EmptySource => f.write_str("the source is empty"),
        }
    }
}

impl std::error::Error for WaitArgError {}

/// Which events count for a wait.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Since {
    /// Events since the job started count (the default).
    #[default]
    Job,
    /// Only events from the moment the wait starts count.
    Now,
}

impl Since {
    /// Parses `job` or `now` (exactly, lowercase).
    pub fn parse(value: &str) -> Result<Since, WaitArgError> {
        match value {
            "job" => Ok(Since::Job),
            "now" => Ok(Since::Now),
            _ => Err(WaitArgError::InvalidSince {
                value: value.to_owned(),
            }),
        }
    }

    /// The word as written in a wait's arguments.
    pub fn as_str(self) -> &'static str {
        match self {
            Since::Job => "job",
            Since::Now => "now",
        }
    }
}

/// Parses a wait's `timeout`: a whole number and one unit, more than zero, at most 7d.
pub fn parse_timeout(value: &str) -> Result<Duration, WaitArgError> {
    let duration = parse_duration(value)?;
    if duration > MAX_TIMEOUT {
        return Err(WaitArgError::TimeoutTooLong {
            value: value.to_owned(),
        });
    }
    Ok(duration)
}

/// Parses a duration in the same grammar as a wait's timeout, without the 7d bound (an agent's
/// own `limits.timeout` may be longer). Zero is refused.
pub fn parse_duration(value: &str) -> Result<Duration, WaitArgError> {
    let invalid = || WaitArgError::InvalidTimeout {
        value: value.to_owned(),
    };
    let parts = split_parts(value).ok_or_else(invalid)?;
    if parts.len() > 1 {
        let total = parts.iter().try_fold(0u128, |sum, p| {
            p.whole_millis().map(|ms| sum + u128::from(ms))
        });
        return Err(WaitArgError::CompoundTimeout {
            value: value.to_owned(),
            suggestion: total.and_then(suggest),
        });
    }
    let part = &parts[0];
    if part.fraction.is_some() {
        return Err(WaitArgError::FractionalTimeout {
            value: value.to_owned(),
            suggestion: part.exact_millis().and_then(suggest),
        });
    }
    // Digits beyond what fits in u64 are surely longer than any bound; report them as too long.
    let Ok(number) = part.whole.parse::<u64>() else {
        return Err(WaitArgError::TimeoutTooLong {
            value: value.to_owned(),
        });
    };
    let Some(millis) = number.checked_mul(part.unit_millis) else {
        return Err(WaitArgError::TimeoutTooLong {
            value: value.to_owned(),
        });
    };
    if millis == 0 {
        return Err(WaitArgError::ZeroTimeout {
            value: value.to_owned(),
        });
    }
    Ok(Duration::from_millis(millis))
}

/// Writes a duration in the largest single unit that expresses it exactly (`90m`, `2d`).
pub fn format_duration(duration: Duration) -> String {
    let millis = duration.as_millis();
    suggest(millis).unwrap_or_else(|| format!("{millis}ms"))
}

/// One number-and-unit pair as written.
struct Part<'a> {
    whole: &'a str,
    fraction: Option<&'a str>,
    unit_millis: u64,
}

impl Part<'_> {
    fn whole_millis(&self) -> Option<u64> {
        self.exact_millis().and_then(|ms| u64::try_from(ms).ok())
    }

    /// The pair's length in whole milliseconds, when the fraction comes out exact.
    fn exact_millis(&self) -> Option<u128> {
        let whole: u128 = if self.whole.is_empty() {
            0
        } else {
            self.whole.parse().ok()?
        };
        let unit = u128::from(self.unit_millis);
        let mut total = whole.checked_mul(unit)?;
        if let Some(fraction) = self.fraction {
            // Bounded so that 10^len cannot overflow; longer fractions are never exact anyway.
            if fraction.len() > 18 {
                return None;
            }
            let digits: u128 = if fraction.is_empty() {
                0
            } else {
                fraction.parse().ok()?
            };
            let scale = 10u128.pow(fraction.len() as u32);
            let scaled = digits.checked_mul(unit)?;
            if scaled % scale != 0 {
                return None;
            }
            total = total.checked_add(scaled / scale)?;
        }
        Some(total)
    }
}

/// Splits `1h30m` into its pairs, or `None` when the text is not a sequence of number-and-unit
/// pairs at all.
fn split_parts(value: &str) -> Option<Vec<Part<'_>>> {
    let mut parts = Vec::new();
    let mut rest = value;
    while !rest.is_empty() {
        let digits_end = rest
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len());
        let whole = &rest[..digits_end];
        rest = &rest[digits_end..];
        let mut fraction = None;
        if let Some(after_dot) = rest.strip_prefix('.') {
            let end = after_dot
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(after_dot.len());
            fraction = Some(&after_dot[..end]);
            rest = &after_dot[end..];
        }
        if whole.is_empty() && fraction.is_none_or(str::is_empty) {
            return None;
        }
        let (unit, unit_millis) = UNITS.iter().find(|(u, _)| rest.starts_with(u))?;
        rest = &rest[unit.len()..];
        parts.push(Part {
            whole,
            fraction,
            unit_millis: *unit_millis,
        });
    }
    (!parts.is_empty()).then_some(parts)
}

/// The largest single unit that writes `millis` exactly, as text.
fn suggest(millis: u128) -> Option<String> {
    if millis == 0 {
        return None;
    }
    UNITS
        .iter()
        .rev()
        .find(|(_, len)| millis % u128::from(*len) == 0)
        .map(|(unit, len)| format!("{}{unit}", millis / u128::from(*len)))
}

/// Checks one entry of `types`: a non-empty string.
pub fn validate_type(value: &str) -> Result<(), WaitArgError> {
    if value.is_empty() {
        return Err(WaitArgError::EmptyType);
    }
    Ok(())
}

/// Checks a `subject`: a non-empty string. (A flow step's subject may hold `${{ }}`; the
/// runtime checks the rendered text, the lint the text as written.)
pub fn validate_subject(value: &str) -> Result<(), WaitArgError> {
    if value.is_empty() {
        return Err(WaitArgError::EmptySubject);
    }
    Ok(())
}

/// Checks a `source`: a non-empty string.
pub fn validate_source(value: &str) -> Result<(), WaitArgError> {
    if value.is_empty() {
        return Err(WaitArgError::EmptySource);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn code(value: &str) -> &'static str {
        parse_timeout(value).unwrap_err().code()
    }

    #[test]
    fn accepts_one_unit() {
        assert_eq!(parse_timeout("30m"), Ok(Duration::from_secs(1800)));
        assert_eq!(parse_timeout("2h"), Ok(Duration::from_secs(7200)));
        assert_eq!(parse_timeout("2d"), Ok(Duration::from_secs(172_800)));
        assert_eq!(parse_timeout("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse_timeout("45s"), Ok(Duration::from_secs(45)));
        assert_eq!(parse_timeout("7d"), Ok(MAX_TIMEOUT));
        assert_eq!(parse_timeout("168h"), Ok(MAX_TIMEOUT));
    }

    #[test]
    fn refuses_compound_with_single_unit_help() {
        let err = parse_timeout("1h30m").unwrap_err();
        assert_eq!(err.code(), "compound-timeout");
        assert_eq!(err.help(), "write 90m");
        assert_eq!(
            err.to_string(),
            "timeout `1h30m` combines several units; a timeout is a whole number and one unit"
        );
        assert_eq!(parse_timeout("1d12h").unwrap_err().help(), "write 36h");
    }

    #[test]
    fn refuses_fractions_with_single_unit_help() {
        let err = parse_timeout("1.5h").unwrap_err();
        assert_eq!(err.code(), "fractional-timeout");
        assert_eq!(err.help(), "write 90m");
        assert_eq!(parse_timeout("0.5s").unwrap_err().help(), "write 500ms");
        // A fraction that no unit writes exactly gets the general help.
        let odd = parse_timeout("1.0001ms").unwrap_err();
        assert_eq!(odd.code(), "fractional-timeout");
        assert!(odd.help().starts_with("write a whole number"));
    }

    #[test]
    fn refuses_more_than_seven_days() {
        assert_eq!(code("8d"), "timeout-too-long");
        assert_eq!(code("169h"), "timeout-too-long");
        assert_eq!(code("604800001ms"), "timeout-too-long");
        assert_eq!(code("99999999999999999999999d"), "timeout-too-long");
        assert_eq!(code("18446744073709551615d"), "timeout-too-long");
        // The unbounded grammar for an agent's own limit takes long values.
        assert_eq!(parse_duration("26h"), Ok(Duration::from_secs(26 * 3600)));
        assert_eq!(parse_duration("30d"), Ok(Duration::from_secs(30 * 86_400)));
    }

    #[test]
    fn refuses_other_text() {
        for bad in [
            "", "h", "30", "30 m", " 30m", "30m ", "-5m", "+5m", "5M", "5min", "1_000ms", "1e3ms",
            "5w", ".h", "5.m.", "３０m",
        ] {
            assert_eq!(code(bad), "invalid-timeout", "{bad:?}");
        }
        assert_eq!(code("0s"), "invalid-timeout");
        assert_eq!(code("0ms"), "invalid-timeout");
    }

    #[test]
    fn since_is_job_or_now() {
        assert_eq!(Since::parse("job"), Ok(Since::Job));
        assert_eq!(Since::parse("now"), Ok(Since::Now));
        assert_eq!(Since::default(), Since::Job);
        let err = Since::parse("Now").unwrap_err();
        assert_eq!(err.code(), "invalid-since");
        assert_eq!(err.to_string(), "since `Now` is neither `job` nor `now`");
    }

    #[test]
    fn strings_may_not_be_empty() {
        assert_eq!(validate_type("check_suite"), Ok(()));
        assert_eq!(validate_type(""), Err(WaitArgError::EmptyType));
        assert_eq!(validate_subject(""), Err(WaitArgError::EmptySubject));
        assert_eq!(validate_source(""), Err(WaitArgError::EmptySource));
        assert_eq!(validate_source("github-events"), Ok(()));
    }

    #[test]
    fn formats_in_the_largest_exact_unit() {
        assert_eq!(format_duration(DEFAULT_TIMEOUT), "1h");
        assert_eq!(format_duration(Duration::from_secs(5400)), "90m");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
    }
}
