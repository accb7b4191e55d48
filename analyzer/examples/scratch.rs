use ozcheck_analyzer::syntax::ParseOptions;
use ozcheck_analyzer::testing::{oracle_normalised, ours_normalised};
fn main() {
    for src in std::env::args().skip(1) {
        let src = src.replace("<NUL>", "\0");
        println!(
            "{src:?}\n  ours:   {:?}\n  oracle: {:?}",
            ours_normalised(&src, &ParseOptions::default()),
            oracle_normalised(&src)
        );
    }
}
