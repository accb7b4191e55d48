//! Differential fuzzing of the evaluator against the `cel` crate's interpreter: every 8 bytes of
//! input seed a random filter and event; where both give a bool they must agree. The differences
//! by design are listed in `docs/decisions/0004-cel-rust-differences.md`.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ozcheck_analyzer::testgen::differential_case;

fuzz_target!(|data: &[u8]| {
    for chunk in data.chunks(8).take(4) {
        let mut seed = [0u8; 8];
        seed[..chunk.len()].copy_from_slice(chunk);
        if let Err(failure) = differential_case(u64::from_le_bytes(seed)) {
            panic!("{failure}");
        }
    }
});
