//! Every literal form through the public parser, with the edge cases of the research notes:
//! exact values, and the oracle agreeing on each.

use ozcheck_analyzer::syntax::{ExprKind, Literal, ParseOptions, parse};
use ozcheck_analyzer::testing::compare;

fn value(source: &str) -> Literal {
    let ast =
        parse(source, &ParseOptions::default()).unwrap_or_else(|d| panic!("{source:?}: {d:?}"));
    match ast.kind(ast.root()) {
        ExprKind::Literal(l) => l.clone(),
        other => panic!("{source:?} is not a literal: {other:?}"),
    }
}

fn refused(source: &str) -> &'static str {
    match parse(source, &ParseOptions::default()) {
        Ok(ast) => panic!("{source:?} parsed: {ast:?}"),
        Err(d) => d[0].code,
    }
}

fn s(text: &str) -> Literal {
    Literal::String(text.into())
}

fn b(bytes: &[u8]) -> Literal {
    Literal::Bytes(bytes.into())
}

#[test]
fn numbers() {
    let cases = [
        ("0", Literal::Int(0)),
        ("-0", Literal::Int(0)),
        ("9223372036854775807", Literal::Int(i64::MAX)),
        ("-9223372036854775808", Literal::Int(i64::MIN)),
        ("0x7FFFFFFFFFFFFFFF", Literal::Int(i64::MAX)),
        ("-0x8000000000000000", Literal::Int(i64::MIN)),
        ("-0x55555555", Literal::Int(-0x5555_5555)),
        ("--1", Literal::Int(1)),
        ("1u", Literal::Uint(1)),
        ("18446744073709551615U", Literal::Uint(u64::MAX)),
        ("0xFFu", Literal::Uint(255)),
        ("1.5", Literal::Double(1.5)),
        ("-1.5e3", Literal::Double(-1500.0)),
        (".5", Literal::Double(0.5)),
        ("1e-3", Literal::Double(0.001)),
        ("2E+2", Literal::Double(200.0)),
    ];
    for (source, want) in cases {
        assert_eq!(value(source), want, "{source:?}");
    }
    for source in [
        "9223372036854775808",
        "-9223372036854775809",
        "0x8000000000000000",
        "18446744073709551616u",
        "1e309",
    ] {
        assert_eq!(refused(source), "invalid-literal", "{source:?}");
    }
    for source in ["0XFF", "0XFFu", "1.5u", "-1u.", "0x", "1..2"] {
        assert_eq!(refused(source), "cel-syntax", "{source:?}");
    }
}

#[test]
fn strings_and_bytes() {
    let cases = [
        (r#""a\tb""#, s("a\tb")),
        (r#"'\"\''"#, s("\"'")),
        (r#""\'""#, s("'")),
        (r"'\x41\X42\101\u0043\U00000044'", s("ABACD")),
        (r"'\xff'", s("\u{ff}")),
        (r"r'\xff'", s(r"\xff")),
        (r#"R"\n""#, s(r"\n")),
        ("'''multi\nline'''", s("multi\nline")),
        ("\"\"\"a\"b\"\"\"", s("a\"b")),
        ("'''a\r\nb\rc'''", s("a\nb\nc")),
        (r"r'''\' '''", s(r"\' ")),
        ("''", s("")),
        ("''''''", s("")),
        ("'ñ\u{2028}\0'", s("ñ\u{2028}\0")),
        (r"b'\xff\377'", b(&[0xFF, 0xFF])),
        ("b'ÿ'", b("ÿ".as_bytes())),
        (r"br'\x00'", b(br"\x00")),
        (r"bR'\n'", b(br"\n")),
        (r"BR'\n'", b(br"\n")),
        (r"Br'\n'", b(br"\n")),
        ("b'''a'b'''", b(b"a'b")),
        ("b'''\r\n'''", b(b"\n")),
    ];
    for (source, want) in cases {
        assert_eq!(value(source), want, "{source:?}");
    }
    for source in [
        r"'\q'",
        r"'\x4'",
        r"'\400'",
        r"'\uD800'",
        r"'\U00110000'",
        r"b'\u0041'",
        r"b'\U00000041'",
    ] {
        assert_eq!(refused(source), "invalid-literal", "{source:?}");
    }
    for source in [
        "'a\nb'", "'a\rb'", "rb'a'", "Rb'a'", "'''a''", "'", "b'", "r'",
    ] {
        assert_eq!(refused(source), "cel-syntax", "{source:?}");
    }
}

#[test]
fn the_oracle_agrees_on_every_literal_case() {
    let sources = [
        "-0x8000000000000000",
        "0XFFu",
        "1.5u",
        "1e309",
        "9223372036854775808",
        r"'\x41\X42\101'",
        r"b'\xff\377'",
        "'''a\r\nb'''",
        "br'\\x00'",
        "rb'a'",
        "Rb'a'",
        "'a\nb'",
        r"b'\u0041'",
        r"'\uD800'",
        "[,]",
        "{,}",
        "A{,}",
        "[1,]",
        "f(1,)",
        "1in.0",
        "-!a",
        "!-a",
        "!-1",
        "a.5",
        "1.e5",
        "''''''",
        "'''a'''b'''",
        "x.`a b`",
        "x.`a`.`b`",
        "`a`",
        "a.`b`(1)",
        "---1",
        "-(1)",
        "--1.5",
        "has(a.b)",
        "has(a)",
        ".has(a.b)",
        "a.all(.x, 1)",
        "if",
        "a.if",
        "a.if()",
        "if{}",
        "a.in",
        "x.exists(y)",
        "x.map(a, b, c, d)",
        "existsOne(x, y)",
        "x.existsOne(y, z)",
    ];
    for source in sources {
        compare(source, &ParseOptions::default()).unwrap();
    }
}
