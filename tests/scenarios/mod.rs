//! What the conformance CLI tests share: how many scenarios corpus/conformance holds (every
//! YAML file below it), the number a passing run reports.

use std::path::Path;

/// The scenario files below corpus/conformance.
pub fn scenario_count() -> usize {
    fn walk(dir: &Path) -> usize {
        std::fs::read_dir(dir)
            .unwrap()
            .map(|e| e.unwrap().path())
            .map(|p| {
                if p.is_dir() {
                    walk(&p)
                } else {
                    usize::from(p.extension().is_some_and(|e| e == "yaml"))
                }
            })
            .sum()
    }
    walk(&Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/conformance"))
}
