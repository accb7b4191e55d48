//! Any bytes, decoded lossily, must parse or fail with diagnostics inside the source: never a
//! panic, a hang or a stack overflow, at the default size limit and far beyond it.
#![no_main]

use libfuzzer_sys::fuzz_target;
use ozcheck_analyzer::syntax::{ParseOptions, parse, print};

fuzz_target!(|data: &[u8]| {
    let source = String::from_utf8_lossy(data);
    for max_bytes in [ParseOptions::default().max_bytes, 1 << 20] {
        let options = ParseOptions {
            max_bytes,
            ..ParseOptions::default()
        };
        match parse(&source, &options) {
            Ok(ast) => {
                // What parses prints, and the printed text parses again.
                let printed = print(&ast);
                let big = ParseOptions {
                    max_bytes: usize::MAX,
                    ..ParseOptions::default()
                };
                assert!(parse(&printed, &big).is_ok(), "printed {printed:?} does not parse");
            }
            Err(diagnostics) => {
                assert!(!diagnostics.is_empty());
                for d in &diagnostics {
                    assert!(d.span.start <= d.span.end && d.span.end as usize <= source.len());
                }
            }
        }
    }
});
