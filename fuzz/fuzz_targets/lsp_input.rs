//! Any bytes on the language server's standard input, read twice: as they are (the framing
//! reader: headers, declared lengths, skipped bodies, lost framing), and split at NUL bytes
//! into bodies that are framed correctly after an `initialize` (the message dispatch: every
//! method with any parameters). The server must end without a panic, its output must be
//! frames of JSON-RPC objects, and correctly framed input must never be given up.
#![no_main]

use std::io::{Cursor, Write};
use std::sync::{Arc, Mutex};

use libfuzzer_sys::fuzz_target;

/// The server's output, kept for the checks after it ends.
#[derive(Clone, Default)]
struct Output(Arc<Mutex<Vec<u8>>>);

impl Write for Output {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().expect("output").extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

fn frame(body: &[u8], into: &mut Vec<u8>) {
    into.extend_from_slice(format!("Content-Length: {}\r\n\r\n", body.len()).as_bytes());
    into.extend_from_slice(body);
}

/// Runs the server over `input`; `Err` when it gave the input up.
fn serve(input: Vec<u8>) -> Result<(), String> {
    let output = Output::default();
    let result = ozcheck::server::run_on(Cursor::new(input), output.clone());
    let written = output.0.lock().expect("output").clone();
    check_frames(&written);
    result
}

/// Every message the server wrote is framed by its exact length and is a JSON-RPC object.
fn check_frames(mut bytes: &[u8]) {
    while !bytes.is_empty() {
        let end = bytes
            .windows(4)
            .position(|w| w == b"\r\n\r\n")
            .expect("a header ends");
        let header = std::str::from_utf8(&bytes[..end]).expect("an ASCII header");
        let length: usize = header
            .strip_prefix("Content-Length: ")
            .and_then(|n| n.parse().ok())
            .expect("one Content-Length header");
        let body = &bytes[end + 4..end + 4 + length];
        let message: serde_json::Value = serde_json::from_slice(body).expect("a JSON body");
        assert_eq!(message["jsonrpc"], "2.0", "{message}");
        bytes = &bytes[end + 4 + length..];
    }
}

fuzz_target!(|data: &[u8]| {
    let _ = serve(data.to_vec());
    let mut framed = Vec::new();
    frame(
        br#"{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"capabilities":{}}}"#,
        &mut framed,
    );
    for body in data.split(|b| *b == 0) {
        frame(body, &mut framed);
    }
    if let Err(e) = serve(framed) {
        // Correct framing is never given up; only a body over the limit is skipped, and it
        // is skipped whole.
        panic!("framed input given up: {e}");
    }
});
