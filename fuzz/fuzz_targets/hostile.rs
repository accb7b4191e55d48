//! Hostile filters and events (`ozcheck_analyzer::hostile`): expressions and `matches` patterns
//! from the whole grammar over events that fill their bounds. Every evaluation (cost limit off,
//! then on) must end within 255 ms of its start by the real clock, the heap must never grow by
//! more than the memory cap plus the regex engines' own bound, and nothing may panic; a filter
//! the static check accepts must never stop on cost.
//!
//! An evaluation stopped at its deadline still frees what it built, and the meter reserves time
//! for that before the deadline (`Limits::free_nanos_per_byte`, one nanosecond a byte, measured
//! on release builds). This build's coverage instrumentation frees several times more slowly, so
//! the target measures its own rate once, at start-up, and has the meter reserve that: the
//! 255 ms bound then holds this build to the same promise as a release build, not a looser one.
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use libfuzzer_sys::fuzz_target;
use ozcheck_analyzer::EventBounds;
use ozcheck_analyzer::cost::table::MEMORY_LIMIT;
use ozcheck_analyzer::eval::{Event, FREE_NANOS_PER_BYTE, Limits, Program};
use ozcheck_analyzer::hostile::hostile_case_freeing_at;
use ozcheck_analyzer::syntax::{self, ParseOptions};

/// Counts live heap bytes and their peak.
struct Counting;

static LIVE: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let live = LIVE.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(live, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        LIVE.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOC: Counting = Counting;

/// The regex engines' memory apart from built values: an NFA of at most 256 KiB and a lazy DFA
/// cache of at most 1 MiB per compiled pattern, with room for the event and the program.
const ENGINE_ALLOWANCE: usize = 8 << 20;

/// The nanoseconds this build takes to free a heap byte of built values, at least the release
/// rate: the most of three measurements of dropping 100,000 small lists (what the two findings in
/// `corpus/regressions/hostile` built), doubled, rounded up.
fn free_nanos_per_byte() -> u64 {
    static RATE: OnceLock<u64> = OnceLock::new();
    *RATE.get_or_init(|| {
        let source = "[0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(a, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\
            .map(b, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(c, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]\
            .map(d, [0, 1, 2, 3, 4, 5, 6, 7, 8, 9].map(e, [a, b, c, d, e])))))";
        let ast = syntax::parse(source, &ParseOptions::default()).expect("the calibration parses");
        let program = Program::new(ast).expect("the calibration compiles");
        let event = Event::from_json(
            include_str!("../../corpus/events/realistic.json"),
            &EventBounds::DEFAULT,
        )
        .expect("the realistic event is within bounds");
        let limits = Limits::default()
            .with_cost(None)
            .with_deadline(Duration::from_secs(60));
        let mut slowest = 0.0_f64;
        for _ in 0..3 {
            let before = LIVE.load(Ordering::Relaxed);
            let built = program
                .eval_event(&event, &limits)
                .expect("the calibration runs");
            let bytes = LIVE.load(Ordering::Relaxed).saturating_sub(before).max(1);
            let started = Instant::now();
            drop(built);
            let nanos = started.elapsed().as_nanos() as f64;
            slowest = slowest.max(nanos / bytes as f64);
        }
        let rate = ((slowest * 2.0).ceil() as u64).max(FREE_NANOS_PER_BYTE);
        eprintln!("hostile: this build frees {slowest:.2} ns a byte; the meter reserves {rate}");
        rate
    })
}

fuzz_target!(|data: &[u8]| {
    let rate = free_nanos_per_byte();
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let outcome = hostile_case_freeing_at(data, rate).unwrap_or_else(|failure| panic!("{failure}"));
    assert!(
        outcome.elapsed <= Duration::from_millis(255),
        "{:?} for {}",
        outcome.elapsed,
        outcome.source
    );
    let grown = PEAK.load(Ordering::Relaxed) - before;
    assert!(
        grown <= MEMORY_LIMIT as usize + ENGINE_ALLOWANCE,
        "{grown} bytes of heap for {}",
        outcome.source
    );
});
