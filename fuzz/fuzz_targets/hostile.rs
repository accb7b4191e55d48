//! Hostile filters and events (`ozcheck_analyzer::hostile`): expressions and `matches` patterns
//! from the whole grammar over events that fill their bounds. Every evaluation (cost limit off,
//! then on) must end within 255 ms of its start by the real clock, the heap must never grow by
//! more than the memory cap plus the regex engines' own bound, and nothing may panic; a filter
//! the static check accepts must never stop on cost.
#![no_main]

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use ozcheck_analyzer::cost::table::MEMORY_LIMIT;
use ozcheck_analyzer::hostile::hostile_case;

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

fuzz_target!(|data: &[u8]| {
    let before = LIVE.load(Ordering::Relaxed);
    PEAK.store(before, Ordering::Relaxed);
    let outcome = hostile_case(data).unwrap_or_else(|failure| panic!("{failure}"));
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
