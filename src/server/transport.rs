//! The server's transport: LSP's base protocol (a `Content-Length` header, a blank line, a JSON
//! body) read from standard input with every piece bounded, and messages written to standard
//! output by a thread of their own.
//!
//! The input is untrusted: an editor is one client, but anything that can write to the pipe is
//! another. Before anything is allocated for a message its headers are read a line at a time
//! (at most [`MAX_HEADER_LINE`] bytes a line, [`MAX_HEADERS`] lines) and its declared length is
//! checked against [`MAX_BODY`]; a body over it is answered with an error and skipped through
//! the reader's buffer without being stored, so the next message is read as usual. A body is
//! read as it arrives (a declared length reserves nothing) and parsed straight into an
//! [`Incoming`] whose parameters stay JSON text until the handler deserialises them into the
//! few fields it reads: a tree of `serde_json::Value`s would cost up to a hundred times the
//! body's bytes (an object of one key is a B-tree node of about 600 bytes). A body that is not
//! JSON is answered with error -32700, JSON that is no message with -32600, both with a null
//! id, and the server carries on. When the framing itself is lost (a missing or unreadable
//! `Content-Length`, a header line too long or too many of them, a line that is no header)
//! the next message cannot be found: the reader answers -32700 and the server ends with the
//! reason on standard error (exit 2).

use std::borrow::Cow;
use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::thread::{self, JoinHandle};

use crossbeam_channel::{Receiver, Sender, bounded};
use serde::de::{DeserializeOwned, IgnoredAny};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;

/// The longest header line, its CR LF included. Clients send `Content-Length` and at most a
/// `Content-Type` of about 50 bytes.
pub const MAX_HEADER_LINE: usize = 1024;

/// The most header lines of one message.
pub const MAX_HEADERS: usize = 32;

/// Room in a body for what is not the document's text: the JSON-RPC envelope, the URI and
/// the other parameters.
const ENVELOPE: usize = 64 * 1024;

/// The longest body accepted: a document at the lint's limit
/// ([`ozcheck_lint::MAX_FILE_BYTES`], 1 MiB) in a JSON string, where each character of a YAML
/// file takes at most two bytes (`\n`, `\t`, `\"`, `\\`; YAML allows no other control
/// character), plus [`ENVELOPE`].
pub const MAX_BODY: usize = 2 * ozcheck_lint::MAX_FILE_BYTES + ENVELOPE;

/// The longest error message the server sends (in bytes): one that quotes what the client
/// sent (a method's name, a value serde could not read) is cut there, so that no answer
/// waiting in the queue holds an unbounded copy of the client's strings.
pub const MAX_MESSAGE: usize = 512;

/// The longest request id the server accepts (in bytes of JSON): every answer repeats it.
pub const MAX_ID: usize = 256;

/// The capacity of the input buffer, which is also the piece a refused body is skipped in.
const INPUT_BUFFER: usize = 64 * 1024;

/// JSON-RPC's error codes that the transport and the handlers answer with.
pub mod code {
    /// The body is not JSON, or the framing is lost.
    pub const PARSE_ERROR: i32 = -32700;
    /// JSON that is not a message, or a message over the size limit.
    pub const INVALID_REQUEST: i32 = -32600;
    pub const METHOD_NOT_FOUND: i32 = -32601;
    pub const INVALID_PARAMS: i32 = -32602;
    pub const INTERNAL_ERROR: i32 = -32603;
    /// LSP: a request before `initialize`.
    pub const SERVER_NOT_INITIALIZED: i32 = -32002;
}

/// A message from the client (its responses to requests are dropped: the server sends none).
#[derive(Debug)]
pub enum Incoming {
    Request {
        /// The id, as the client wrote it (a number or a string), echoed in the answer.
        id: Box<RawValue>,
        method: String,
        params: Params,
    },
    Notification {
        method: String,
        params: Params,
    },
}

impl Incoming {
    /// The method's name.
    pub fn method(&self) -> &str {
        match self {
            Incoming::Request { method, .. } | Incoming::Notification { method, .. } => method,
        }
    }
}

/// A message's parameters, kept as JSON text until the handler reads the fields it uses.
#[derive(Debug, Default)]
pub struct Params(Option<Box<RawValue>>);

impl Params {
    /// The parameters as `P` (absent parameters read as `null`).
    pub fn parse<P: DeserializeOwned>(&self) -> Result<P, serde_json::Error> {
        serde_json::from_str(self.0.as_deref().map_or("null", RawValue::get))
    }
}

/// What the reader got from the input.
#[derive(Debug)]
pub enum Frame {
    /// A request or a notification.
    Message(Incoming),
    /// A message that could not be used, whose end was found: the error to answer.
    Refused(Answer),
    /// A response from the client, or a message without id and method that is not worth an
    /// answer.
    Ignored,
}

/// An error answer that the transport writes itself (it has no request id to give it, or
/// only the one it read).
#[derive(Debug, PartialEq, Eq)]
pub struct Answer {
    pub code: i32,
    pub message: String,
}

impl Answer {
    fn new(code: i32, message: impl Into<String>) -> Answer {
        Answer {
            code,
            message: cut_message(&message.into()).into_owned(),
        }
    }

    /// The answer's JSON, with a null id.
    pub fn to_json(&self) -> String {
        error_response(None, self.code, &self.message)
    }
}

/// Why the reader stopped before the end of the input.
#[derive(Debug, PartialEq, Eq)]
pub enum Lost {
    /// The framing cannot be followed any further; the answer is sent before ending.
    Framing(Answer),
    /// The input ended inside a message, or could not be read.
    Input(String),
}

impl fmt::Display for Lost {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Lost::Framing(answer) => f.write_str(&answer.message),
            Lost::Input(reason) => f.write_str(reason),
        }
    }
}

/// Reads messages from a byte stream with bounded memory.
pub struct FrameReader<R> {
    input: R,
    /// Bytes of a refused body still to skip before the next message.
    skip: u64,
}

impl<R: BufRead> FrameReader<R> {
    pub fn new(input: R) -> FrameReader<R> {
        FrameReader { input, skip: 0 }
    }

    /// The next frame, `Ok(None)` at the end of the input between messages.
    pub fn next_frame(&mut self) -> Result<Option<Frame>, Lost> {
        self.skip_refused()?;
        let Some(length) = self.read_headers()? else {
            return Ok(None);
        };
        if length > MAX_BODY as u64 {
            self.skip = length;
            return Ok(Some(Frame::Refused(Answer::new(
                code::INVALID_REQUEST,
                format!(
                    "the message declares {length} bytes; the limit is {MAX_BODY} (a document of \
                     at most {} bytes in JSON): it is skipped unread",
                    ozcheck_lint::MAX_FILE_BYTES
                ),
            ))));
        }
        let body = self.read_body(length as usize)?;
        Ok(Some(parse_body(&body)))
    }

    fn skip_refused(&mut self) -> Result<(), Lost> {
        let declared = self.skip;
        while self.skip > 0 {
            let buffer = self.input.fill_buf().map_err(|e| unreadable(&e))?;
            if buffer.is_empty() {
                return Err(Lost::Input(format!(
                    "the input ended inside a message ({} of its {declared} bytes skipped)",
                    declared - self.skip
                )));
            }
            let n = buffer
                .len()
                .min(usize::try_from(self.skip).unwrap_or(usize::MAX));
            self.input.consume(n);
            self.skip -= n as u64;
        }
        Ok(())
    }

    /// The declared length of the next message, `None` at the end of the input.
    fn read_headers(&mut self) -> Result<Option<u64>, Lost> {
        let mut length = None;
        let mut line = Vec::with_capacity(64);
        let mut count = 0;
        loop {
            line.clear();
            let read = (&mut self.input)
                .take(MAX_HEADER_LINE as u64 + 1)
                .read_until(b'\n', &mut line)
                .map_err(|e| unreadable(&e))?;
            if read == 0 && count == 0 {
                return Ok(None);
            }
            if line.len() > MAX_HEADER_LINE {
                return Err(framing(format!(
                    "a header line is longer than {MAX_HEADER_LINE} bytes"
                )));
            }
            let Some(text) = line.strip_suffix(b"\r\n") else {
                if line.ends_with(b"\n") {
                    return Err(framing(format!(
                        "a header line ends without a carriage return: {}",
                        shown(&line)
                    )));
                }
                return Err(Lost::Input(
                    "the input ended inside a message's headers".into(),
                ));
            };
            if text.is_empty() {
                let Some(length) = length else {
                    return Err(framing("a message has no Content-Length header"));
                };
                return Ok(Some(length));
            }
            count += 1;
            if count > MAX_HEADERS {
                return Err(framing(format!(
                    "a message has more than {MAX_HEADERS} header lines"
                )));
            }
            let Some((name, value)) = std::str::from_utf8(text)
                .ok()
                .and_then(|t| t.split_once(':'))
            else {
                return Err(framing(format!("not a header line: {}", shown(text))));
            };
            // As in HTTP: a name in any case, spaces or tabs around the value.
            let blank: &[char] = &[' ', '\t'];
            if !name
                .trim_matches(blank)
                .eq_ignore_ascii_case("content-length")
            {
                continue;
            }
            let declared = content_length(value.trim_matches(blank))?;
            if length.is_some_and(|l| l != declared) {
                return Err(framing(
                    "a message has two different Content-Length headers",
                ));
            }
            length = Some(declared);
        }
    }

    fn read_body(&mut self, length: usize) -> Result<Vec<u8>, Lost> {
        // The buffer grows as bytes arrive, so a declared length reserves nothing by itself.
        let mut body = Vec::with_capacity(length.min(INPUT_BUFFER));
        (&mut self.input)
            .take(length as u64)
            .read_to_end(&mut body)
            .map_err(|e| unreadable(&e))?;
        if body.len() < length {
            return Err(Lost::Input(format!(
                "the input ended inside a message ({} of its {length} bytes read)",
                body.len()
            )));
        }
        Ok(body)
    }
}

/// A `Content-Length` value: decimal digits, saturating (a length past `u64` is over the limit
/// all the same).
fn content_length(value: &str) -> Result<u64, Lost> {
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return Err(framing(format!(
            "the Content-Length {} is not a number of bytes",
            shown(value.as_bytes())
        )));
    }
    Ok(value.bytes().fold(0u64, |n, b| {
        n.saturating_mul(10).saturating_add(u64::from(b - b'0'))
    }))
}

fn framing(message: impl Into<String>) -> Lost {
    Lost::Framing(Answer::new(code::PARSE_ERROR, message))
}

fn unreadable(error: &io::Error) -> Lost {
    Lost::Input(format!("the input could not be read: {error}"))
}

/// A header's bytes for a message: at most 40 of them, escaped.
fn shown(bytes: &[u8]) -> String {
    let head = &bytes[..bytes.len().min(40)];
    let more = if bytes.len() > head.len() { "…" } else { "" };
    format!("`{}{more}`", head.escape_ascii())
}

/// The fields of a message the server reads; the others are checked to be JSON and skipped
/// without being stored.
#[derive(Deserialize)]
struct Envelope {
    id: Option<Box<RawValue>>,
    method: Option<String>,
    params: Option<Box<RawValue>>,
}

fn parse_body(body: &[u8]) -> Frame {
    // A message is an object; serde would also read a struct from an array.
    if body.trim_ascii_start().first() != Some(&b'{') {
        return Frame::Refused(match serde_json::from_slice::<IgnoredAny>(body) {
            Ok(_) => Answer::new(code::INVALID_REQUEST, "the body is not a JSON object"),
            Err(e) => Answer::new(code::PARSE_ERROR, format!("the body is not JSON: {e}")),
        });
    }
    let envelope: Envelope = match serde_json::from_slice(body) {
        Ok(envelope) => envelope,
        Err(e) if e.is_data() => {
            return Frame::Refused(Answer::new(
                code::INVALID_REQUEST,
                format!("the body is not a JSON-RPC message: {e}"),
            ));
        }
        Err(e) => {
            return Frame::Refused(Answer::new(
                code::PARSE_ERROR,
                format!("the body is not JSON: {e}"),
            ));
        }
    };
    let params = Params(envelope.params);
    match (envelope.id, envelope.method) {
        (Some(id), Some(method)) => {
            // LSP's ids are integers or strings; a float is let through as a number.
            if !id
                .get()
                .starts_with(['"', '-', '0', '1', '2', '3', '4', '5', '6', '7', '8', '9'])
            {
                return Frame::Refused(Answer::new(
                    code::INVALID_REQUEST,
                    format!(
                        "a request's id must be a number or a string, not {}",
                        id.get()
                    ),
                ));
            }
            if id.get().len() > MAX_ID {
                return Frame::Refused(Answer::new(
                    code::INVALID_REQUEST,
                    format!(
                        "a request's id is {} bytes long, over the {MAX_ID} the server accepts",
                        id.get().len()
                    ),
                ));
            }
            Frame::Message(Incoming::Request { id, method, params })
        }
        (None, Some(method)) => Frame::Message(Incoming::Notification { method, params }),
        (Some(_), None) => Frame::Ignored,
        (None, None) => Frame::Refused(Answer::new(
            code::INVALID_REQUEST,
            "the message has neither a method nor an id",
        )),
    }
}

/// A successful response's JSON.
pub fn ok_response(id: &RawValue, result: impl Serialize) -> String {
    #[derive(Serialize)]
    struct Ok<'a, R> {
        jsonrpc: &'static str,
        id: &'a RawValue,
        result: R,
    }
    serde_json::to_string(&Ok {
        jsonrpc: "2.0",
        id,
        result,
    })
    .unwrap_or_else(|e| error_response(Some(id), code::INTERNAL_ERROR, &e.to_string()))
}

/// A message cut to [`MAX_MESSAGE`] bytes (at a character's start, with `…` after).
fn cut_message(message: &str) -> Cow<'_, str> {
    if message.len() <= MAX_MESSAGE {
        return Cow::Borrowed(message);
    }
    let mut end = MAX_MESSAGE;
    while !message.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}…", &message[..end]))
}

/// An error response's JSON (a null id when the request's could not be read); the message is
/// cut to [`MAX_MESSAGE`] bytes.
pub fn error_response(id: Option<&RawValue>, code: i32, message: &str) -> String {
    #[derive(Serialize)]
    struct Error<'a> {
        code: i32,
        message: &'a str,
    }
    #[derive(Serialize)]
    struct Failed<'a> {
        jsonrpc: &'static str,
        id: Option<&'a RawValue>,
        error: Error<'a>,
    }
    let message = cut_message(message);
    serde_json::to_string(&Failed {
        jsonrpc: "2.0",
        id,
        error: Error {
            code,
            message: &message,
        },
    })
    // Nothing in it can fail to serialise; the fallback keeps the answer well-formed anyway.
    .unwrap_or_else(|_| {
        format!(r#"{{"jsonrpc":"2.0","id":null,"error":{{"code":{code},"message":""}}}}"#)
    })
}

/// A notification's JSON.
pub fn notification(method: &str, params: impl Serialize) -> String {
    #[derive(Serialize)]
    struct Note<'a, P> {
        jsonrpc: &'static str,
        method: &'a str,
        params: P,
    }
    serde_json::to_string(&Note {
        jsonrpc: "2.0",
        method,
        params,
    })
    .unwrap_or_default()
}

/// The two threads of a connection and their channels.
pub struct Transport {
    /// Messages from the client, one at a time (the reader waits until each is taken, so a
    /// client that floods the pipe is held back by it rather than by the server's memory).
    pub incoming: Receiver<Incoming>,
    /// JSON bodies to write, each framed with its `Content-Length`.
    pub outgoing: Sender<String>,
    reader: JoinHandle<Result<(), Lost>>,
    writer: JoinHandle<io::Result<()>>,
}

/// How many answers may wait for the writer before their senders wait too.
const OUTGOING_QUEUE: usize = 16;

impl Transport {
    /// Starts reading `input` and writing `output`.
    pub fn spawn(
        input: impl Read + Send + 'static,
        output: impl Write + Send + 'static,
    ) -> io::Result<Transport> {
        let (to_server, incoming) = bounded(0);
        let (outgoing, to_write) = bounded::<String>(OUTGOING_QUEUE);
        let answers = outgoing.clone();
        let reader = thread::Builder::new()
            .name("lsp-reader".into())
            .spawn(move || read_all(input, &to_server, &answers))?;
        let writer = thread::Builder::new()
            .name("lsp-writer".into())
            .spawn(move || write_all(output, &to_write))?;
        Ok(Transport {
            incoming,
            outgoing,
            reader,
            writer,
        })
    }

    /// Waits for both threads after the server is done: `Err` with the reason when the input
    /// was given up.
    pub fn join(self) -> Result<(), String> {
        let Transport {
            incoming,
            outgoing,
            reader,
            writer,
        } = self;
        drop(outgoing);
        drop(incoming);
        let read = reader
            .join()
            .map_err(|_| "the reader panicked".to_owned())?;
        // A client that closed our output is no error: it has gone.
        let _ = writer.join();
        read.map_err(|lost| lost.to_string())
    }
}

fn read_all(
    input: impl Read,
    to_server: &Sender<Incoming>,
    answers: &Sender<String>,
) -> Result<(), Lost> {
    let mut frames = FrameReader::new(BufReader::with_capacity(INPUT_BUFFER, input));
    loop {
        match frames.next_frame() {
            Ok(None) => return Ok(()),
            Ok(Some(Frame::Message(message))) => {
                let exit = message.method() == "exit";
                if to_server.send(message).is_err() || exit {
                    return Ok(());
                }
            }
            Ok(Some(Frame::Refused(answer))) => {
                let _ = answers.send(answer.to_json());
            }
            Ok(Some(Frame::Ignored)) => {}
            Err(lost) => {
                if let Lost::Framing(answer) = &lost {
                    let _ = answers.send(answer.to_json());
                }
                return Err(lost);
            }
        }
    }
}

fn write_all(output: impl Write, bodies: &Receiver<String>) -> io::Result<()> {
    let mut output = io::BufWriter::new(output);
    for body in bodies {
        write!(output, "Content-Length: {}\r\n\r\n", body.len())?;
        output.write_all(body.as_bytes())?;
        output.flush()?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;
