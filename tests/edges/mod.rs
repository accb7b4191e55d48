//! Edges as separate `ozcheck serve` processes on one `PostgreSQL` database, and a sender that
//! talks to them over plain HTTP/1.1: start an edge, kill it with SIGKILL, restart it under its
//! name; deliver an event the way a webhook sender does (another edge, or the same one a little
//! later, when a delivery is not acknowledged).

#![allow(dead_code)]

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

/// The configuration every edge runs with: one JSON source.
pub const CONFIG: &str = "sources:\n  - name: ci\n    kind: json\n";

/// How long an edge may take to listen after it starts (a debug build on a busy machine).
const START_BOUND: Duration = Duration::from_secs(120);

/// One `ozcheck serve` process.
pub struct Edge {
    /// Its name among the edges (`--edge`).
    pub name: String,
    /// `127.0.0.1:PORT`.
    pub addr: String,
    db: String,
    config: PathBuf,
    child: Option<Child>,
}

impl Edge {
    /// Starts an edge named `name` on the database at `db` and waits until it listens.
    pub fn start(name: &str, db: &str, config: &Path) -> Self {
        let port = TcpListener::bind("127.0.0.1:0")
            .and_then(|l| l.local_addr())
            .expect("a free port")
            .port();
        let mut edge = Edge {
            name: name.to_owned(),
            addr: format!("127.0.0.1:{port}"),
            db: db.to_owned(),
            config: config.to_owned(),
            child: None,
        };
        edge.spawn();
        edge
    }

    fn spawn(&mut self) {
        let child = Command::new(env!("CARGO_BIN_EXE_ozcheck"))
            .args(["serve", "--db", &self.db, "--edge", &self.name])
            .args(["--listen", &self.addr])
            .arg("--config")
            .arg(&self.config)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("ozcheck serve starts");
        self.child = Some(child);
        let started = Instant::now();
        while TcpStream::connect(&self.addr).is_err() {
            if let Some(status) = self
                .child
                .as_mut()
                .and_then(|c| c.try_wait().ok().flatten())
            {
                panic!("edge {} exited at start: {status}", self.name);
            }
            assert!(
                started.elapsed() < START_BOUND,
                "edge {} does not listen",
                self.name
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Kills the process with SIGKILL, as a crash would, and reaps it.
    pub fn kill(&mut self) {
        if let Some(mut child) = self.child.take() {
            let _ = child.kill();
            let _ = child.wait();
        }
    }

    /// Starts the process again on the same port and name.
    pub fn restart(&mut self) {
        self.kill();
        self.spawn();
    }

    /// Whether the process was started and not killed.
    pub fn is_alive(&self) -> bool {
        self.child.is_some()
    }

    /// Whether the process runs still (it was not killed and did not exit by itself).
    pub fn has_not_exited(&mut self) -> bool {
        self.child
            .as_mut()
            .is_some_and(|c| matches!(c.try_wait(), Ok(None)))
    }
}

impl Drop for Edge {
    fn drop(&mut self) {
        self.kill();
    }
}

/// `n` edges named `edge-0`… on `db`, started one after another (each brings the schema up to
/// date, so the first does the migration).
pub fn start_edges(n: usize, db: &str, dir: &Path) -> Vec<Edge> {
    let config = dir.join("edge.yaml");
    std::fs::write(&config, CONFIG).expect("write the configuration");
    (0..n)
        .map(|i| Edge::start(&format!("edge-{i}"), db, &config))
        .collect()
}

/// One HTTP/1.1 request with `Connection: close`: the status and the body as JSON (or as a
/// JSON string when it is not JSON). An I/O error means the edge is not there (killed, or the
/// connection broke mid-request).
pub fn http(addr: &str, method: &str, path: &str, body: &str) -> std::io::Result<(u16, Value)> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )?;
    let mut response = Vec::new();
    stream.read_to_end(&mut response)?;
    let text = String::from_utf8_lossy(&response);
    let (head, rest) = text
        .split_once("\r\n\r\n")
        .ok_or_else(|| std::io::Error::other("a truncated response"))?;
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| std::io::Error::other("no status line"))?;
    let body = if head
        .to_ascii_lowercase()
        .contains("transfer-encoding: chunked")
    {
        unchunk(rest)
    } else {
        rest.to_owned()
    };
    let value = serde_json::from_str(&body).unwrap_or(Value::String(body));
    Ok((status, value))
}

fn unchunk(mut rest: &str) -> String {
    let mut out = String::new();
    while let Some((size, tail)) = rest.split_once("\r\n") {
        let Ok(size) = usize::from_str_radix(size.trim(), 16) else {
            break;
        };
        if size == 0 || tail.len() < size {
            break;
        }
        out.push_str(&tail[..size]);
        rest = tail[size..].trim_start_matches("\r\n");
    }
    out
}

/// What a sender saw while delivering one event.
#[derive(Debug, Default, Clone)]
pub struct Sent {
    /// The acknowledging status: 202 (new) or 200 (a duplicate).
    pub status: u16,
    /// Attempts answered 503 (the store unavailable).
    pub unavailable: usize,
    /// Attempts that found no edge or lost the connection.
    pub unreachable: usize,
}

/// Delivers `body` to the source `ci`, first through `edges[first]`, and on an I/O error or a
/// 503 through the next edge (a load balancer's retry), pausing between rounds, until an edge
/// acknowledges it. Any other status fails the test.
pub fn deliver(addrs: &[String], first: usize, body: &str) -> Sent {
    let mut sent = Sent::default();
    let started = Instant::now();
    for attempt in 0.. {
        let addr = &addrs[(first + attempt) % addrs.len()];
        match http(addr, "POST", "/sources/ci/deliveries", body) {
            Ok((status @ (200 | 202), _)) => {
                sent.status = status;
                return sent;
            }
            Ok((503, _)) => sent.unavailable += 1,
            Ok((status, body)) => panic!("delivery {body:?} answered {status}: {body}"),
            Err(_) => sent.unreachable += 1,
        }
        assert!(
            started.elapsed() < Duration::from_secs(120),
            "no edge acknowledged {body} ({sent:?})"
        );
        if (attempt + 1) % addrs.len() == 0 {
            std::thread::sleep(Duration::from_millis(100));
        }
    }
    unreachable!()
}

/// The body of a JSON delivery.
pub fn event_body(id: &str, subject: &str) -> String {
    serde_json::json!({"id": id, "type": "t", "subject": subject}).to_string()
}

/// The audit records, every page of them (through any edge: they are in the database).
pub fn audit(addr: &str) -> Vec<Value> {
    let mut records = Vec::new();
    let mut path = "/audit".to_owned();
    loop {
        let (status, body) = http(addr, "GET", &path, "").expect("the audit");
        assert_eq!(status, 200, "{body}");
        records.extend(body["records"].as_array().expect("records").iter().cloned());
        match body["next"].as_i64() {
            Some(next) => path = format!("/audit?after={next}"),
            None => return records,
        }
    }
}

/// The records of `action`.
pub fn of_action<'a>(records: &'a [Value], action: &str) -> Vec<&'a Value> {
    records.iter().filter(|r| r["action"] == action).collect()
}

/// A small deterministic generator (xorshift), so a failing run can be repeated.
pub struct Dice(u64);

impl Dice {
    /// Seeded with `seed` (not zero).
    pub fn new(seed: u64) -> Self {
        Self(seed.max(1))
    }

    /// A number below `n`.
    pub fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        (self.0 % n as u64) as usize
    }
}

/// Runs `work(i)` for every `i` below `n` on `threads` threads, in order of `i` per thread.
pub fn in_parallel<T: Send>(n: usize, threads: usize, work: impl Fn(usize) -> T + Sync) -> Vec<T> {
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = std::sync::Mutex::new(Vec::with_capacity(n));
    std::thread::scope(|scope| {
        for _ in 0..threads {
            scope.spawn(|| {
                loop {
                    let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    if i >= n {
                        break;
                    }
                    let out = work(i);
                    results.lock().unwrap().push((i, out));
                }
            });
        }
    });
    let mut results = results.into_inner().unwrap();
    results.sort_by_key(|(i, _)| *i);
    results.into_iter().map(|(_, out)| out).collect()
}
