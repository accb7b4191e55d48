//! A cheap, deterministic cousin of the `lint_yaml` fuzz target that runs with every test run:
//! every corpus file, mutated many times (bytes inserted, deleted, replaced from a YAML-heavy
//! alphabet), lints under every file kind without a panic, with spans inside the file, and
//! renders in every format.

use std::path::{Path, PathBuf};

use ozcheck_lint::render::{Format, render};
use ozcheck_lint::{Config, Input, PluginContext, lint};

/// Characters that change YAML structure most.
const ALPHABET: &[u8] = b" \n\t:-[]{},#&*!|>'\"?%@`\\.$0123456789aez\xc3\xa9";

struct Lcg(u64);

impl Lcg {
    fn below(&mut self, n: usize) -> usize {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        ((self.0 >> 33) as usize) % n.max(1)
    }
}

fn corpus_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("corpus") {
        let path = entry.expect("entry").path();
        if path.is_dir() {
            corpus_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "yaml") {
            out.push(path);
        }
    }
}

fn mutate(rng: &mut Lcg, bytes: &mut Vec<u8>) {
    for _ in 0..=rng.below(4) {
        let at = rng.below(bytes.len() + 1);
        let byte = ALPHABET[rng.below(ALPHABET.len())];
        match rng.below(3) {
            0 => bytes.insert(at, byte),
            1 if at < bytes.len() => {
                bytes.remove(at);
            }
            _ if at < bytes.len() => bytes[at] = byte,
            _ => bytes.push(byte),
        }
    }
}

#[test]
fn mutated_corpus_files_never_panic_and_keep_spans_inside() {
    let mut files = Vec::new();
    corpus_files(Path::new("../corpus/plugins"), &mut files);
    files.sort();
    let mut rng = Lcg(7);
    let mut cases = 0;
    for file in &files {
        let original = std::fs::read(file).expect("readable");
        for _ in 0..25 {
            let mut bytes = original.clone();
            mutate(&mut rng, &mut bytes);
            let path = ["agents/m.yaml", "flows/m.yaml", "routines/m.yaml"][rng.below(3)];
            let input = Input::from_bytes(path, &bytes, true);
            let reports = lint(&[input], &PluginContext::default(), &Config::default());
            for report in &reports {
                for f in &report.findings {
                    assert!(
                        f.span.start <= f.span.end && f.span.end <= report.source.text.len(),
                        "{f:?} in {:?}",
                        String::from_utf8_lossy(&bytes)
                    );
                }
            }
            for format in [Format::Full, Format::Json, Format::Sarif] {
                assert!(!render(&reports, format, false).is_empty());
            }
            let findings: usize = reports.iter().map(|r| r.findings.len()).sum();
            assert_eq!(
                render(&reports, Format::Github, false).lines().count(),
                findings
            );
            cases += 1;
        }
    }
    assert!(cases >= 500, "only {cases} cases");
}
