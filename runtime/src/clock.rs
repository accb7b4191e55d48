//! Time for the runtime: an injected [`Clock`] so that tests and conformance scenarios move time
//! by hand, and UTC timestamps in milliseconds that the store persists.
//!
//! Deadlines are wall-clock instants stored with each wait, so a runtime that starts after a
//! crash can fire the deadlines that passed while it was down. The calendar is chrono's, as in
//! the analyzer's timestamps.

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
        // Exactly these two shapes: a four-digit year, UTC, whole seconds or three fraction
        // digits (chrono's `%Y` alone would take a sign or more digits).
        if !text.bytes().take(4).all(|b| b.is_ascii_digit()) {
            return None;
        }
        let format = match text.len() {
            20 => "%Y-%m-%dT%H:%M:%SZ",
            24 => "%Y-%m-%dT%H:%M:%S%.3fZ",
            _ => return None,
        };
        let time = chrono::NaiveDateTime::parse_from_str(text, format).ok()?;
        Some(Timestamp(time.and_utc().timestamp_millis()))
    }

    /// Formats as `YYYY-MM-DDTHH:MM:SSZ`, with `.fff` only when there are milliseconds.
    pub fn to_rfc3339(self) -> String {
        let Some(time) = chrono::DateTime::from_timestamp_millis(self.0) else {
            return format!("@{}ms", self.0);
        };
        let format = if self.0.rem_euclid(1000) == 0 {
            "%Y-%m-%dT%H:%M:%SZ"
        } else {
            "%Y-%m-%dT%H:%M:%S%.3fZ"
        };
        time.format(format).to_string()
    }
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
            "2026-02-30T00:00:00Z",
            "2026-01-01T00:00:00+01:00",
            "2026-01-01T00:00:00.25Z",
            "+026-01-01T00:00:00Z",
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
