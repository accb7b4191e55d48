//! Timestamps and durations: RFC 3339 and `1h2m3.5s` parsing and formatting, range-checked
//! arithmetic, and the calendar accessors (`getFullYear`, `getHours`, …) in UTC, a fixed offset or
//! an IANA time zone. The calendar itself (dates of day counts, validity of dates, weekdays) is
//! chrono's, the one calendar of the workspace.
//!
//! Timestamps span CEL's range, 0001-01-01T00:00:00Z to 9999-12-31T23:59:59.999999999Z; durations
//! are signed 64-bit nanosecond counts (about ±292 years), as in cel-go. Every operation that could
//! leave those ranges reports an error instead of wrapping.

use std::fmt;

use chrono::{Datelike, NaiveDate, Offset, TimeZone, Timelike};

use super::value::brief_quoted;

/// Seconds from the Unix epoch to 0001-01-01T00:00:00Z.
const MIN_SECONDS: i64 = -62_135_596_800;
/// Seconds from the Unix epoch to 9999-12-31T23:59:59Z.
const MAX_SECONDS: i64 = 253_402_300_799;
const NANOS_PER_SECOND: i64 = 1_000_000_000;

/// A point in time: seconds and nanoseconds since the Unix epoch, in CEL's range.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Timestamp {
    secs: i64,
    nanos: u32,
}

/// A signed span of time in nanoseconds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration {
    nanos: i64,
}

/// A time error: out of range or unparsable.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TimeError(pub String);

impl fmt::Display for TimeError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

fn range_error() -> TimeError {
    TimeError("timestamp out of range".to_owned())
}

impl Timestamp {
    /// The earliest timestamp, 0001-01-01T00:00:00Z (cel-go's zero timestamp).
    pub const MIN: Timestamp = Timestamp {
        secs: MIN_SECONDS,
        nanos: 0,
    };

    /// A timestamp from seconds and nanoseconds since the epoch, if in range.
    pub fn new(secs: i64, nanos: u32) -> Result<Timestamp, TimeError> {
        if !(MIN_SECONDS..=MAX_SECONDS).contains(&secs) || nanos >= 1_000_000_000 {
            return Err(range_error());
        }
        Ok(Timestamp { secs, nanos })
    }

    /// Seconds since the epoch.
    pub fn seconds(self) -> i64 {
        self.secs
    }

    /// Parses RFC 3339 (`2009-02-13T23:31:30.123Z`, `…+01:00`).
    pub fn parse(text: &str) -> Result<Timestamp, TimeError> {
        parse_rfc3339(text.as_bytes())
            .ok_or_else(|| TimeError(format!("cannot parse timestamp {}", brief_quoted(text))))?
    }

    /// Formats as RFC 3339 in UTC with as few fraction digits as needed (trailing zeros
    /// dropped, as Go's `RFC3339Nano`).
    pub fn to_rfc3339(self) -> String {
        let t = civil(self.secs);
        let mut out = format!(
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}",
            t.year(),
            t.month(),
            t.day(),
            t.hour(),
            t.minute(),
            t.second()
        );
        push_fraction(&mut out, self.nanos);
        out.push('Z');
        out
    }

    /// `self + d`, range-checked.
    pub fn plus(self, d: Duration) -> Result<Timestamp, TimeError> {
        let total =
            i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos) + i128::from(d.nanos);
        Timestamp::from_total_nanos(total)
    }

    /// `self - d`, range-checked.
    pub fn minus(self, d: Duration) -> Result<Timestamp, TimeError> {
        let total =
            i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos) - i128::from(d.nanos);
        Timestamp::from_total_nanos(total)
    }

    /// `self - other` as a duration, range-checked.
    pub fn since(self, other: Timestamp) -> Result<Duration, TimeError> {
        let a = i128::from(self.secs) * 1_000_000_000 + i128::from(self.nanos);
        let b = i128::from(other.secs) * 1_000_000_000 + i128::from(other.nanos);
        i64::try_from(a - b)
            .map(|nanos| Duration { nanos })
            .map_err(|_| TimeError("duration out of range".to_owned()))
    }

    fn from_total_nanos(total: i128) -> Result<Timestamp, TimeError> {
        let secs = total.div_euclid(1_000_000_000);
        let nanos = total.rem_euclid(1_000_000_000) as u32;
        let secs = i64::try_from(secs).map_err(|_| range_error())?;
        Timestamp::new(secs, nanos)
    }

    /// The calendar fields of this instant in a time zone (`None` = UTC).
    pub fn fields(self, zone: Option<&str>) -> Result<Fields, TimeError> {
        let offset = match zone {
            None => 0,
            Some(name) => zone_offset(name, self.secs)?,
        };
        let t = civil(self.secs + offset);
        Ok(Fields {
            year: i64::from(t.year()),
            month: i64::from(t.month()),
            day: i64::from(t.day()),
            day_of_week: i64::from(t.weekday().num_days_from_sunday()),
            day_of_year: i64::from(t.ordinal0()),
            hours: i64::from(t.hour()),
            minutes: i64::from(t.minute()),
            seconds: i64::from(t.second()),
            millis: i64::from(self.nanos / 1_000_000),
        })
    }
}

/// Calendar fields of a timestamp in some zone.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Fields {
    /// Full year.
    pub year: i64,
    /// Month, 1–12.
    pub month: i64,
    /// Day of month, 1–31.
    pub day: i64,
    /// Day of week, 0 = Sunday.
    pub day_of_week: i64,
    /// Day of year, 0-based.
    pub day_of_year: i64,
    /// Hours, 0–23.
    pub hours: i64,
    /// Minutes, 0–59.
    pub minutes: i64,
    /// Seconds, 0–59.
    pub seconds: i64,
    /// Milliseconds, 0–999.
    pub millis: i64,
}

/// The UTC offset in seconds of a zone (`UTC`, `+05:30`, `-07:00`, or an IANA name) at an instant.
fn zone_offset(name: &str, secs: i64) -> Result<i64, TimeError> {
    if let Some(offset) = parse_fixed_offset(name.as_bytes()) {
        return Ok(offset);
    }
    // IANA names are at most 32 bytes; hashing a longer string to look it up would be work that
    // no charge pays for.
    if name.len() > 64 {
        return Err(TimeError(format!(
            "unknown time zone {}",
            brief_quoted(name)
        )));
    }
    let zone: chrono_tz::Tz = name
        .parse()
        .map_err(|_| TimeError(format!("unknown time zone {}", brief_quoted(name))))?;
    let utc = chrono::DateTime::from_timestamp(secs, 0).ok_or_else(range_error)?;
    Ok(i64::from(
        zone.offset_from_utc_datetime(&utc.naive_utc())
            .fix()
            .local_minus_utc(),
    ))
}

/// `+HH:MM`, `-HH:MM` or `HH:MM` as seconds.
fn parse_fixed_offset(s: &[u8]) -> Option<i64> {
    let (sign, rest) = match s.split_first()? {
        (b'+', rest) => (1, rest),
        (b'-', rest) => (-1, rest),
        _ => (1, s),
    };
    if rest.len() != 5 || rest[2] != b':' {
        return None;
    }
    let hours = digits(&rest[0..2])?;
    let minutes = digits(&rest[3..5])?;
    (hours < 24 && minutes < 60).then_some(sign * (hours * 3600 + minutes * 60))
}

fn digits(s: &[u8]) -> Option<i64> {
    if s.is_empty() || !s.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(
        s.iter()
            .fold(0i64, |acc, &d| acc * 10 + i64::from(d - b'0')),
    )
}

fn parse_rfc3339(s: &[u8]) -> Option<Result<Timestamp, TimeError>> {
    if s.len() < 20 || s[4] != b'-' || s[7] != b'-' || !matches!(s[10], b'T' | b't') {
        return None;
    }
    if s[13] != b':' || s[16] != b':' {
        return None;
    }
    let year = digits(&s[0..4])?;
    let month = digits(&s[5..7])?;
    let day = digits(&s[8..10])?;
    let hour = digits(&s[11..13])?;
    let minute = digits(&s[14..16])?;
    let second = digits(&s[17..19])?;
    let mut rest = &s[19..];
    let mut nanos = 0u32;
    if rest.first() == Some(&b'.') {
        let len = rest[1..].iter().take_while(|b| b.is_ascii_digit()).count();
        if len == 0 || len > 9 {
            return None;
        }
        let frac = digits(&rest[1..=len])?;
        nanos = (frac * 10i64.pow(9 - len as u32)) as u32;
        rest = &rest[1 + len..];
    }
    let offset = match rest {
        [b'Z' | b'z'] => 0,
        [b'+' | b'-', ..] => parse_fixed_offset(rest)?,
        _ => return None,
    };
    if hour > 23 || minute > 59 || second > 59 {
        return None;
    }
    let date = NaiveDate::from_ymd_opt(
        i32::try_from(year).ok()?,
        u32::try_from(month).ok()?,
        u32::try_from(day).ok()?,
    )?;
    let days = i64::from(date.num_days_from_ce()) - UNIX_EPOCH_DAYS_FROM_CE;
    let secs = days * 86_400 + hour * 3600 + minute * 60 + second - offset;
    Some(Timestamp::new(secs, nanos))
}

/// Days from 0001-01-01 (day 1 of the common era) to 1970-01-01.
const UNIX_EPOCH_DAYS_FROM_CE: i64 = 719_163;

/// The UTC calendar date and time of `secs` seconds since the epoch. Every instant in CEL's
/// range (and a day either side, where a zone offset may take it) is within chrono's.
fn civil(secs: i64) -> chrono::NaiveDateTime {
    chrono::DateTime::from_timestamp(secs, 0)
        .map(|t| t.naive_utc())
        .unwrap_or_default()
}

fn push_fraction(out: &mut String, nanos: u32) {
    if nanos == 0 {
        return;
    }
    let digits = format!("{nanos:09}");
    let trimmed = digits.trim_end_matches('0');
    out.push('.');
    out.push_str(trimmed);
}

impl Duration {
    /// A duration of `nanos` nanoseconds.
    pub const fn from_nanos(nanos: i64) -> Duration {
        Duration { nanos }
    }

    /// A duration of whole seconds, range-checked.
    pub fn from_seconds(secs: i64) -> Result<Duration, TimeError> {
        secs.checked_mul(NANOS_PER_SECOND)
            .map(Duration::from_nanos)
            .ok_or_else(|| TimeError("duration out of range".to_owned()))
    }

    /// Total nanoseconds.
    pub fn nanos(self) -> i64 {
        self.nanos
    }

    /// `self + other`, range-checked.
    pub fn checked_add(self, other: Duration) -> Result<Duration, TimeError> {
        self.nanos
            .checked_add(other.nanos)
            .map(Duration::from_nanos)
            .ok_or_else(|| TimeError("duration out of range".to_owned()))
    }

    /// `self - other`, range-checked.
    pub fn checked_sub(self, other: Duration) -> Result<Duration, TimeError> {
        self.nanos
            .checked_sub(other.nanos)
            .map(Duration::from_nanos)
            .ok_or_else(|| TimeError("duration out of range".to_owned()))
    }

    /// `-self`, range-checked.
    pub fn checked_neg(self) -> Result<Duration, TimeError> {
        self.nanos
            .checked_neg()
            .map(Duration::from_nanos)
            .ok_or_else(|| TimeError("duration out of range".to_owned()))
    }

    /// Parses Go-style durations: `1h2m3.5s`, `-1.5s`, `100ms`, `2us`, `3ns`, `0`.
    pub fn parse(text: &str) -> Result<Duration, TimeError> {
        parse_duration(text)
            .ok_or_else(|| TimeError(format!("cannot parse duration {}", brief_quoted(text))))
    }
}

fn parse_duration(text: &str) -> Option<Duration> {
    let (negative, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Some(Duration::from_nanos(0));
    }
    if rest.is_empty() {
        return None;
    }
    // Accumulated in i128 so that each term can be range-checked once at the end.
    let mut total: i128 = 0;
    while !rest.is_empty() {
        let int_len = rest.bytes().take_while(u8::is_ascii_digit).count();
        let int_part = &rest[..int_len];
        rest = &rest[int_len..];
        let mut frac_part = "";
        if let Some(after) = rest.strip_prefix('.') {
            let frac_len = after.bytes().take_while(u8::is_ascii_digit).count();
            frac_part = &after[..frac_len];
            rest = &after[frac_len..];
        }
        if int_part.is_empty() && frac_part.is_empty() {
            return None;
        }
        let unit_len = rest
            .char_indices()
            .find(|(_, c)| c.is_ascii_digit() || *c == '.')
            .map_or(rest.len(), |(i, _)| i);
        let unit: i128 = match &rest[..unit_len] {
            "ns" => 1,
            "us" | "µs" | "μs" => 1_000,
            "ms" => 1_000_000,
            "s" => 1_000_000_000,
            "m" => 60_000_000_000,
            "h" => 3_600_000_000_000,
            _ => return None,
        };
        rest = &rest[unit_len..];
        let whole: i128 = if int_part.is_empty() {
            0
        } else {
            int_part.parse().ok()?
        };
        total = total.checked_add(whole.checked_mul(unit)?)?;
        if !frac_part.is_empty() {
            let digits = &frac_part[..frac_part.len().min(18)];
            let frac: i128 = digits.parse().ok()?;
            let scale = 10i128.pow(digits.len() as u32);
            total = total.checked_add(frac * unit / scale)?;
        }
        if total > i128::from(i64::MAX) + 1 {
            return None;
        }
    }
    let total = if negative { -total } else { total };
    i64::try_from(total).ok().map(Duration::from_nanos)
}

impl fmt::Display for Duration {
    /// Seconds with as many fraction digits as needed and an `s` suffix (`3600s`, `-1.5s`).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let abs = self.nanos.unsigned_abs();
        let sign = if self.nanos < 0 { "-" } else { "" };
        let mut out = format!("{sign}{}", abs / 1_000_000_000);
        push_fraction(&mut out, (abs % 1_000_000_000) as u32);
        out.push('s');
        f.write_str(&out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips_and_checks_range() {
        let t = Timestamp::parse("2009-02-13T23:31:30.123Z").unwrap();
        assert_eq!(t.seconds(), 1_234_567_890);
        assert_eq!(t.to_rfc3339(), "2009-02-13T23:31:30.123Z");
        let shifted = Timestamp::parse("2009-02-13T23:31:30+01:00").unwrap();
        assert_eq!(shifted.seconds(), 1_234_567_890 - 3600);
        assert_eq!(
            Timestamp::parse("0001-01-01T00:00:00Z").unwrap().seconds(),
            MIN_SECONDS
        );
        assert!(Timestamp::parse("2009-02-30T00:00:00Z").is_err());
        assert!(Timestamp::parse("0001-01-01T00:00:00+01:00").is_err());
        let max = Timestamp::parse("9999-12-31T23:59:59.999999999Z").unwrap();
        assert!(max.plus(Duration::from_nanos(1)).is_err());
    }

    #[test]
    fn durations_parse_go_syntax() {
        assert_eq!(
            Duration::parse("1h2m3.5s").unwrap().nanos(),
            3_723_500_000_000
        );
        assert_eq!(Duration::parse("-1.5s").unwrap().to_string(), "-1.5s");
        assert_eq!(Duration::parse("100ms").unwrap().to_string(), "0.1s");
        assert!(Duration::parse("1d").is_err());
        assert!(Duration::parse("").is_err());
        assert!(Duration::parse("9999999999999h").is_err());
    }

    #[test]
    fn fields_follow_zones() {
        let t = Timestamp::parse("2009-02-13T23:31:30Z").unwrap();
        let utc = t.fields(None).unwrap();
        assert_eq!(
            (utc.year, utc.month, utc.day, utc.day_of_week),
            (2009, 2, 13, 5)
        );
        assert_eq!(utc.day_of_year, 43);
        let sydney = t.fields(Some("Australia/Sydney")).unwrap();
        assert_eq!(sydney.day, 14);
        let fixed = t.fields(Some("-07:00")).unwrap();
        assert_eq!(fixed.hours, 16);
        assert!(t.fields(Some("Mars/Olympus")).is_err());
    }
}
