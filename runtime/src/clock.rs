//! Time for the runtime: an injected [`Clock`] so that tests and conformance scenarios move time
//! by hand, and UTC timestamps in milliseconds that the store persists.
//!
//! Deadlines are wall-clock instants stored with each wait, so a runtime that starts after a
//! crash can fire the deadlines that passed while it was down.

use std::sync::Arc;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, UTC.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Default)]
pub struct Timestamp(pub i64);

/// One day, the retention of events for look-back.
pub const DAY: Duration = Duration::from_secs(24 * 3600);

impl Timestamp {
    /// This instant plus `d`, saturating.
    #[must_use]
    pub fn plus(self, d: Duration) -> Timestamp {
        let ms = i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        Timestamp(self.0.saturating_add(ms))
    }

    /// This instant minus `d`, saturating.
    #[must_use]
    pub fn minus(self, d: Duration) -> Timestamp {
        let ms = i64::try_from(d.as_millis()).unwrap_or(i64::MAX);
        Timestamp(self.0.saturating_sub(ms))
    }

    /// The time from `self` until `later`, zero when `later` is not later.
    pub fn until(self, later: Timestamp) -> Duration {
        Duration::from_millis(u64::try_from(later.0 - self.0).unwrap_or(0))
    }

    /// The calendar minute this instant falls in (minutes since the epoch).
    pub fn minute(self) -> i64 {
        self.0.div_euclid(60_000)
    }

    /// Parses `YYYY-MM-DDTHH:MM:SSZ` (optionally with `.fff` milliseconds).
    pub fn parse_rfc3339(text: &str) -> Option<Timestamp> {
        let b = text.as_bytes();
        if b.len() < 20 || !text.ends_with('Z') {
            return None;
        }
        let num = |r: std::ops::Range<usize>| -> Option<i64> {
            let s = text.get(r)?;
            if !s.bytes().all(|c| c.is_ascii_digit()) {
                return None;
            }
            s.parse().ok()
        };
        if b[4] != b'-' || b[7] != b'-' || b[10] != b'T' || b[13] != b':' || b[16] != b':' {
            return None;
        }
        let (year, month, day) = (num(0..4)?, num(5..7)?, num(8..10)?);
        let (hour, minute, second) = (num(11..13)?, num(14..16)?, num(17..19)?);
        let ms = match &text[19..text.len() - 1] {
            "" => 0,
            frac if frac.len() == 4 && frac.starts_with('.') => num(20..23)?,
            _ => return None,
        };
        if !(1..=12).contains(&month)
            || !(1..=31).contains(&day)
            || hour > 23
            || minute > 59
            || second > 59
        {
            return None;
        }
        let days = days_from_civil(year, month, day);
        Some(Timestamp(
            ((days * 24 + hour) * 60 + minute) * 60_000 + second * 1000 + ms,
        ))
    }

    /// Formats as `YYYY-MM-DDTHH:MM:SSZ`, with `.fff` only when there are milliseconds.
    pub fn to_rfc3339(self) -> String {
        let days = self.0.div_euclid(86_400_000);
        let rest = self.0.rem_euclid(86_400_000);
        let (y, mo, d) = civil_from_days(days);
        let (h, mi, s, ms) = (
            rest / 3_600_000,
            rest / 60_000 % 60,
            rest / 1000 % 60,
            rest % 1000,
        );
        if ms == 0 {
            format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}Z")
        } else {
            format!("{y:04}-{mo:02}-{d:02}T{h:02}:{mi:02}:{s:02}.{ms:03}Z")
        }
    }
}

// Howard Hinnant's days-from-civil algorithm (proleptic Gregorian calendar).
fn days_from_civil(y: i64, m: i64, d: i64) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (m + 9) % 12;
    let doy = (153 * mp + 2) / 5 + d - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

fn civil_from_days(z: i64) -> (i64, i64, i64) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

/// Where the runtime reads the time. Production reads the system clock; tests and conformance
/// scenarios use a [`ManualClock`] that only moves when told to.
pub trait Clock: Send + Sync + 'static {
    /// The current instant.
    fn now(&self) -> Timestamp;
}

/// The system's wall clock.
#[derive(Clone, Copy, Debug, Default)]
pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> Timestamp {
        let since = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap_or_default();
        Timestamp(i64::try_from(since.as_millis()).unwrap_or(i64::MAX))
    }
}

/// A clock that stands still until [`ManualClock::set`] or [`ManualClock::advance`] moves it.
/// Clones share the same time.
#[derive(Clone, Debug, Default)]
pub struct ManualClock {
    now: Arc<AtomicI64>,
}

impl ManualClock {
    /// A clock standing at `start`.
    pub fn new(start: Timestamp) -> Self {
        Self {
            now: Arc::new(AtomicI64::new(start.0)),
        }
    }

    /// Moves the clock to `to` (never backwards).
    pub fn set(&self, to: Timestamp) {
        self.now.fetch_max(to.0, Ordering::SeqCst);
    }

    /// Moves the clock forward by `by`.
    pub fn advance(&self, by: Duration) {
        let to = self.now().plus(by);
        self.set(to);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Timestamp {
        Timestamp(self.now.load(Ordering::SeqCst))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_round_trips() {
        for text in [
            "2026-01-01T00:00:00Z",
            "1970-01-01T00:00:00Z",
            "2024-02-29T23:59:59.250Z",
            "2026-11-30T10:48:50Z",
        ] {
            let t = Timestamp::parse_rfc3339(text).unwrap();
            assert_eq!(t.to_rfc3339(), text);
        }
        assert_eq!(
            Timestamp::parse_rfc3339("1970-01-02T00:00:01Z"),
            Some(Timestamp(86_401_000))
        );
    }

    #[test]
    fn rfc3339_refuses_malformed_text() {
        for text in [
            "",
            "2026-01-01",
            "2026-13-01T00:00:00Z",
            "2026-01-01T00:00:00+01:00",
        ] {
            assert_eq!(Timestamp::parse_rfc3339(text), None, "{text}");
        }
    }

    #[test]
    fn manual_clock_moves_only_forward() {
        let c = ManualClock::new(Timestamp(1000));
        c.advance(Duration::from_secs(1));
        assert_eq!(c.now(), Timestamp(2000));
        c.set(Timestamp(10));
        assert_eq!(c.now(), Timestamp(2000));
    }
}
