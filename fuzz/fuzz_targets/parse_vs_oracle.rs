//! Our parser and the `cel` crate's ANTLR parser must agree on accepting or rejecting any
//! input, and on the tree (through the normaliser of the analyzer's oracle test), except for
//! the differences documented in docs/decisions/0002-parser-oracle-differences.md.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ozcheck_analyzer::syntax::ParseOptions;
use ozcheck_analyzer::testing::compare;

fuzz_target!(|data: &[u8]| {
    // The oracle is slow on long inputs; the filters we check are at most 1 KiB anyway.
    if data.len() > 4096 {
        return;
    }
    let source = String::from_utf8_lossy(data);
    let options = ParseOptions {
        max_bytes: 1 << 20,
        ..ParseOptions::default()
    };
    if let Err(disagreement) = compare(&source, &options) {
        panic!("parsers disagree:\n{disagreement}");
    }
});
