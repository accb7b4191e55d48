//! Soundness under fuzzing: every 8 bytes of input seed one case of the soundness property (a
//! random well-typed filter, random bounds, random and adversarial events within them); the
//! metered cost must never exceed the static estimate's max. The same check runs 10,000 times in
//! the normal test suite (`analyzer/tests/soundness.rs`).
#![no_main]

use libfuzzer_sys::fuzz_target;
use ozcheck_analyzer::testgen::soundness_case;

fuzz_target!(|data: &[u8]| {
    for chunk in data.chunks(8).take(4) {
        let mut seed = [0u8; 8];
        seed[..chunk.len()].copy_from_slice(chunk);
        if let Err(failure) = soundness_case(u64::from_le_bytes(seed)) {
            panic!("{failure}");
        }
    }
});
