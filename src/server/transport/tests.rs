//! The frame reader over byte streams built by hand: every limit, every refusal and what
//! follows it, and input that arrives a byte at a time.

use std::io::{BufReader, Read};

use super::*;

fn frame(body: &str) -> Vec<u8> {
    format!("Content-Length: {}\r\n\r\n{body}", body.len()).into_bytes()
}

/// Everything the reader gets from `input` until it ends or gives up.
fn frames(input: &[u8]) -> (Vec<Frame>, Result<(), Lost>) {
    let mut reader = FrameReader::new(input);
    let mut got = Vec::new();
    loop {
        match reader.next_frame() {
            Ok(Some(frame)) => got.push(frame),
            Ok(None) => return (got, Ok(())),
            Err(lost) => return (got, Err(lost)),
        }
    }
}

fn methods(frames: &[Frame]) -> Vec<&str> {
    frames
        .iter()
        .map(|f| match f {
            Frame::Message(m) => m.method(),
            Frame::Refused(_) => "refused",
            Frame::Ignored => "ignored",
        })
        .collect()
}

fn refusal(frame: &Frame) -> &Answer {
    match frame {
        Frame::Refused(answer) => answer,
        other => panic!("a refusal, not {other:?}"),
    }
}

fn framing_error(lost: Result<(), Lost>) -> Answer {
    match lost {
        Err(Lost::Framing(answer)) => answer,
        other => panic!("lost framing, not {other:?}"),
    }
}

const HOVER: &str = r#"{"jsonrpc":"2.0","id":7,"method":"textDocument/hover","params":{"x":1}}"#;

#[test]
fn messages_follow_each_other_with_any_headers() {
    let mut input = frame(r#"{"jsonrpc":"2.0","method":"initialized","params":{}}"#);
    input.extend(
        format!(
            "content-length:{}\r\nContent-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n{HOVER}",
            HOVER.len()
        )
        .bytes(),
    );
    input.extend(frame(r#"{"jsonrpc":"2.0","id":1,"result":null}"#));
    let (got, end) = frames(&input);
    assert_eq!(end, Ok(()));
    assert_eq!(
        methods(&got),
        ["initialized", "textDocument/hover", "ignored"]
    );
    let Frame::Message(Incoming::Request { id, params, .. }) = &got[1] else {
        panic!("a request");
    };
    assert_eq!(id.get(), "7");
    assert_eq!(params.parse::<serde_json::Value>().expect("params")["x"], 1);
}

#[test]
fn a_body_over_the_limit_is_refused_then_skipped_exactly() {
    let text = "x".repeat(MAX_BODY + 1);
    let mut input = frame(&text);
    input.extend(frame(HOVER));
    let (got, end) = frames(&input);
    assert_eq!(end, Ok(()));
    assert_eq!(methods(&got), ["refused", "textDocument/hover"]);
    let answer = refusal(&got[0]);
    assert_eq!(answer.code, code::INVALID_REQUEST);
    assert!(
        answer.message.contains(&format!("{} bytes", MAX_BODY + 1)),
        "{}",
        answer.message
    );
    // At the limit, the body is read (and here is no JSON).
    let (got, _) = frames(&frame(&"x".repeat(MAX_BODY)));
    assert_eq!(refusal(&got[0]).code, code::PARSE_ERROR);
}

#[test]
fn a_length_past_every_integer_is_over_the_limit() {
    let (got, end) = frames(b"Content-Length: 99999999999999999999999999\r\n\r\n{}");
    assert_eq!(refusal(&got[0]).code, code::INVALID_REQUEST);
    let Err(Lost::Input(reason)) = end else {
        panic!("{end:?}");
    };
    assert!(
        reason.contains("inside a message (2 of its 18446744073709551615 bytes"),
        "{reason}"
    );
}

#[test]
fn bodies_that_are_not_messages_are_answered_and_the_next_is_read() {
    let bodies = [
        ("{\"id\": 1, \"method\": ", code::PARSE_ERROR),
        ("[1, 2]", code::INVALID_REQUEST),
        (r#"[null, "initialized", {}]"#, code::INVALID_REQUEST),
        ("[1, ", code::PARSE_ERROR),
        ("\"text\"", code::INVALID_REQUEST),
        ("{}", code::INVALID_REQUEST),
        (r#"{"id": true, "method": "x"}"#, code::INVALID_REQUEST),
        (r#"{"id": 1, "method": 2}"#, code::INVALID_REQUEST),
        (r#"{"method": "a", "method": "b"}"#, code::INVALID_REQUEST),
        // Deep nesting is JSON all the same (checked without recursion), and no object.
        (
            &format!("{}1{}", "[".repeat(100_000), "]".repeat(100_000)),
            code::INVALID_REQUEST,
        ),
        (&format!("{}1", "[".repeat(100_000)), code::PARSE_ERROR),
    ];
    for (body, expected) in bodies {
        let mut input = frame(body);
        input.extend(frame(HOVER));
        let (got, end) = frames(&input);
        assert_eq!(end, Ok(()), "{body}");
        let shown = &body[..body.len().min(30)];
        assert_eq!(methods(&got), ["refused", "textDocument/hover"], "{shown}");
        assert_eq!(refusal(&got[0]).code, expected, "{shown}");
    }
    // Invalid UTF-8 inside a string is a parse error.
    let mut input = b"Content-Length: 15\r\n\r\n{\"method\":\"\xff\xfe\"}".to_vec();
    input.extend(frame(HOVER));
    let (got, _) = frames(&input);
    assert_eq!(methods(&got), ["refused", "textDocument/hover"]);
    assert_eq!(refusal(&got[0]).code, code::PARSE_ERROR);
}

#[test]
fn deeply_nested_parameters_reach_the_handler_which_refuses_them() {
    let body = format!(
        r#"{{"method":"textDocument/didOpen","params":{}1{}}}"#,
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let (got, end) = frames(&frame(&body));
    assert_eq!(end, Ok(()));
    let Frame::Message(Incoming::Notification { params, .. }) = &got[0] else {
        panic!("a notification");
    };
    let error = params.parse::<serde_json::Value>().expect_err("too deep");
    assert!(error.to_string().contains("recursion limit"), "{error}");
}

#[test]
fn lost_framing_is_answered_with_its_reason() {
    let long = format!("X-Padding: {}\r\n\r\n", "a".repeat(MAX_HEADER_LINE));
    let many = "X-Padding: a\r\n".repeat(MAX_HEADERS + 1) + "Content-Length: 2\r\n\r\n{}";
    let cases: [(&[u8], &str); 8] = [
        (b"Content-Type: x\r\n\r\n{}", "no Content-Length"),
        (b"\r\n{}", "no Content-Length"),
        (
            b"Content-Length: 1e3\r\n\r\n",
            "Content-Length `1e3` is not a number",
        ),
        (
            b"Content-Length: \r\n\r\n",
            "Content-Length `` is not a number",
        ),
        (
            b"Content-Length: 2\r\nContent-Length: 3\r\n\r\n{}",
            "two different",
        ),
        (b"Content-Length: 2\n\n{}", "without a carriage return"),
        (long.as_bytes(), "longer than 1024 bytes"),
        (many.as_bytes(), "more than 32 header lines"),
    ];
    for (input, why) in cases {
        let (got, end) = frames(input);
        assert!(got.is_empty(), "{why}");
        let answer = framing_error(end);
        assert_eq!(answer.code, code::PARSE_ERROR, "{why}");
        assert!(answer.message.contains(why), "{why}: {}", answer.message);
    }
    let (_, end) = frames(b"Content-Length 2\r\n\r\n{}");
    assert_eq!(
        framing_error(end).message,
        "not a header line: `Content-Length 2`"
    );
    // A line at the limit is read; the same header twice with one value is accepted.
    let exact = format!("X: {}\r\n", "a".repeat(MAX_HEADER_LINE - 5));
    assert_eq!(exact.len(), MAX_HEADER_LINE);
    let mut input = exact.into_bytes();
    input.extend(b"Content-Length: 2\r\ncontent-length: 2\r\n\r\n{}");
    let (got, end) = frames(&input);
    assert_eq!(end, Ok(()));
    assert_eq!(methods(&got), ["refused"]);
}

#[test]
fn an_input_that_ends_inside_a_message_is_lost_input() {
    for input in [
        &b"Content-Length: 10\r\n"[..],
        b"Content-Length: 10\r\n\r\n{}",
        b"Content-Le",
    ] {
        let (got, end) = frames(input);
        assert!(got.is_empty());
        assert!(
            matches!(&end, Err(Lost::Input(reason)) if reason.contains("ended inside a message")),
            "{end:?}"
        );
    }
    assert_eq!(frames(b"").1, Ok(()));
}

/// A reader that hands out one byte a call, as a slow writer on a pipe would.
struct Trickle<'a>(&'a [u8]);

impl Read for Trickle<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some((first, rest)) = self.0.split_first() else {
            return Ok(0);
        };
        if buf.is_empty() {
            return Ok(0);
        }
        buf[0] = *first;
        self.0 = rest;
        Ok(1)
    }
}

#[test]
fn a_message_split_into_single_bytes_reads_the_same() {
    let mut input = frame(&"y".repeat(MAX_BODY + 10));
    input.extend(frame(HOVER));
    input.extend(frame(HOVER));
    let mut reader = FrameReader::new(BufReader::new(Trickle(&input)));
    let mut got = Vec::new();
    while let Some(frame) = reader.next_frame().expect("frames") {
        got.push(frame);
    }
    assert_eq!(
        methods(&got),
        ["refused", "textDocument/hover", "textDocument/hover"]
    );
}

#[test]
fn answers_are_json_rpc() {
    let id = RawValue::from_string("\"a\"".to_owned()).expect("id");
    let ok: serde_json::Value =
        serde_json::from_str(&ok_response(&id, Option::<u8>::None)).expect("json");
    assert_eq!(
        ok,
        serde_json::json!({ "jsonrpc": "2.0", "id": "a", "result": null })
    );
    let refused: serde_json::Value =
        serde_json::from_str(&Answer::new(code::PARSE_ERROR, "no").to_json()).expect("json");
    assert_eq!(
        refused,
        serde_json::json!({ "jsonrpc": "2.0", "id": null, "error": { "code": -32700, "message": "no" } })
    );
}

#[test]
fn header_names_are_read_in_any_case_and_space_around_a_value_is_ignored() {
    // HTTP's convention, which LSP's base protocol follows: a header's name is
    // case-insensitive and optional white space may stand around its value.
    for header in [
        "Content-Length: 71 ",
        "content-length:71",
        "CONTENT-LENGTH:\t71\t",
    ] {
        let input = format!("{header}\r\n\r\n{HOVER}");
        let (got, end) = frames(input.as_bytes());
        assert_eq!(end, Ok(()), "{header:?}");
        assert_eq!(methods(&got), ["textDocument/hover"], "{header:?}");
    }
    // Inside the value only decimal digits.
    for value in ["7 1", "+71", "0x47", "71;", "71\u{b}", "\u{a0}71"] {
        let input = format!("Content-Length: {value}\r\n\r\n{HOVER}");
        let (got, end) = frames(input.as_bytes());
        assert!(got.is_empty(), "{value:?}");
        let answer = framing_error(end);
        assert!(
            answer.message.contains("is not a number"),
            "{value:?}: {}",
            answer.message
        );
    }
}

#[test]
fn long_ids_and_long_messages_are_not_repeated() {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"{}","method":"shutdown"}}"#,
        "i".repeat(MAX_ID)
    );
    let (got, _) = frames(&frame(&body));
    let answer = refusal(&got[0]);
    assert!(
        answer.message.contains("over the 256"),
        "{}",
        answer.message
    );
    // An id of 256 bytes of JSON (its quotes included) is kept.
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"{}","method":"shutdown"}}"#,
        "i".repeat(MAX_ID - 2)
    );
    let (got, _) = frames(&frame(&body));
    assert_eq!(methods(&got), ["shutdown"]);
    // A message that quotes the client is cut at a character's start.
    let quoted = format!("no method {}", "é".repeat(MAX_MESSAGE));
    let json = error_response(None, code::METHOD_NOT_FOUND, &quoted);
    let value: serde_json::Value = serde_json::from_str(&json).expect("JSON");
    let message = value["error"]["message"].as_str().expect("a message");
    assert!(
        message.len() <= MAX_MESSAGE + '…'.len_utf8(),
        "{}",
        message.len()
    );
    assert!(message.ends_with('…'));
}
