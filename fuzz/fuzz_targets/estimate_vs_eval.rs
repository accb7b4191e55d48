//! Soundness under fuzzing, with the witness as the adversary: every 8 bytes of input seed one
//! case of the soundness property (a generated filter focused on one overload or shape, random
//! bounds, the filter's own witness and random events within them); the metered cost must never
//! exceed the static estimate's max. The same check runs in the normal test suite
//! (`analyzer/tests/soundness.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ozcheck_analyzer::testgen::{Coverage, focus, soundness_case};

fuzz_target!(|data: &[u8]| {
    let mut coverage = Coverage::new();
    for chunk in data.chunks(8).take(4) {
        let mut seed = [0u8; 8];
        seed[..chunk.len()].copy_from_slice(chunk);
        let seed = u64::from_le_bytes(seed);
        if let Err(failure) = soundness_case(seed, focus(seed.rotate_left(17)), &mut coverage) {
            panic!("{failure}");
        }
    }
});
