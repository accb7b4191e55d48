//! A byte offset inside a scalar's value maps to the exact file line and column, for every
//! scalar style. Each case marks its target with `&&&`, which appears once in the file and once
//! in the value; the mapped span must cover exactly the file's `&&&`.

use ozcheck_lint::SourceFile;
use ozcheck_lint::position::map_span;
use ozcheck_lint::yaml;

/// Maps the value's `&&&` into the file; returns the 1-based (line, column) and checks the span.
fn locate(text: &str) -> (usize, usize) {
    let source = SourceFile::new("flows/t.yaml", text);
    let doc = yaml::parse(&source);
    assert!(doc.problems.is_empty(), "{:?}", doc.problems);
    let root = doc.root.expect("a root");
    let node = root.get("filter").expect("a filter key");
    let value = node.text().expect("a scalar");
    let k = value.find("&&&").expect("marker in value");
    let span = map_span(&source.text, node, k..k + 3);
    let truth = text.find("&&&").expect("marker in file");
    assert_eq!(span, truth..truth + 3, "value {value:?}");
    source.line_col(span.start)
}

#[test]
fn plain_single_line() {
    assert_eq!(locate("filter: event.a == 1 &&& b\n"), (1, 22));
}

#[test]
fn plain_multi_line() {
    let text = "filter: event.a == 1\n  || event.b\n     &&& b\nnext: 1\n";
    assert_eq!(locate(text), (3, 6));
}

#[test]
fn single_quoted_with_doubled_quotes() {
    assert_eq!(locate("filter: 'event.a == ''x'' &&& b'\n"), (1, 27));
}

#[test]
fn single_quoted_multi_line() {
    assert_eq!(locate("filter: 'event.a == ''x''\n    &&& b'\n"), (2, 5));
}

#[test]
fn double_quoted_with_escapes() {
    let text = "filter: \"event.a == \\\"x\\n\\u00e9\\\" &&& b\"\n";
    assert_eq!(locate(text), (1, 35));
}

#[test]
fn double_quoted_with_escaped_line_break() {
    let text = "filter: \"event.a == \\\n    'x' &&& b\"\n";
    assert_eq!(locate(text), (2, 9));
}

#[test]
fn literal_block() {
    let text = "filter: |\n  event.a == 1\n\n  && event.b\n     &&& c\nnext: 1\n";
    assert_eq!(locate(text), (5, 6));
}

#[test]
fn literal_block_with_indent_indicator_and_strip() {
    let text = "filter: |2-\n    event.é == 1\n   &&& c\n";
    assert_eq!(locate(text), (3, 4));
}

#[test]
fn folded_block() {
    let text = "filter: >\n  event.a == 1\n  && event.b\n  &&& c\n";
    assert_eq!(locate(text), (4, 3));
}

#[test]
fn crlf_line_ends() {
    let text = "filter: |\r\n  event.a == 1\r\n  &&& c\r\n";
    assert_eq!(locate(text), (3, 3));
}

#[test]
fn columns_count_characters_not_bytes() {
    assert_eq!(locate("filter: \"'é → ü' &&& b\"\n"), (1, 18));
}

#[test]
fn flow_mapping_value() {
    assert_eq!(locate("{filter: \"event.a &&& b\"}\n"), (1, 19));
}
