//! The pattern limits, RE2's meaning of the Perl classes, and the search against the plain
//! engine.

use std::convert::Infallible;

use super::search::CHUNK_WORK;
use super::*;

fn matches(pattern: &str, haystack: &str) -> bool {
    let re = CelRegex::new(pattern).expect("compiles");
    let Ok(found) = re.is_match(haystack, || Ok::<(), Infallible>(()));
    found
}

fn refused(pattern: &str) -> String {
    CelRegex::new(pattern).expect_err(pattern).message()
}

#[test]
fn invalid_patterns_are_refused_with_one_sentence() {
    assert_eq!(refused("a("), "invalid regular expression: unclosed group");
    assert_eq!(
        refused("\\pX"),
        "invalid regular expression: Unicode property not found"
    );
    assert_eq!(
        compiled_size("a(").unwrap_err(),
        CelRegex::new("a(").unwrap_err()
    );
}

#[test]
fn perl_classes_and_word_boundaries_are_ascii_as_in_re2() {
    assert!(matches(r"^\d+$", "0123456789"));
    assert!(
        !matches(r"^\d$", "٣"),
        "Arabic-Indic digits are not \\d in RE2"
    );
    assert!(!matches(r"^\w$", "é"));
    assert!(
        matches(r"^\W$", "é"),
        "negated classes cover all of Unicode"
    );
    assert!(matches(r"^[\w-]+$", "a_b-9"));
    assert!(!matches(r"^[\w]$", "é"));
    assert!(matches(r"^[^\w]$", "é"));
    assert!(matches(r"^\s$", "\x0C"));
    assert!(!matches(r"^\s$", "\x0B"), "RE2's \\s has no vertical tab");
    assert!(!matches(r"^\s$", "\u{2003}"));
    assert!(matches(r"^\S$", "\u{2003}"));
    assert!(matches(r"^[\S]$", "é"));
    // An ASCII word boundary: `é` is not a word character.
    assert!(matches(r"\bx\b", "éxé"));
    assert!(matches(r"a\Bb", "ab"));
    // Unicode classes stay Unicode.
    assert!(matches(r"^\pL+$", "mañana"));
    assert!(matches(r"^.$", "ñ"));
    // `\w{30}` is small once it means [0-9A-Za-z_].
    assert!(compiled_size(r"\w{30}").unwrap() < 200);
}

#[test]
fn counted_repetitions_follow_re2s_limit() {
    assert!(CelRegex::new("a{1000}").is_ok());
    for pattern in ["a{1001}", "a{1,1001}", "a{1001,}", "(?:b{2}){1,16000}"] {
        assert_eq!(
            refused(pattern),
            "invalid regular expression: a counted repetition may repeat at most 1000 times, \
             as in RE2",
            "{pattern}"
        );
    }
}

#[test]
fn compiled_size_is_bounded() {
    for pattern in [
        r"(?:a{1,120}){1,120}\d",
        r"\pL{100}",
        r"(?:a{1,50}){1,50}",
        "a{1000}b{1000}c{1000}",
    ] {
        assert_eq!(
            refused(pattern),
            format!(
                "invalid regular expression: the pattern compiles to more than \
                 {REGEX_MAX_SIZE} states and transitions"
            ),
            "{pattern}"
        );
    }
    let size = compiled_size("a{1,1000}").unwrap();
    assert!(size <= REGEX_MAX_SIZE, "{size}");
    assert_eq!(CelRegex::new("a{1,1000}").unwrap().size(), size);
}

#[test]
fn long_patterns_are_refused_before_parsing() {
    let long = "a".repeat(REGEX_MAX_PATTERN as usize + 1);
    assert_eq!(
        refused(&long),
        "invalid regular expression: the pattern is 1025 bytes long, more than 1024"
    );
    // 1024 literal bytes compile to well under the size limit.
    assert!(CelRegex::new(&"a".repeat(REGEX_MAX_PATTERN as usize)).is_ok());
}

#[test]
fn unicode_classes_are_counted() {
    let many = r"\pL".repeat(REGEX_MAX_UNICODE_CLASSES as usize + 1);
    assert_eq!(
        refused(&many),
        "invalid regular expression: the pattern names 33 Unicode classes, more than 32"
    );
    let inside = format!("[{}]", r"\p{Greek}".repeat(33));
    assert!(refused(&inside).contains("33 Unicode classes"));
    assert!(CelRegex::new(&r"\p{Greek}".repeat(8)).is_ok());
}

#[test]
fn case_folding_is_measured_before_translation() {
    // Folding these visits every code point of the range: refused before it runs.
    for pattern in [
        r"(?i)\p{Any}",
        r"(?i)[\x{80}-\x{10FFFF}]",
        r"(?i)[[^a]b]",
        // Any `i` makes the measure cover the whole pattern (an overestimate).
        r"(?i:x)|[[^\x{41}]b]",
    ] {
        assert!(
            refused(pattern).contains("units of case folding"),
            "{pattern}: {}",
            refused(pattern)
        );
    }
    // Folding before negation: `[^a]` folds only `a`.
    assert!(matches(r"(?i)^[^a]$", "b"));
    assert!(!matches(r"(?i)^[^a]$", "A"));
    assert!(matches(r"(?i)^\pL+$", "ÉTÉ"));
    assert!(matches(r"(?i)^[a-z]+$", "ABC"));
    // The Han block holds no cased character: free to fold.
    assert!(CelRegex::new(r"(?i)[\x{4E00}-\x{9FFF}]+").is_ok());
    // A case-insensitive literal of the longest pattern still fits.
    let long = format!("(?i){}", "a".repeat(REGEX_MAX_PATTERN as usize - 4));
    assert!(CelRegex::new(&long).is_ok());
}

#[test]
fn long_inputs_match_like_short_ones() {
    let re = CelRegex::new("needle[0-9]+$").unwrap();
    let tick = || Ok::<(), Infallible>(());
    let mut long = "x".repeat(3 * CHUNK_WORK);
    assert_eq!(re.is_match(&long, tick), Ok(false));
    long.push_str("needle42");
    assert_eq!(re.is_match(&long, tick), Ok(true));
    let anchored = CelRegex::new("^x+y").unwrap();
    assert!(anchored.anchored);
    assert_eq!(anchored.is_match(&long, tick), Ok(false));
    assert_eq!(anchored.is_match("xxy", tick), Ok(true));
}

#[test]
fn required_literals_reject_without_changing_answers() {
    let re = CelRegex::new(r"^fix(\(.*\))?: ").unwrap();
    assert!(re.required.is_some());
    let tick = || Ok::<(), Infallible>(());
    let no_suffix = format!("fix({}", "word ".repeat(4000));
    assert_eq!(re.is_match(&no_suffix, tick), Ok(false));
    assert!(matches(r"^fix(\(.*\))?: ", "fix(parser): x"));
    assert!(matches(r"^fix(\(.*\))?: ", "fix: x"));
    assert!(!matches(r"^fix(\(.*\))?: ", "feat(x): y"));
    assert!(CelRegex::new("[a-z]+").unwrap().required.is_none());
    assert!(matches("(?i)ERROR$", "an Error"));
    // An anchored search steps its first bytes before the literal check, which still reads the
    // whole input: here the literal `): ` straddles the end of the stepped bytes for some `n`.
    for n in [
        0, 1, 23, 24, 25, 26, 27, 28, 29, 30, 31, 32, 58, 59, 60, 61, 62, 200,
    ] {
        let text = format!("fix({}): x", "y".repeat(n));
        assert!(matches(r"^fix(\(.*\))?: ", &text), "{n}");
        assert!(
            !matches(r"^fix(\(.*\))?: ", &text.replace(": ", ":")),
            "{n}"
        );
    }
    assert!(matches("^a", "a"));
    assert!(matches("^a$", "a"));
    assert!(!matches("^ab", "a"));
}

#[test]
fn required_literals_are_indexed_only_when_a_search_scans_for_them() {
    let re = CelRegex::new(r"^fix(\(.*\))?: ").unwrap();
    let required = re.required.as_ref().expect("`): ` and `fix: `");
    assert!(required.prefilter.get().is_none(), "built with the pattern");
    let tick = || Ok::<(), Infallible>(());
    // Decided by its first bytes: no scan, no prefilter.
    assert_eq!(re.is_match("feat: x", tick), Ok(false));
    assert!(required.prefilter.get().is_none());
    // A long input that starts right is scanned for the literals first.
    let long = format!("fix({}", "word ".repeat(4000));
    assert_eq!(re.is_match(&long, tick), Ok(false));
    assert!(required.prefilter.get().is_some_and(Option::is_some));
    assert_eq!(re.is_match(&format!("{long}): x"), tick), Ok(true));
}

#[test]
fn long_scans_tick_between_chunks() {
    // No finite set of suffix literals, so only the scan can answer.
    let re = CelRegex::new(r"y.$").unwrap();
    assert!(re.required.is_none());
    let long = "x".repeat(8 * CHUNK_WORK);
    let mut ticks = 0;
    assert_eq!(
        re.is_match(&long, || {
            ticks += 1;
            if ticks == 3 { Err("stopped") } else { Ok(()) }
        }),
        Err("stopped")
    );
    // A large automaton ticks after fewer bytes.
    let big = CelRegex::new(r"(?:a{1,10}){1,10}b.").unwrap();
    assert!(big.required.is_none());
    let mut big_ticks = 0u32;
    let haystack = "a".repeat(4 * 1024);
    let _ = big.is_match(&haystack, || {
        big_ticks += 1;
        Ok::<(), Infallible>(())
    });
    assert!(
        u64::from(big_ticks) * CHUNK_WORK as u64 >= 4 * 1024 * big.size() - CHUNK_WORK as u64,
        "{big_ticks} ticks for size {}",
        big.size()
    );
}

#[test]
fn large_automata_tick_within_the_chunk_work() {
    // Never decided on lowercase text (no match, never dead) and no required literal: the scan
    // steps every byte.
    let re = CelRegex::new(r"(?:[a-z][a-z]){600}[^a-z]").unwrap();
    assert!(re.required.is_none());
    assert!(re.size() > 512, "size {}", re.size());
    let haystack = "ab".repeat(32 * 1024);
    let mut ticks = 0u64;
    let matched = re.is_match(&haystack, || {
        ticks += 1;
        Ok::<(), Infallible>(())
    });
    assert_eq!(matched, Ok(false));
    let bytes_per_tick = haystack.len() as u64 / (ticks + 1);
    assert!(
        bytes_per_tick * re.size() <= CHUNK_WORK as u64,
        "{bytes_per_tick} bytes between ticks at size {}",
        re.size()
    );
}

proptest::proptest! {
    /// The literal check, the anchoring and the chunked scan never change an answer of
    /// regex-automata's own engine on the same (rewritten) pattern.
    #[test]
    fn answers_agree_with_the_plain_engine(
        pieces in proptest::collection::vec(
            proptest::sample::select(vec!["a", "b", ":", " ", "(", "\\)", ".*", "a|b", "^", "$",
                                          "(?i)A", "x?", "[ab]", "[0-9]", "ñ", "\\b", "(?m)^"]),
            1..6,
        ),
        haystack in "[ab(): x0ñ\n]{0,40}",
        repeat in 0usize..3,
    ) {
        let pattern: String = pieces.concat();
        let Ok(ours) = CelRegex::new(&pattern) else { return Ok(()) };
        let translated = syntax::prepare(&pattern).ok().and_then(|ast| {
            regex_syntax::hir::translate::Translator::new().translate(&pattern, &ast).ok()
        });
        let Some(hir) = translated else { return Ok(()) };
        let plain = regex_automata::meta::Regex::builder().build_from_hir(&hir).unwrap();
        // Repeating pushes some haystacks past one chunk, onto the stepping path.
        let haystack = if repeat == 2 { haystack.repeat(CHUNK_WORK / 8 + 1) } else { haystack };
        let Ok(found) = ours.is_match(&haystack, || Ok::<(), Infallible>(()));
        proptest::prop_assert_eq!(found, plain.is_match(&haystack), "pattern {:?}", pattern);
    }
}

#[test]
fn an_anchored_pattern_refuses_other_beginnings_before_any_search() {
    let re = CelRegex::new(r"^fix(\(.*\))?: ").unwrap();
    assert!(re.starts.is_some());
    // Decided by the first bytes: no tick, however long the rest.
    let long = format!("chore: {}", "x".repeat(4 * CHUNK_WORK));
    assert_eq!(re.is_match(&long, || Err("ticked")), Ok(false));
    assert_eq!(re.is_match("fix: a", || Err("ticked")), Ok(true));
    assert_eq!(re.is_match("fix(parser): a", || Err("ticked")), Ok(true));
    assert_eq!(re.is_match("fix(parser) a", || Err("ticked")), Ok(false));
    // Case folding expands the prefixes; they still decide.
    let folded = CelRegex::new(r"(?i)^fix").unwrap();
    assert_eq!(folded.is_match("FiX it", || Err("ticked")), Ok(true));
    assert_eq!(folded.is_match("fox", || Err("ticked")), Ok(false));
    // An empty prefix rules nothing out: no literals kept.
    assert!(CelRegex::new(r"^(?:fix|)x?").unwrap().starts.is_none());
}

/// The patterns the reuse of one compiler is checked on: Unicode classes (which use its UTF-8
/// cache), case folding, anchors, sizes near the limit and over it, in an order that alternates
/// small and large.
const REUSE_PATTERNS: &[&str] = &[
    r"^fix(\(.*\))?: ",
    r"\pL{100}",
    r"(?i)straße|\p{Greek}+",
    "a{1,1000}",
    r"(?:a{1,50}){1,50}",
    r"[^\n]*é.\S",
    r"^fix(\(.*\))?: ",
    r"\bword\b|\W{3}",
    r"(?i)[a-zа-я]{1,20}",
    r"(?:a{1,120}){1,120}\d",
    "",
    r"\p{Han}\pN.{0,40}$",
];

#[test]
fn a_reused_compiler_builds_what_a_fresh_one_builds() {
    // Twice over, so the second round runs on a compiler whose caches and builder hold the
    // leftovers of every pattern, the refused ones included.
    for _ in 0..2 {
        for pattern in REUSE_PATTERNS {
            let hir = translate(pattern).expect("translates");
            let fresh = shared::compiler()
                .build_from_hir(&hir)
                .ok()
                .map(|nfa| nfa_size(&nfa))
                .filter(|&size| size <= REGEX_MAX_SIZE);
            assert_eq!(compiled_size(pattern).ok(), fresh, "{pattern}");
            assert_eq!(
                CelRegex::new(pattern).ok().map(|re| re.size()),
                fresh,
                "{pattern}"
            );
        }
    }
}

#[test]
fn a_check_compiles_each_literal_pattern_once() {
    use crate::check::Env;
    use crate::{Options, Verdict, check_expression, cost_summary, explain_expression};

    let builds = |f: &dyn Fn()| {
        let before = shared::builds();
        f();
        shared::builds() - before
    };
    let fix = r"event.text.matches('^fix(\\(.*\\))?: ')";
    let env = Env::filter();
    let options = Options::default();
    // The checker and the estimator both need the pattern's size; one NFA serves both.
    assert_eq!(
        builds(&|| {
            let report = check_expression(fix, &env, &options);
            assert_eq!(report.verdict, Verdict::Accepted);
        }),
        1
    );
    // The memo lasts one call: a second check compiles again.
    assert_eq!(
        builds(&|| {
            check_expression(fix, &env, &options);
            check_expression(fix, &env, &options);
        }),
        2
    );
    // A refused estimate searches the bounds that would pass it, estimating at every step:
    // still one build per distinct pattern.
    let nested = "event.attributes.a.exists(x, x.matches('^a+b$') || x.matches('[0-9]{3}')) \
                  && event.text.matches('^a+b$')";
    let tight = Options {
        limit: 50,
        ..Options::default()
    };
    assert_eq!(
        builds(&|| {
            let report = check_expression(nested, &env, &tight);
            assert_eq!(report.verdict, Verdict::Refused);
            assert!(report.would_pass.is_some());
        }),
        2
    );
    assert_eq!(
        builds(&|| {
            explain_expression(fix, &env, &options).expect("compiles");
        }),
        1
    );
    assert_eq!(
        builds(&|| {
            cost_summary(fix, &env, &options).expect("compiles");
        }),
        1
    );
}
