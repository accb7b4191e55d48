//! Replays every input under corpus/regressions/parse/ (crashes found by fuzzing and other
//! hostile inputs) and asserts that the parser returns cleanly on a small stack.

use std::path::PathBuf;

use ozcheck_analyzer::syntax::{ParseOptions, parse};

#[test]
fn every_regression_input_parses_or_fails_cleanly() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/regressions/parse");
    let mut replayed = 0;
    for entry in std::fs::read_dir(&dir).expect("corpus/regressions/parse exists") {
        let path = entry.expect("entry").path();
        if path.extension().is_some_and(|e| e == "md") {
            continue;
        }
        let bytes = std::fs::read(&path).expect("readable");
        let source = String::from_utf8_lossy(&bytes).into_owned();
        for max_bytes in [ParseOptions::default().max_bytes, 1 << 20] {
            let options = ParseOptions {
                max_bytes,
                ..ParseOptions::default()
            };
            let src = source.clone();
            let result = std::thread::Builder::new()
                .stack_size(256 << 10)
                .spawn(move || parse(&src, &options).map(|ast| ast.len()))
                .expect("spawn")
                .join();
            let result = result.unwrap_or_else(|_| panic!("{} panics the parser", path.display()));
            if let Err(diagnostics) = result {
                assert!(
                    !diagnostics.is_empty(),
                    "{}: error without diagnostics",
                    path.display()
                );
                assert!(
                    diagnostics
                        .iter()
                        .all(|d| d.span.end as usize <= source.len())
                );
            }
        }
        replayed += 1;
    }
    assert!(
        replayed >= 1,
        "no regression inputs found in {}",
        dir.display()
    );
}
