//! The meter: counts cost units as an evaluation charges them and stops it at the cost limit or
//! at its deadline.
//!
//! Every operation charges *before* it does its work, with sizes that are known up front, so a
//! single large `contains` or regex cannot overshoot the limit. The limit is strict-greater, as in
//! cel-go: an evaluation whose cost equals the limit completes. The deadline is read from an
//! injectable monotonic [`Clock`] every [`DEADLINE_CHECK_UNITS`] charged units, and by long scans
//! and loops through [`Meter::check_deadline`], so tests can drive time deterministically.

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crate::cost::CostModel;

/// The default wall-clock budget of one evaluation (SPEC T2, E12).
pub const DEFAULT_DEADLINE: Duration = Duration::from_millis(250);

/// How many charged units may pass between two reads of the clock. One unit is roughly 50–100 ns
/// of work, so this is well under a millisecond between checks.
pub const DEADLINE_CHECK_UNITS: u64 = 4096;

/// Charged units after which the meter first reads the clock and starts the deadline. Reading a
/// clock costs about as much as a whole cheap filter, so filters that stay below this never read
/// it; any charge that crosses it (a large scan included) starts the clock before its work runs,
/// so the work done off the clock is at most this many units of cheap operations.
pub const CLOCK_START_UNITS: u64 = 256;

/// A monotonic clock.
pub trait Clock: Send + Sync {
    /// Time elapsed since some fixed origin; never decreases.
    fn now(&self) -> Duration;
}

/// The system's monotonic clock.
#[derive(Clone, Copy, Debug)]
pub struct SystemClock {
    origin: Instant,
}

impl SystemClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        Self {
            origin: Instant::now(),
        }
    }
}

impl Default for SystemClock {
    fn default() -> Self {
        Self::new()
    }
}

impl Clock for SystemClock {
    fn now(&self) -> Duration {
        self.origin.elapsed()
    }
}

/// A clock for tests: time moves only when told to, or by a fixed step at every read (so a test
/// can make "time pass" while an evaluation runs, without sleeping).
#[derive(Debug, Default)]
pub struct ManualClock {
    nanos: AtomicU64,
    step_nanos: u64,
}

impl ManualClock {
    /// A clock at zero that does not move by itself.
    pub fn new() -> Self {
        Self::default()
    }

    /// A clock at zero that advances by `step` every time it is read.
    pub fn stepping(step: Duration) -> Self {
        Self {
            nanos: AtomicU64::new(0),
            step_nanos: step.as_nanos() as u64,
        }
    }

    /// Moves the clock forward.
    pub fn advance(&self, by: Duration) {
        self.nanos
            .fetch_add(by.as_nanos() as u64, Ordering::Relaxed);
    }
}

impl Clock for ManualClock {
    fn now(&self) -> Duration {
        Duration::from_nanos(self.nanos.fetch_add(self.step_nanos, Ordering::Relaxed))
    }
}

/// Why an evaluation was stopped. Unlike a CEL error, a stop is never absorbed by `&&`, `||` or a
/// comprehension: it ends the evaluation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Stop {
    /// The next operation would have taken the cost past the limit.
    #[error(
        "cost limit exceeded: the evaluation would cost {} units",
        crate::cost::group(*.cost)
    )]
    CostLimit {
        /// The cost the evaluation would have reached.
        cost: u64,
    },
    /// The deadline passed.
    #[error("deadline exceeded after {} cost units", crate::cost::group(*.cost))]
    Deadline {
        /// The cost charged when the deadline was noticed.
        cost: u64,
    },
    /// The next value built would have taken the evaluation past
    /// [`MEMORY_LIMIT`](crate::cost::table::MEMORY_LIMIT) bytes.
    #[error(
        "memory limit exceeded: the evaluation would build {bytes} bytes, more than {}",
        crate::cost::table::MEMORY_LIMIT
    )]
    Memory {
        /// The bytes the evaluation would have built.
        bytes: u64,
        /// The cost charged until then.
        cost: u64,
    },
}

/// Limits of one evaluation.
#[derive(Clone)]
pub struct Limits {
    /// The cost limit in units; `None` disables it so the deadline alone stops work.
    pub cost: Option<u64>,
    /// Wall-clock budget.
    pub deadline: Duration,
    /// Where time comes from.
    pub clock: Arc<dyn Clock>,
    /// Which parts of the cost model are charged; the estimator must use the same.
    pub model: CostModel,
    /// The time reserved before the deadline for freeing what the evaluation built, in
    /// nanoseconds a byte ([`FREE_NANOS_PER_BYTE`] by default; see [`teardown`]). A build that
    /// frees more slowly, such as the fuzz build with its coverage instrumentation, reserves more.
    pub free_nanos_per_byte: u64,
}

impl std::fmt::Debug for Limits {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Limits")
            .field("cost", &self.cost)
            .field("deadline", &self.deadline)
            .field("model", &self.model)
            .field("free_nanos_per_byte", &self.free_nanos_per_byte)
            .finish_non_exhaustive()
    }
}

impl Default for Limits {
    /// The default cost limit, 250 ms, the system clock.
    fn default() -> Self {
        Self::with_clock_of(Arc::new(SystemClock::new()))
    }
}

impl Limits {
    /// The default cost limit and deadline with `clock`. Unlike [`Limits::default`] this never
    /// reads the system clock, which a host without one (WebAssembly in a browser or Node,
    /// where `std::time::Instant` panics) must avoid: every limit built inside the analyzer
    /// (constant folding, the witness search) starts here.
    pub fn with_clock_of(clock: Arc<dyn Clock>) -> Self {
        Self {
            cost: Some(crate::cost::table::DEFAULT_COST_LIMIT),
            deadline: DEFAULT_DEADLINE,
            clock,
            model: CostModel::FULL,
            free_nanos_per_byte: FREE_NANOS_PER_BYTE,
        }
    }

    /// Sets the cost limit (`None` = no cost limit).
    #[must_use]
    pub fn with_cost(mut self, cost: Option<u64>) -> Self {
        self.cost = cost;
        self
    }

    /// Sets the deadline.
    #[must_use]
    pub fn with_deadline(mut self, deadline: Duration) -> Self {
        self.deadline = deadline;
        self
    }

    /// Sets the cost model.
    #[must_use]
    pub fn with_model(mut self, model: CostModel) -> Self {
        self.model = model;
        self
    }

    /// Sets the clock.
    #[must_use]
    pub fn with_clock(mut self, clock: Arc<dyn Clock>) -> Self {
        self.clock = clock;
        self
    }

    /// Sets the time reserved for freeing what was built, in nanoseconds a byte.
    #[must_use]
    pub fn with_free_nanos_per_byte(mut self, nanos: u64) -> Self {
        self.free_nanos_per_byte = nanos;
        self
    }
}

/// The running cost of one evaluation and the limits it is held to.
pub struct Meter<'a> {
    cost: u64,
    limit: Option<u64>,
    /// The budget until the clock starts, then the clock time at which it ends.
    deadline: Duration,
    started: bool,
    /// Work done so far in cost units: everything charged, plus work that the cost model prices
    /// below its real size (see [`Meter::note_work`]). The clock is read as this grows.
    work: u64,
    next_check: u64,
    /// Bytes of strings, lists and maps built so far (see [`Meter::build`]).
    built: u64,
    /// See [`Limits::free_nanos_per_byte`].
    free_nanos_per_byte: u64,
    /// A buffer in which small concatenations are assembled before their shared copy is made
    /// (`bulk::join_str`); empty until the first.
    pub(crate) scratch: String,
    clock: &'a dyn Clock,
    model: CostModel,
}

impl<'a> Meter<'a> {
    /// A meter whose deadline is `limits.deadline` after the clock starts (see
    /// [`CLOCK_START_UNITS`]).
    pub fn new(limits: &'a Limits) -> Self {
        let clock: &dyn Clock = limits.clock.as_ref();
        Self {
            cost: 0,
            limit: limits.cost,
            deadline: limits.deadline,
            started: false,
            work: 0,
            next_check: CLOCK_START_UNITS,
            built: 0,
            free_nanos_per_byte: limits.free_nanos_per_byte,
            scratch: String::new(),
            clock,
            model: limits.model,
        }
    }

    /// The cost model this meter charges by.
    pub fn model(&self) -> CostModel {
        self.model
    }

    /// Cost charged so far.
    pub fn cost(&self) -> u64 {
        self.cost
    }

    /// Charges `units` before the work they pay for. Stops when the total would exceed the limit
    /// (the units are then not added), and reads the clock every [`DEADLINE_CHECK_UNITS`].
    #[inline]
    pub fn charge(&mut self, units: u64) -> Result<(), Stop> {
        let total = self.cost.saturating_add(units);
        if let Some(limit) = self.limit {
            if total > limit {
                return Err(Stop::CostLimit { cost: total });
            }
        }
        self.cost = total;
        self.note_work(units)
    }

    /// Counts `bytes` of a value about to be built, before it is built; stops when the total
    /// would pass [`MEMORY_LIMIT`](crate::cost::table::MEMORY_LIMIT), whatever the cost limit.
    /// Bytes are never given back: the count bounds the peak from above.
    #[inline]
    pub fn build(&mut self, bytes: u64) -> Result<(), Stop> {
        let total = self.built.saturating_add(bytes);
        if total > crate::cost::table::MEMORY_LIMIT {
            return Err(Stop::Memory {
                bytes: total,
                cost: self.cost,
            });
        }
        self.built = total;
        Ok(())
    }

    /// Bytes built so far.
    pub fn built(&self) -> u64 {
        self.built
    }

    /// Counts work that is not charged (or charged below its size, such as the `CALL` of
    /// `size()` on a long string, which counts code points), so the clock is still read every
    /// [`DEADLINE_CHECK_UNITS`] units of real work.
    #[inline]
    pub fn note_work(&mut self, units: u64) -> Result<(), Stop> {
        self.work = self.work.saturating_add(units);
        if self.work >= self.next_check {
            self.next_check = self.work.saturating_add(DEADLINE_CHECK_UNITS);
            self.check_deadline()?;
        }
        Ok(())
    }

    /// Reads the clock and stops if the deadline has passed (the first read starts the clock).
    /// Long scans and loops call this between chunks of work.
    pub fn check_deadline(&mut self) -> Result<(), Stop> {
        let now = self.clock.now();
        if !self.started {
            self.started = true;
            self.deadline = now.saturating_add(self.deadline);
            return Ok(());
        }
        // What the evaluation built is freed before it ends, after the last read of the clock:
        // the clock is read as if that were already done, at one nanosecond a byte built (the
        // `hostile` fuzz target found an evaluation stopped at the deadline that then spent 10 ms
        // freeing 300,000 small lists, ending at 260.7 ms).
        if now.saturating_add(teardown(self.built, self.free_nanos_per_byte)) >= self.deadline {
            return Err(Stop::Deadline { cost: self.cost });
        }
        Ok(())
    }
}

/// The most time a release build takes to free a built byte (decision 0006): 33 ms are reserved
/// at the 32 MiB cap.
pub const FREE_NANOS_PER_BYTE: u64 = 1;

/// The time reserved for freeing `built` bytes at `nanos_per_byte`.
pub const fn teardown(built: u64, nanos_per_byte: u64) -> Duration {
    Duration::from_nanos(built.saturating_mul(nanos_per_byte))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(cost: Option<u64>, clock: Arc<dyn Clock>) -> Limits {
        Limits::default().with_cost(cost).with_clock(clock)
    }

    #[test]
    fn the_deadline_leaves_time_to_free_what_was_built() {
        let clock = Arc::new(ManualClock::new());
        let limits = limits(None, clock.clone()).with_deadline(Duration::from_millis(250));
        let mut meter = Meter::new(&limits);
        meter.check_deadline().unwrap();
        clock.advance(Duration::from_millis(230));
        meter.build(10 << 20).unwrap();
        // 230 ms and 10.5 ms to free 10 MiB: still inside 250 ms.
        assert_eq!(meter.check_deadline(), Ok(()));
        meter.build(10 << 20).unwrap();
        // 230 ms and 21 ms: the evaluation would end past its deadline.
        assert!(matches!(meter.check_deadline(), Err(Stop::Deadline { .. })));
    }

    #[test]
    fn a_slower_build_reserves_more_time_to_free() {
        let clock = Arc::new(ManualClock::new());
        let limits = limits(None, clock.clone())
            .with_deadline(Duration::from_millis(250))
            .with_free_nanos_per_byte(4);
        let mut meter = Meter::new(&limits);
        meter.check_deadline().unwrap();
        clock.advance(Duration::from_millis(200));
        meter.build(10 << 20).unwrap();
        // 200 ms and 42 ms to free 10 MiB at 4 ns a byte: inside 250 ms.
        assert_eq!(meter.check_deadline(), Ok(()));
        meter.build(2 << 20).unwrap();
        // 200 ms and 50.3 ms: past it (at one nanosecond a byte, 12.6 ms would have fit).
        assert!(matches!(meter.check_deadline(), Err(Stop::Deadline { .. })));
    }

    #[test]
    fn limit_is_strict_greater() {
        let limits = limits(Some(10), Arc::new(ManualClock::new()));
        let mut meter = Meter::new(&limits);
        meter.charge(4).unwrap();
        meter.charge(6).unwrap();
        assert_eq!(meter.cost(), 10);
        assert_eq!(meter.charge(1), Err(Stop::CostLimit { cost: 11 }));
        assert_eq!(meter.cost(), 10);
    }

    #[test]
    fn deadline_is_read_every_few_thousand_units() {
        let clock = Arc::new(ManualClock::new());
        let limits = limits(None, clock.clone()).with_deadline(Duration::from_millis(5));
        let mut meter = Meter::new(&limits);
        // The first crossing of the start threshold starts the clock.
        meter.charge(CLOCK_START_UNITS).unwrap();
        clock.advance(Duration::from_millis(10));
        // Below the check interval the clock is not read, so the charge succeeds.
        meter.charge(DEADLINE_CHECK_UNITS - 1).unwrap();
        assert_eq!(
            meter.charge(1),
            Err(Stop::Deadline {
                cost: CLOCK_START_UNITS + DEADLINE_CHECK_UNITS
            })
        );
    }

    #[test]
    fn cheap_evaluations_never_read_the_clock() {
        // A clock that moves an hour per read: any read past the start would stop the meter.
        let clock = Arc::new(ManualClock::stepping(Duration::from_secs(3600)));
        let limits = limits(None, clock);
        let mut meter = Meter::new(&limits);
        meter.charge(CLOCK_START_UNITS - 1).unwrap();
        assert_eq!(
            meter.charge(1),
            Ok(()),
            "the first read only starts the clock"
        );
        assert!(meter.charge(DEADLINE_CHECK_UNITS).is_err());
    }

    #[test]
    fn uncharged_work_reads_the_clock_too() {
        let clock = Arc::new(ManualClock::stepping(Duration::from_secs(3600)));
        let limits = limits(Some(10), clock);
        let mut meter = Meter::new(&limits);
        meter.note_work(CLOCK_START_UNITS).unwrap();
        assert!(meter.note_work(DEADLINE_CHECK_UNITS).is_err());
        assert_eq!(meter.cost(), 0, "work is not cost");
    }

    #[test]
    fn memory_is_capped_whatever_the_cost_limit() {
        let limits = limits(None, Arc::new(ManualClock::new()));
        let mut meter = Meter::new(&limits);
        let cap = crate::cost::table::MEMORY_LIMIT;
        meter.build(cap - 1).unwrap();
        meter.build(1).unwrap();
        assert_eq!(
            meter.build(1),
            Err(Stop::Memory {
                bytes: cap + 1,
                cost: 0
            })
        );
        assert_eq!(meter.built(), cap);
    }

    #[test]
    fn stepping_clock_advances_per_read() {
        let clock = ManualClock::stepping(Duration::from_millis(1));
        assert_eq!(clock.now(), Duration::ZERO);
        assert_eq!(clock.now(), Duration::from_millis(1));
    }
}
