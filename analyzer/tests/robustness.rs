//! Hostile input: every adversarial shape within the size limit parses or fails cleanly on a
//! small stack, limits are enforced with their own diagnostics, and malformed input gets clean
//! errors with positions inside the source.

use ozcheck_analyzer::Diagnostic;
use ozcheck_analyzer::syntax::{Ast, ParseOptions, parse};

const CODES: &[&str] = &[
    "expression-too-long",
    "nesting-too-deep",
    "cel-syntax",
    "invalid-literal",
    "reserved-word",
    "unsupported-syntax",
];

/// Parses on a thread with `stack` bytes of stack, so an unbounded recursion fails the test
/// (by aborting) instead of passing by luck on a big main-thread stack.
fn parse_on_stack(
    source: String,
    options: ParseOptions,
    stack: usize,
) -> Result<Ast, Vec<Diagnostic>> {
    std::thread::Builder::new()
        .stack_size(stack)
        .spawn(move || parse(&source, &options))
        .expect("spawn")
        .join()
        .expect("the parser must not panic")
}

fn assert_clean(source: &str, result: &Result<Ast, Vec<Diagnostic>>) {
    if let Err(diagnostics) = result {
        assert!(
            !diagnostics.is_empty(),
            "an error without a diagnostic for {source:?}"
        );
        for d in diagnostics {
            assert!(
                CODES.contains(&d.code),
                "unknown code {} for {source:?}",
                d.code
            );
            assert!(
                d.span.end as usize <= source.len(),
                "span past the end for {source:?}"
            );
            assert!(d.span.start <= d.span.end);
            assert!(
                source.is_char_boundary(d.span.start as usize)
                    && source.is_char_boundary(d.span.end as usize)
            );
            assert!(!d.message.is_empty());
        }
    }
}

/// Repeats `unit` to fill `budget` bytes between `prefix` and `suffix`-per-unit closers.
fn shape(open: &str, middle: &str, close: &str, budget: usize) -> String {
    let n = (budget - middle.len()) / (open.len() + close.len());
    format!("{}{middle}{}", open.repeat(n), close.repeat(n))
}

fn fill(prefix: &str, unit: &str, suffix: &str, budget: usize) -> String {
    let n = (budget - prefix.len() - suffix.len()) / unit.len();
    format!("{prefix}{}{suffix}", unit.repeat(n))
}

fn adversarial_shapes() -> Vec<String> {
    let b = 1024;
    vec![
        shape("(", "1", ")", b),
        "(".repeat(b),
        fill("", "!", "a", b),
        fill("", "-", "a", b),
        fill("", "-", "1", b),
        fill("a", ".b", "", b),
        fill("a", "[0]", "", b),
        shape("f(", "1", ")", b),
        "f(".repeat(b / 2),
        shape("[", "1", "]", b),
        "[".repeat(b),
        shape("{1:", "1", "}", b),
        fill("x", ".f()", "", b),
        fill("1", " + 1", "", b),
        fill("1", "*1", "", b),
        fill("a", "&&a", "", b),
        fill("a", "||a", "", b),
        fill("", "a ? b : ", "c", b),
        shape("a.all(x,", "x", ")", b),
        shape("-(", "1", ")", b),
        shape("!(", "a", ")", b),
        shape("--(", "1", ")", b),
        shape("a[", "0", "]", b),
        shape("A{a:", "1", "}", b),
        shape("x.f(", "1", ")", b),
        shape("{", "1:1", ":1}", b),
        shape("a ? ", "b", " : c", b),
        shape("has(", "a.b", ")", b),
        shape("[(", "1", ")]", b),
        shape("(a)[", "0", "]", b),
        fill("", ")", "", b),
        fill("", "'", "", b),
        fill("", "\\", "", b),
        fill("", ") !", "", b),
        fill("", "+ ", "", b),
    ]
}

#[test]
fn adversarial_shapes_parse_or_fail_cleanly_on_a_256_kib_stack() {
    for source in adversarial_shapes() {
        assert!(source.len() <= 1024, "{} bytes", source.len());
        let result = parse_on_stack(source.clone(), ParseOptions::default(), 256 << 10);
        assert_clean(&source, &result);
    }
}

#[test]
fn the_depth_limit_is_reached_by_every_deep_shape() {
    for source in adversarial_shapes() {
        let result = parse_on_stack(source.clone(), ParseOptions::default(), 256 << 10);
        if let Ok(ast) = result {
            assert!(
                height(&ast) <= 250,
                "{source:?} built a tree {} deep",
                height(&ast)
            );
        }
    }
}

fn height(ast: &Ast) -> u32 {
    // Children come before parents, so one forward pass computes every height.
    let mut heights = vec![0u32; ast.len()];
    for (id, node) in ast.nodes().iter().enumerate() {
        let children = node.kind.children();
        heights[id] = 1 + children
            .iter()
            .map(|&c| heights[c as usize])
            .max()
            .unwrap_or(0);
    }
    heights[ast.root() as usize]
}

fn codes(result: &Result<Ast, Vec<Diagnostic>>) -> Vec<&'static str> {
    match result {
        Ok(_) => vec![],
        Err(d) => d.iter().map(|d| d.code).collect(),
    }
}

fn with_depth(max_depth: u32) -> ParseOptions {
    ParseOptions {
        max_depth,
        ..ParseOptions::default()
    }
}

#[test]
fn nesting_deeper_than_the_limit_is_refused_at_its_position() {
    let ok = format!("{}1{}", "[".repeat(9), "]".repeat(9));
    assert!(parse(&ok, &with_depth(10)).is_ok());
    let deep = format!("{}1{}", "[".repeat(11), "]".repeat(11));
    let result = parse(&deep, &with_depth(10));
    assert_eq!(codes(&result), ["nesting-too-deep"]);
    let span = result.unwrap_err()[0].span;
    assert!(
        span.start > 0 && (span.end as usize) <= deep.len(),
        "{span:?}"
    );
}

#[test]
fn member_and_operator_chains_count_towards_the_depth() {
    let chain = format!("a{}", ".b".repeat(20));
    assert!(parse(&chain, &with_depth(21)).is_ok());
    assert_eq!(codes(&parse(&chain, &with_depth(20))), ["nesting-too-deep"]);
    let sum = format!("1{}", " + 1".repeat(20));
    assert!(parse(&sum, &with_depth(21)).is_ok());
    assert_eq!(codes(&parse(&sum, &with_depth(20))), ["nesting-too-deep"]);
}

#[test]
fn parentheses_and_unary_runs_do_not_cost_depth() {
    let parens = format!("{}1{}", "(".repeat(4000), ")".repeat(4000));
    let options = ParseOptions {
        max_bytes: 1 << 20,
        max_depth: 5,
    };
    let ast = parse_on_stack(parens, options.clone(), 256 << 10).expect("parentheses collapse");
    assert_eq!(ast.len(), 1);
    let nots = format!("{}a", "!".repeat(4001));
    let ast = parse_on_stack(nots, options, 256 << 10).expect("a run of ! is one operator");
    assert_eq!(ast.len(), 2);
}

#[test]
fn the_size_limit_is_checked_first() {
    // Over the limit, even garbage gets exactly one diagnostic: the size.
    let source = format!("{}'unterminated", "(".repeat(1100));
    let result = parse(&source, &ParseOptions::default());
    let diagnostics = result.unwrap_err();
    assert_eq!(diagnostics.len(), 1);
    let d = &diagnostics[0];
    assert_eq!(d.code, "expression-too-long");
    assert_eq!((d.span.start, d.span.end), (1024, source.len() as u32));
    assert!(d.help.as_deref().unwrap().contains("1024"));
    let exact = "1".repeat(1024);
    assert_eq!(
        codes(&parse(&exact, &ParseOptions::default())),
        ["invalid-literal"]
    );
    let small = ParseOptions {
        max_bytes: 3,
        ..ParseOptions::default()
    };
    assert!(parse("1+1", &small).is_ok());
    assert_eq!(codes(&parse("1+11", &small)), ["expression-too-long"]);
}

#[test]
fn the_size_limit_label_starts_on_a_character_boundary() {
    let source = "'ñññ'";
    let options = ParseOptions {
        max_bytes: 2,
        ..ParseOptions::default()
    };
    let d = &parse(source, &options).unwrap_err()[0];
    assert!(source.is_char_boundary(d.span.start as usize));
    assert_eq!(d.span.start, 1);
}

#[test]
fn malformed_inputs_get_clean_diagnostics() {
    let big = ParseOptions {
        max_bytes: 1 << 20,
        ..ParseOptions::default()
    };
    let many_parens = "(".repeat(5000);
    let inputs: Vec<&str> = vec![
        "",
        "  ",
        "// c",
        "1 +",
        "a in",
        "'abc",
        "\"abc",
        "'''abc",
        "!",
        "-",
        "&&",
        "a ? b :",
        "a ? b",
        "{1:}",
        "in",
        "a.in",
        "a.",
        "a[",
        "(1",
        "1 2",
        "1 + 2)",
        "f(1,)",
        "[1,,]",
        "a.b.c{",
        "\0",
        "\u{2028}",
        "ñ",
        "'\\q'",
        "b'\\u0041'",
        "9223372036854775808",
        "1e999",
        "`a`",
        "a.`b`(1)",
        ".",
        ".1.",
        "has(a)",
        "a.all(a.b, true)",
        "a.?",
        "a[?]",
        "[?]",
        "{?: 1}",
        "A{?: 1}",
        "a.?b()",
        "a.?`b`(1)",
        "l.all(i, i, true)",
        "l.exists(i, v.w, true)",
        "if",
        "a ? b ? c : d : e",
        "-!a",
        "!--1",
        &many_parens,
    ];
    for source in inputs {
        let result = parse_on_stack(source.to_owned(), big.clone(), 256 << 10);
        assert!(result.is_err(), "{source:?} should be refused");
        assert_clean(source, &result);
    }
}

#[test]
fn specific_codes_for_specific_mistakes() {
    let p = |s: &str| codes(&parse(s, &ParseOptions::default()));
    assert_eq!(p("'\\q'"), ["invalid-literal"]);
    assert_eq!(p("9223372036854775808"), ["invalid-literal"]);
    assert_eq!(p("18446744073709551616u"), ["invalid-literal"]);
    assert_eq!(p("'\\uD800'"), ["invalid-literal"]);
    assert_eq!(p("while"), ["reserved-word"]);
    assert_eq!(p("for(x)"), ["reserved-word"]);
    // Optional syntax parses; whether an environment allows it is the checker's business.
    for optional in ["a.?b", "a[?0]", "[?a]", "{?a: 1}", "A{?f: 1}"] {
        assert_eq!(p(optional), Vec::<&str>::new(), "{optional}");
    }
    assert_eq!(p("'abc"), ["cel-syntax"]);
    assert_eq!(p("has(a)"), ["cel-syntax"]);
}

#[test]
fn several_independent_errors_are_reported() {
    let result = parse("a + ) + b + )", &ParseOptions::default());
    let diagnostics = result.unwrap_err();
    assert_eq!(diagnostics.len(), 2, "{diagnostics:#?}");
    assert!(diagnostics.iter().all(|d| d.code == "cel-syntax"));
    assert_eq!(
        (diagnostics[0].span.start, diagnostics[1].span.start),
        (4, 12)
    );

    let result = parse("[1 2, 3 4, 5]", &ParseOptions::default());
    assert_eq!(result.unwrap_err().len(), 2);
    let result = parse(
        "f('\\q', 99999999999999999999, while)",
        &ParseOptions::default(),
    );
    assert_eq!(
        codes(&result),
        ["invalid-literal", "invalid-literal", "reserved-word"]
    );
}

#[test]
fn the_error_count_is_bounded() {
    let source = ") ".repeat(500);
    let result = parse(&source, &ParseOptions::default());
    let n = result.unwrap_err().len();
    assert!((1..=20).contains(&n), "{n}");
}

#[test]
fn unterminated_strings_suggest_the_closing_quote() {
    let d = &parse("event.text == 'abc", &ParseOptions::default()).unwrap_err()[0];
    assert_eq!((d.span.start, d.span.end), (14, 18));
    assert!(d.help.as_deref().unwrap().contains("add the closing quote"));
}

const ALPHABET: &[u8] = b"()[]{}.,:?!-+*/%<>=&|'\"\\`abcxyz019 \n\r\0u_";

#[test]
fn random_bytes_never_panic() {
    let mut state = 0x9E37_79B9_7F4A_7C15u64;
    let big = ParseOptions {
        max_bytes: 1 << 20,
        ..ParseOptions::default()
    };
    for _ in 0..3000 {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        let len = (state % 64) as usize;
        let bytes: Vec<u8> = (0..len)
            .map(|i| {
                let x = state.rotate_left(i as u32 * 7);
                if x % 5 == 0 {
                    // Any byte at all, invalid UTF-8 included (lossily decoded below).
                    (x >> 8) as u8
                } else {
                    ALPHABET[(x % ALPHABET.len() as u64) as usize]
                }
            })
            .collect();
        let source = String::from_utf8_lossy(&bytes).into_owned();
        let result = parse(&source, &big);
        assert_clean(&source, &result);
    }
}
