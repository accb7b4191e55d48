//! `ozcheck server` fed hostile byte streams over its real standard input: a declared length far
//! over the limit, a large declared length with part of the body sent, a body that is not JSON,
//! bad headers, many and large open documents, and a change with many content changes. Each
//! test checks the answer and that the process's peak resident memory (`VmHWM` in
//! `/proc/<pid>/status`) stays under [`PEAK_LIMIT_KB`] while it works.
//!
//! The server's output is read by a thread of its own, so a server that stops answering is
//! noticed by the memory watch (a server buffering a huge message grows without end) or, at
//! worst, by [`HANG_GUARD`]; that guard only keeps a broken server from hanging the suite, it
//! asserts nothing about speed.

use std::io::{BufRead, BufReader, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The peak resident memory the server may reach, in KiB (64 MB).
const PEAK_LIMIT_KB: u64 = 64 * 1000;

/// How long to wait for an expected message before giving up on the server.
const HANG_GUARD: Duration = Duration::from_secs(120);

struct Server {
    child: Child,
    stdin: Option<ChildStdin>,
    messages: Receiver<Value>,
    stderr: Receiver<String>,
    next_id: i64,
    /// The highest peak read so far, printed when the test ends (`--nocapture` shows it).
    peak_seen: u64,
    /// While set, the reading thread reads nothing more of the server's output (a client that
    /// never reads).
    paused: Arc<AtomicBool>,
}

impl Server {
    /// Starts the server and completes the handshake.
    fn start() -> Server {
        let mut server = Server::spawn();
        let id = server.send_request("initialize", &json!({ "capabilities": {} }));
        let init = server.response(id);
        assert!(init.get("result").is_some(), "{init}");
        server.send_json(&json!({ "jsonrpc": "2.0", "method": "initialized", "params": {} }));
        server
    }

    /// Starts the server without the handshake.
    fn spawn() -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ozcheck"))
            .arg("server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("ozcheck server starts");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        let stderr = child.stderr.take().expect("stderr");
        let (tx, messages) = channel();
        let paused = Arc::new(AtomicBool::new(false));
        let pause = Arc::clone(&paused);
        std::thread::spawn(move || {
            let mut stdout = BufReader::new(stdout);
            loop {
                while pause.load(Ordering::Relaxed) {
                    std::thread::sleep(Duration::from_millis(10));
                }
                let Some(message) = read_frame(&mut stdout) else {
                    break;
                };
                if tx.send(message).is_err() {
                    break;
                }
            }
        });
        let (tx, stderr_lines) = channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        Server {
            child,
            stdin,
            messages,
            stderr: stderr_lines,
            next_id: 0,
            peak_seen: 0,
            paused,
        }
    }

    /// Writes raw bytes; a server that has closed its input is not an error here (the answer
    /// it wrote before is what the tests check).
    fn write(&mut self, bytes: &[u8]) {
        if let Some(stdin) = self.stdin.as_mut() {
            let _ = stdin.write_all(bytes).and_then(|()| stdin.flush());
        }
    }

    fn send_json(&mut self, message: &Value) {
        self.write(&frame(message.to_string().as_bytes()));
    }

    fn send_request(&mut self, method: &str, params: &Value) -> i64 {
        self.next_id += 1;
        let id = self.next_id;
        self.send_json(&json!({ "jsonrpc": "2.0", "id": id, "method": method, "params": params }));
        id
    }

    fn notify(&mut self, method: &str, params: &Value) {
        self.send_json(&json!({ "jsonrpc": "2.0", "method": method, "params": params }));
    }

    /// The peak resident memory of the server so far, in KiB; `None` once it has ended (an
    /// exited process has no memory figures left to read).
    fn peak_kb(&self) -> Option<u64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).ok()?;
        status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
    }

    /// Fails (and stops the server) when its peak memory is over the limit.
    fn check_peak(&mut self) {
        let Some(peak) = self.peak_kb() else {
            return;
        };
        self.peak_seen = self.peak_seen.max(peak);
        if peak > PEAK_LIMIT_KB {
            let _ = self.child.kill();
            panic!("the server's peak resident memory is {peak} KiB, over {PEAK_LIMIT_KB} KiB");
        }
    }

    /// The next message that `wanted` accepts, watching the server's memory meanwhile.
    fn expect(&mut self, what: &str, wanted: impl Fn(&Value) -> bool) -> Value {
        let start = Instant::now();
        loop {
            self.check_peak();
            match self.messages.recv_timeout(Duration::from_millis(20)) {
                Ok(message) if wanted(&message) => return message,
                Ok(_) => {}
                Err(RecvTimeoutError::Timeout) => {
                    if start.elapsed() > HANG_GUARD {
                        let _ = self.child.kill();
                        panic!("no {what} from the server");
                    }
                }
                Err(RecvTimeoutError::Disconnected) => {
                    let status = self.child.wait().expect("wait");
                    panic!(
                        "the server ended ({status}) before {what}; stderr: {:?}",
                        self.stderr_lines()
                    );
                }
            }
        }
    }

    /// The response to request `id`.
    fn response(&mut self, id: i64) -> Value {
        self.expect(&format!("response to request {id}"), |m| {
            m["id"] == id && m.get("method").is_none()
        })
    }

    /// The next error response, which must have a null id (the server could not read the
    /// message's id).
    fn null_id_error(&mut self) -> Value {
        let answer = self.expect("a response", |m| m.get("method").is_none());
        assert!(
            answer.get("id") == Some(&Value::Null) && answer.get("error").is_some(),
            "an error response with a null id was due first: {answer}"
        );
        answer
    }

    /// Closes the server's input and waits for it to end.
    fn close(mut self) -> (ExitStatus, Vec<String>) {
        self.check_peak();
        drop(self.stdin.take());
        let status = self.child.wait().expect("the server ends");
        let lines = self.stderr_lines();
        (status, lines)
    }

    fn stderr_lines(&self) -> Vec<String> {
        let mut lines = Vec::new();
        while let Ok(line) = self.stderr.recv_timeout(Duration::from_millis(200)) {
            lines.push(line);
        }
        lines
    }

    /// Asks for shutdown and exit, which must end the server with success.
    fn stop(mut self) {
        self.check_peak();
        let id = self.send_request("shutdown", &Value::Null);
        let answer = self.response(id);
        assert_eq!(answer.get("result"), Some(&Value::Null), "{answer}");
        self.notify("exit", &Value::Null);
        let (status, stderr) = self.close();
        assert!(status.success(), "{status}: {stderr:?}");
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let test = std::thread::current();
        eprintln!(
            "{}: the server's peak resident memory was {} KiB",
            test.name().unwrap_or("?"),
            self.peak_seen
        );
        // A failed test must not leave a server spinning.
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn frame(body: &[u8]) -> Vec<u8> {
    let mut framed = format!("Content-Length: {}\r\n\r\n", body.len()).into_bytes();
    framed.extend_from_slice(body);
    framed
}

/// One message of the server's output (the tests' own reader: an error response with a null
/// id is valid JSON-RPC that `lsp-server`'s `Message` cannot read).
fn read_frame(input: &mut impl BufRead) -> Option<Value> {
    let mut length = None;
    loop {
        let mut line = String::new();
        if input.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some(value) = line.strip_prefix("Content-Length: ") {
            length = Some(value.parse::<usize>().expect("the server's Content-Length"));
        }
    }
    let mut body = vec![0; length.expect("a Content-Length from the server")];
    input.read_exact(&mut body).ok()?;
    Some(serde_json::from_slice(&body).expect("the server writes JSON"))
}

fn error_code(message: &Value) -> i64 {
    message["error"]["code"].as_i64().unwrap_or_default()
}

/// A hover on a document that is not open: the server answers `null`, which shows it is still
/// reading and answering after whatever came before.
fn answers_a_hover(server: &mut Server) {
    let id = server.send_request(
        "textDocument/hover",
        &json!({ "textDocument": { "uri": "file:///nowhere/a.yaml" }, "position": { "line": 0, "character": 0 } }),
    );
    let answer = server.response(id);
    assert_eq!(answer.get("result"), Some(&Value::Null), "{answer}");
}

#[test]
fn a_length_of_a_hundred_gigabytes_is_refused_before_its_body() {
    let mut server = Server::start();
    server.write(b"Content-Length: 99999999999\r\n\r\n{\"jsonrpc\":\"2.0\",");
    let answer = server.null_id_error();
    assert_eq!(error_code(&answer), -32600, "{answer}");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("99999999999 bytes"), "{message}");
    // The server is still reading (skipping), so its figures are there to check.
    assert!(server.peak_kb().is_some_and(|kb| kb <= PEAK_LIMIT_KB));
    // The server is skipping the declared body: the end of the input inside it ends the server
    // with a line that says so.
    let (status, stderr) = server.close();
    assert_eq!(status.code(), Some(2), "{stderr:?}");
    assert!(
        stderr.iter().any(|l| l.contains("inside a message")),
        "{stderr:?}"
    );
}

#[test]
fn two_gigabytes_declared_and_ten_megabytes_sent_are_skipped_in_pieces() {
    let mut server = Server::start();
    server.write(b"Content-Length: 2000000000\r\n\r\n");
    let answer = server.null_id_error();
    assert_eq!(error_code(&answer), -32600, "{answer}");
    let chunk = vec![b'x'; 1 << 20];
    for _ in 0..10 {
        server.write(&chunk);
        server.check_peak();
    }
    server.check_peak();
    let (status, stderr) = server.close();
    assert_eq!(status.code(), Some(2), "{stderr:?}");
}

#[test]
fn a_length_just_over_the_limit_is_skipped_and_the_next_request_answered() {
    let mut server = Server::start();
    // A whole message over the limit, sent in full: the server skips exactly its bytes.
    let text = "# a comment\n".repeat(250_000);
    let body = json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": { "uri": "file:///big/a.yaml", "languageId": "yaml", "version": 1, "text": text } } });
    server.write(&frame(body.to_string().as_bytes()));
    // The hover is sent before the refusal is awaited, so that a server that took the message
    // answers the hover first and fails here rather than waiting.
    let hover = server.send_request(
        "textDocument/hover",
        &json!({ "textDocument": { "uri": "file:///big/a.yaml" }, "position": { "line": 0, "character": 0 } }),
    );
    let answer = server.null_id_error();
    assert_eq!(error_code(&answer), -32600, "{answer}");
    assert_eq!(server.response(hover).get("result"), Some(&Value::Null));
    server.stop();
}

#[test]
fn a_body_that_is_not_json_gets_a_parse_error_and_the_next_request_its_answer() {
    let mut server = Server::start();
    server.write(&frame(b"{\"jsonrpc\": \"2.0\", \"id\": 5, \"method\": "));
    let answer = server.null_id_error();
    assert_eq!(error_code(&answer), -32700, "{answer}");
    // Not UTF-8 either.
    server.write(&frame(b"{\"jsonrpc\":\"2.0\",\"method\":\"\xff\xfe\"}"));
    assert_eq!(error_code(&server.null_id_error()), -32700);
    // JSON, but no message: an invalid request.
    server.write(&frame(b"[1, 2, 3]"));
    assert_eq!(error_code(&server.null_id_error()), -32600);
    answers_a_hover(&mut server);
    server.stop();
}

/// Starts a server, sends `bytes` after the handshake and returns the error it answers and
/// what it wrote on stderr when it closed the connection.
fn refused_header(bytes: &[u8]) -> (Value, ExitStatus, Vec<String>) {
    let mut server = Server::start();
    server.write(bytes);
    let answer = server.null_id_error();
    server.check_peak();
    let (status, stderr) = server.close();
    (answer, status, stderr)
}

#[test]
fn bad_headers_get_an_error_and_a_clear_line_on_stderr() {
    let long_line = {
        let mut line = b"X-Padding: ".to_vec();
        line.extend(std::iter::repeat_n(b'a', 100 << 20));
        line
    };
    let many_lines = "X-Padding: a\r\n".repeat(1_000_000).into_bytes();
    let cases: [(&[u8], &str); 6] = [
        (
            b"Content-Type: application/vscode-jsonrpc\r\n\r\n{}",
            "no Content-Length",
        ),
        (b"Content-Length: twelve\r\n\r\n{}", "Content-Length"),
        (b"Content-Length: -1\r\n\r\n{}", "Content-Length"),
        (b"Content-Length 2\r\n\r\n{}", "not a header"),
        (&long_line, "longer than"),
        (&many_lines, "more than"),
    ];
    for (bytes, why) in cases {
        let (answer, status, stderr) = refused_header(bytes);
        let shown = String::from_utf8_lossy(&bytes[..bytes.len().min(40)]).into_owned();
        assert_eq!(error_code(&answer), -32700, "{shown}: {answer}");
        let message = answer["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains(why), "{shown}: {message}");
        assert_eq!(status.code(), Some(2), "{shown}: {stderr:?}");
        assert!(
            stderr.iter().any(|l| l.contains(why)),
            "{shown}: {stderr:?}"
        );
    }
}

#[test]
fn many_large_open_documents_stay_under_the_bound() {
    let mut server = Server::start();
    // Each text is just under the 1 MiB document limit; the server keeps 16 MiB of them and
    // says which it does not lint.
    let text = format!("# {}\n", "x".repeat(1_000_000));
    let mut refused = 0;
    for n in 0..64 {
        let uri = format!("file:///many/{n}.yaml");
        server.notify(
            "textDocument/didOpen",
            &json!({ "textDocument": { "uri": uri, "languageId": "yaml", "version": 1, "text": text } }),
        );
        let answer = server.expect("diagnostics or a warning", |m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
                || m["method"] == "window/showMessage"
        });
        if answer["method"] == "window/showMessage" {
            let message = answer["params"]["message"].as_str().unwrap_or_default();
            assert!(
                message.contains(&uri) && message.contains("16 MiB"),
                "{message}"
            );
            refused += 1;
        }
        server.check_peak();
    }
    assert!((40..64).contains(&refused), "{refused} refused");
    // Closing documents makes room again.
    for n in 0..8 {
        server.notify(
            "textDocument/didClose",
            &json!({ "textDocument": { "uri": format!("file:///many/{n}.yaml") } }),
        );
    }
    let uri = "file:///many/again.yaml";
    server.notify(
        "textDocument/didOpen",
        &json!({ "textDocument": { "uri": uri, "languageId": "yaml", "version": 1, "text": text } }),
    );
    server.expect("diagnostics of the reopened document", |m| {
        m["method"] == "textDocument/publishDiagnostics"
            && m["params"]["uri"] == uri
            && m["params"]["diagnostics"] == json!([])
    });
    answers_a_hover(&mut server);
    server.stop();
}

#[test]
fn many_small_open_documents_stay_under_the_bound() {
    let mut server = Server::start();
    let mut refused = 0;
    for n in 0..1_100 {
        let uri = format!("file:///small/{n}.yaml");
        server.notify(
            "textDocument/didOpen",
            &json!({ "textDocument": { "uri": uri, "languageId": "yaml", "version": 1, "text": "a: 1\n" } }),
        );
        let answer = server.expect("diagnostics or a warning", |m| {
            m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
                || m["method"] == "window/showMessage"
        });
        if answer["method"] == "window/showMessage" {
            refused += 1;
        }
    }
    assert_eq!(refused, 100);
    answers_a_hover(&mut server);
    server.stop();
}

#[test]
fn a_change_with_many_content_changes_keeps_only_the_last() {
    let mut server = Server::start();
    let uri = "file:///changes/a.yaml";
    server.notify(
        "textDocument/didOpen",
        &json!({ "textDocument": { "uri": uri, "languageId": "yaml", "version": 1, "text": "a: 1\n" } }),
    );
    // 170,000 one-key objects (2 MB): as a tree of JSON values this is about a hundred
    // megabytes; the server keeps one text.
    let mut changes = "{\"text\":\"\"},".repeat(170_000);
    changes.push_str("{\"text\":\"b: 2\\n\"}");
    let body = format!(
        "{{\"jsonrpc\":\"2.0\",\"method\":\"textDocument/didChange\",\"params\":{{\"textDocument\":{{\"uri\":\"{uri}\",\"version\":2}},\"contentChanges\":[{changes}]}}}}"
    );
    server.write(&frame(body.as_bytes()));
    server.expect("diagnostics after the change", |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["version"] == 2
    });
    answers_a_hover(&mut server);
    server.stop();
}

/// A URI of `length` bytes for an agent in a plugin folder.
fn long_uri(n: usize, length: usize) -> String {
    let head = format!("file:///nowhere/plugin/agents/{n}");
    format!("{head}{}.yaml", "u".repeat(length - head.len() - 5))
}

#[test]
fn a_document_with_an_over_long_uri_is_refused_with_a_short_warning() {
    let mut server = Server::start();
    let uri = long_uri(0, 1_000_000);
    server.notify(
        "textDocument/didOpen",
        &json!({ "textDocument": { "uri": uri, "languageId": "yaml", "version": 1, "text": "name: a\n" } }),
    );
    let warning = server.expect("a warning", |m| m["method"] == "window/showMessage");
    let message = warning["params"]["message"].as_str().unwrap_or_default();
    assert!(
        message.len() < 300
            && message.contains("file:///nowhere/plugin/agents/0uuu")
            && message.contains("1000000 bytes long, over the 4096"),
        "{}",
        &message[..message.len().min(300)]
    );
    // Not opened: a change, a save and a close of it publish nothing, a hover finds nothing.
    server.notify(
        "textDocument/didChange",
        &json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "text": "name: b\n" }] }),
    );
    server.notify(
        "textDocument/didSave",
        &json!({ "textDocument": { "uri": uri } }),
    );
    server.notify(
        "textDocument/didClose",
        &json!({ "textDocument": { "uri": uri } }),
    );
    let id = server.send_request(
        "textDocument/hover",
        &json!({ "textDocument": { "uri": uri }, "position": { "line": 0, "character": 0 } }),
    );
    let answer = server.expect("the hover's answer or diagnostics", |m| {
        m["id"] == id || m["method"] == "textDocument/publishDiagnostics"
    });
    assert_eq!(
        answer.get("result"),
        Some(&Value::Null),
        "diagnostics: {}",
        answer["method"]
    );
    // A URI of 4,096 bytes is opened as usual.
    let uri = long_uri(1, 4096);
    server.notify(
        "textDocument/didOpen",
        &json!({ "textDocument": { "uri": uri, "languageId": "yaml", "version": 1, "text": "name: a\n" } }),
    );
    server.expect("diagnostics of a URI at the limit", |m| {
        m["method"] == "textDocument/publishDiagnostics" && m["params"]["uri"] == uri
    });
    server.stop();
}

#[test]
fn error_messages_and_ids_do_not_repeat_long_strings() {
    let mut server = Server::start();
    let method = "m".repeat(1_000_000);
    let id = server.send_request(&method, &Value::Null);
    let answer = server.response(id);
    assert_eq!(error_code(&answer), -32601, "{}", answer.to_string().len());
    assert!(
        answer.to_string().len() < 1000,
        "{}",
        answer.to_string().len()
    );
    // serde's message quotes a string it could not read as a number.
    let id = server.send_request(
        "textDocument/hover",
        &json!({ "textDocument": { "uri": "file:///a.yaml" }, "position": { "line": "9".repeat(1_000_000), "character": 0 } }),
    );
    let answer = server.response(id);
    assert_eq!(error_code(&answer), -32602, "{}", answer.to_string().len());
    assert!(
        answer.to_string().len() < 1000,
        "{}",
        answer.to_string().len()
    );
    // An id every answer would repeat.
    let long_id = "i".repeat(1_000_000);
    server.send_json(&json!({ "jsonrpc": "2.0", "id": long_id, "method": "shutdown" }));
    let answer = server.null_id_error();
    assert_eq!(error_code(&answer), -32600);
    assert!(
        answer.to_string().len() < 1000,
        "{}",
        answer.to_string().len()
    );
    answers_a_hover(&mut server);
    server.stop();
}

#[test]
fn a_client_that_never_reads_while_opening_long_uris_stays_under_the_bound() {
    let mut server = Server::start();
    server.paused.store(true, Ordering::Relaxed);
    let mut stdin = server.stdin.take().expect("stdin");
    // 100 documents with URIs of 2 MB each, written while nothing reads the server's output.
    let writer = std::thread::spawn(move || {
        for n in 0..100 {
            let body = json!({ "jsonrpc": "2.0", "method": "textDocument/didOpen", "params": { "textDocument": { "uri": long_uri(n, 2_000_000), "languageId": "yaml", "version": 1, "text": "name: a\n" } } });
            if stdin
                .write_all(&frame(body.to_string().as_bytes()))
                .is_err()
            {
                break;
            }
        }
        stdin
    });
    let start = Instant::now();
    while !writer.is_finished() && start.elapsed() < Duration::from_secs(10) {
        server.check_peak();
        std::thread::sleep(Duration::from_millis(20));
    }
    // Wait a little for the server to process what it has read.
    for _ in 0..75 {
        server.check_peak();
        std::thread::sleep(Duration::from_millis(20));
    }
    server.paused.store(false, Ordering::Relaxed);
    server.stdin = Some(writer.join().expect("the writer"));
    answers_a_hover(&mut server);
    server.stop();
}
