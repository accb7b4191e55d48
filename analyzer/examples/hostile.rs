//! Runs hostile cases (`ozcheck_analyzer::hostile`) for a while by the real clock and reports
//! the exec count, the slowest evaluation and the largest growth of resident memory in one case: the long run of the
//! `hostile` fuzz target's property without libFuzzer.
//!
//! `nice -n 10 cargo run --release -p ozcheck-analyzer --example hostile -- SECONDS [FIRST_SEED]`
//!
//! `… --example hostile -- --replay FILE…` runs the fuzz target's saved inputs (its
//! `crash-…` files, `corpus/regressions/hostile/*.bin`) in this build instead, five times each,
//! printing every evaluation's end and the longest time.
//!
//! Exits 1 when a case fails (a panic, an accepted filter stopped on cost) or an evaluation
//! ends later than 255 ms after its start; the case's seed and expression are printed.

use std::time::{Duration, Instant};

use ozcheck_analyzer::hostile::hostile_case;
use ozcheck_analyzer::testgen::Rng;

/// The promise: no evaluation ends later than this after its start.
const BOUND: Duration = Duration::from_millis(255);

fn case_bytes(seed: u64) -> Vec<u8> {
    let mut rng = Rng::new(seed);
    let len = 16 + rng.below(240) as usize;
    (0..len).map(|_| rng.next_u64() as u8).collect()
}

/// A field of `/proc/self/status` (Linux) in KiB: `VmRSS` (resident now) or `VmHWM` (peak).
fn status_kib(field: &str) -> Option<u64> {
    let status = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = status.lines().find(|l| l.starts_with(field))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

/// Resets the peak to the current resident size (Linux: `5` to `/proc/self/clear_refs`).
fn reset_peak() {
    let _ = std::fs::write("/proc/self/clear_refs", "5");
}

/// Runs each file's bytes as one hostile case, five times, and prints what happened.
fn replay(files: &[String]) {
    let mut slow = false;
    for file in files {
        let data = std::fs::read(file).unwrap_or_else(|e| panic!("{file}: {e}"));
        for _ in 0..5 {
            match hostile_case(&data) {
                Ok(outcome) => {
                    println!(
                        "{file}: {:?} {:?} for {}",
                        outcome.elapsed, outcome.ends, outcome.source
                    );
                    slow |= outcome.elapsed > BOUND;
                }
                Err(failure) => {
                    println!("FAIL {file}: {failure}");
                    std::process::exit(1);
                }
            }
        }
    }
    std::process::exit(i32::from(slow));
}

fn main() {
    let replaying: Vec<String> = std::env::args().skip(1).collect();
    if replaying.first().map(String::as_str) == Some("--replay") {
        replay(&replaying[1..]);
    }
    let mut args = std::env::args().skip(1);
    let seconds: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(60);
    let first: u64 = args.next().and_then(|s| s.parse().ok()).unwrap_or(1);
    let started = Instant::now();
    let (mut cases, mut evaluated) = (0u64, 0u64);
    let mut slowest = (Duration::ZERO, String::new(), 0u64);
    let mut ends = std::collections::BTreeMap::<&str, u64>::new();
    let mut seed = first;
    let mut most_memory = (0u64, 0u64);
    while started.elapsed() < Duration::from_secs(seconds) {
        let data = case_bytes(seed);
        reset_peak();
        let resident = status_kib("VmRSS:").unwrap_or(0);
        let outcome = match std::panic::catch_unwind(|| hostile_case(&data)) {
            Ok(Ok(outcome)) => outcome,
            Ok(Err(failure)) => {
                println!("FAIL seed {seed}: {failure}");
                std::process::exit(1);
            }
            Err(_) => {
                println!("PANIC seed {seed}");
                std::process::exit(1);
            }
        };
        let grown = status_kib("VmHWM:").unwrap_or(0).saturating_sub(resident);
        if grown > most_memory.0 {
            most_memory = (grown, seed);
        }
        cases += 1;
        evaluated += u64::from(!outcome.ends.is_empty());
        for end in &outcome.ends {
            *ends.entry(end).or_default() += 1;
        }
        if outcome.elapsed > slowest.0 {
            slowest = (outcome.elapsed, outcome.source.clone(), seed);
        }
        if outcome.elapsed > BOUND {
            println!(
                "SLOW seed {seed}: {:?} > {BOUND:?}\nfilter: {}",
                outcome.elapsed, outcome.source
            );
            std::process::exit(1);
        }
        seed += 1;
    }
    println!("cases {cases} (seeds {first}..{seed}), evaluated {evaluated}, ends {ends:?}");
    println!(
        "slowest {:?} (seed {}): {}",
        slowest.0, slowest.2, slowest.1
    );
    println!(
        "largest growth of resident memory in one case: {} KiB (seed {}); peak {} KiB",
        most_memory.0,
        most_memory.1,
        status_kib("VmHWM:").unwrap_or(0)
    );
}
