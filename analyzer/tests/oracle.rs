//! Differential test: our parser against the `cel` crate's ANTLR parser on every expression of
//! the cel-spec conformance corpus, and on deterministic mutants of them.

use std::path::PathBuf;

use ozcheck_analyzer::syntax::ParseOptions;
use ozcheck_analyzer::testing::{describe, known_difference, oracle_normalised, ours_normalised};

struct Case {
    id: String,
    expr: String,
    in_scope: bool,
}

fn corpus() -> Vec<Case> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../corpus/cel-spec");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .expect("corpus/cel-spec exists")
        .map(|e| e.expect("directory entry").path())
        .filter(|p| p.extension().is_some_and(|e| e == "jsonl"))
        .collect();
    files.sort();
    let mut cases = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).expect("corpus file is UTF-8");
        for line in text.lines().filter(|l| !l.trim().is_empty()) {
            let value: serde_json::Value = serde_json::from_str(line).expect("corpus line is JSON");
            cases.push(Case {
                id: value["id"].as_str().unwrap_or_default().to_owned(),
                expr: value["expr"]
                    .as_str()
                    .expect("every test has an expr")
                    .to_owned(),
                in_scope: ozcheck_analyzer::conformance::skip_reason(&value).is_none(),
            });
        }
    }
    cases
}

fn options() -> ParseOptions {
    ParseOptions {
        max_bytes: 1 << 20,
        ..ParseOptions::default()
    }
}

#[test]
fn corpus_agrees_with_the_oracle() {
    let cases = corpus();
    let mut failures = Vec::new();
    let (mut in_scope, mut both_accept, mut both_reject, mut known) = (0, 0, 0, 0);
    for case in &cases {
        let ours = ours_normalised(&case.expr, &options());
        in_scope += usize::from(case.in_scope);
        if case.in_scope && ours.is_err() {
            failures.push(format!(
                "in-scope test {} does not parse\n{}",
                case.id,
                describe(&case.expr, &ours, &oracle_normalised(&case.expr))
            ));
            continue;
        }
        let theirs = oracle_normalised(&case.expr);
        match (&ours, &theirs) {
            (Ok(a), Ok(b)) if a == b => both_accept += 1,
            (Err(_), Err(_)) => both_reject += 1,
            _ if known_difference(&case.expr, &ours, &theirs) => known += 1,
            _ => failures.push(format!(
                "{}\n{}",
                case.id,
                describe(&case.expr, &ours, &theirs)
            )),
        }
    }
    eprintln!(
        "oracle corpus: {} expressions ({in_scope} in scope, all parse): {both_accept} accepted \
         by both with the same tree, {both_reject} rejected by both, {known} known differences",
        cases.len()
    );
    assert!(in_scope > 800, "only {in_scope} in-scope tests found");
    assert!(
        failures.is_empty(),
        "{} of {} disagree:\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n")
    );
}

/// A small deterministic generator (xorshift64*), so the mutants are the same on every run.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }

    fn below(&mut self, n: usize) -> usize {
        (self.next() % n.max(1) as u64) as usize
    }
}

/// Text that tends to break parsers: quotes, escapes, brackets, macros, non-ASCII, NUL.
const TOKENS: &[&str] = &[
    "'",
    "\"",
    "'''",
    "\\",
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    ",",
    ".",
    ":",
    "?",
    "-",
    "!",
    "`",
    ".exists(",
    ".all(x, ",
    "has(",
    "ñ",
    "\u{2028}",
    "\0",
    "\r",
    "\n",
    " ",
    "r",
    "b",
    "0x",
    "u",
    "e",
    "in",
    "//",
    "1",
    ".5",
    "&&",
    "||",
    "==",
    "\\x",
    "\\u",
    "a",
    "9223372036854775808",
];

/// Byte-level mutations on character boundaries: delete, insert a token, duplicate a slice.
fn mutate(source: &str, rng: &mut Rng) -> String {
    let bounds: Vec<usize> = source
        .char_indices()
        .map(|(i, _)| i)
        .chain([source.len()])
        .collect();
    let pick = |rng: &mut Rng| bounds[rng.below(bounds.len())];
    let mut out = source.to_owned();
    for _ in 0..=rng.below(3) {
        let (a, b) = {
            let x = pick(rng);
            let y = pick(rng);
            (x.min(y), x.max(y))
        };
        if !out.is_char_boundary(a) || !out.is_char_boundary(b) || b > out.len() {
            continue;
        }
        match rng.below(4) {
            0 => {
                let end = (a + 1 + rng.below(3)).min(out.len());
                let end = (end..=out.len())
                    .find(|&i| out.is_char_boundary(i))
                    .unwrap_or(out.len());
                out.replace_range(a..end, "");
            }
            1 | 2 => out.insert_str(a, TOKENS[rng.below(TOKENS.len())]),
            _ => {
                let slice = out[a..b].to_owned();
                out.insert_str(b, &slice);
            }
        }
    }
    out
}

#[test]
fn mutants_agree_with_the_oracle_on_accept_and_reject() {
    let cases = corpus();
    let mut rng = Rng(0x0C0F_FEE5_EED5);
    let mut disagreements = Vec::new();
    let (mut accepted, mut known) = (0, 0);
    let total = 20_000;
    for _ in 0..total {
        let base = &cases[rng.below(cases.len())].expr;
        let mutant = mutate(base, &mut rng);
        let ours = ours_normalised(&mutant, &options());
        let theirs = oracle_normalised(&mutant);
        accepted += usize::from(ours.is_ok());
        let agree = match (&ours, &theirs) {
            (Ok(a), Ok(b)) => a == b,
            (Err(_), Err(_)) => true,
            _ => false,
        };
        if agree {
            continue;
        }
        if known_difference(&mutant, &ours, &theirs) {
            known += 1;
        } else {
            disagreements.push(describe(&mutant, &ours, &theirs));
        }
    }
    eprintln!(
        "oracle mutants: {total} mutants, {accepted} accepted by us, {} disagreements, {known} \
         known differences",
        disagreements.len()
    );
    assert!(
        accepted > total / 10,
        "too few mutants parse ({accepted}) to test much"
    );
    assert!(
        disagreements.is_empty(),
        "{} of {total} mutants disagree:\n{}",
        disagreements.len(),
        disagreements.join("\n")
    );
}

#[test]
fn the_documented_differences_hold() {
    // Parentheses cost the oracle depth (limit 96) but not us.
    let parens = format!("{}1{}", "(".repeat(100), ")".repeat(100));
    assert!(ours_normalised(&parens, &options()).is_ok());
    let theirs = oracle_normalised(&parens).unwrap_err();
    assert!(theirs[0].contains("Recursion limit"), "{theirs:?}");
    // A long operator chain is a deep tree for us (limit 250) but a loop for the oracle.
    let chain = format!("1{}", " + 1".repeat(300));
    assert_eq!(
        ours_normalised(&chain, &options()),
        Err(vec!["nesting-too-deep"])
    );
    assert!(oracle_normalised(&chain).is_ok());
    // NUL inside a raw triple-quoted literal: the grammar allows it, the oracle refuses it.
    let raw = "r'''a\0b'''";
    assert!(ours_normalised(raw, &options()).is_ok());
    assert!(oracle_normalised(raw).is_err());
    assert!(oracle_normalised("'''a\0b'''").is_ok());
    // The oracle does not know the two-variable macros: to it these are plain calls.
    for source in ["[1].exists(i, -v, true)", "m.transformMap(k, k, k)"] {
        assert_eq!(
            ours_normalised(source, &options()),
            Err(vec!["cel-syntax"]),
            "{source}"
        );
        assert!(oracle_normalised(source).is_ok(), "{source}");
    }
    // Optional syntax, with the oracle's optional syntax on, compares tree for tree.
    for source in ["a.?b[?0]", "[?a, b]", "{?'k': v}", "T{?f: v}"] {
        let ours = ours_normalised(source, &options());
        assert!(ours.is_ok(), "{source}");
        assert_eq!(ours.ok(), oracle_normalised(source).ok(), "{source}");
    }
}
