//! `ozcheck serve` as an operator runs it: the example configuration of corpus/serve with its
//! secret from the environment, the warning for a GitHub source without a secret, log lines on
//! stderr, readiness, and a graceful stop on SIGTERM that finishes, closes the store and leaves
//! no `-wal` file behind.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::Duration;

/// Starts the server on a free port; returns it, its address and its stderr lines.
fn start(
    config: &Path,
    db: &Path,
    env: &[(&str, &str)],
) -> (Child, String, mpsc::Receiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_ozcheck"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(db)
        .arg("--config")
        .arg(config)
        .envs(env.iter().copied())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .expect("starts");
    let (tx, rx) = mpsc::channel();
    let stderr = child.stderr.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    let mut address = None;
    let mut seen = Vec::new();
    while address.is_none() {
        let line = rx
            .recv_timeout(Duration::from_secs(60))
            .unwrap_or_else(|_| panic!("no `listening on` line; stderr: {seen:?}"));
        address = line.split("listening on ").nth(1).map(str::to_owned);
        seen.push(line);
    }
    // Lines before the address line are replayed for the caller.
    let (replay, rx2) = mpsc::channel();
    for line in seen {
        replay.send(line).unwrap();
    }
    std::thread::spawn(move || {
        while let Ok(line) = rx.recv() {
            if replay.send(line).is_err() {
                break;
            }
        }
    });
    (child, address.unwrap(), rx2)
}

/// One HTTP/1.1 request; returns the status and the body.
fn http(address: &str, method: &str, path: &str, body: &str) -> (u16, String) {
    let mut stream = TcpStream::connect(address).expect("connects");
    write!(
        stream,
        "{method} {path} HTTP/1.1\r\nhost: x\r\nconnection: close\r\ncontent-type: application/json\r\ncontent-length: {}\r\n\r\n{body}",
        body.len()
    )
    .unwrap();
    let mut answer = String::new();
    stream.read_to_string(&mut answer).unwrap();
    let status = answer
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    let body = answer.split("\r\n\r\n").nth(1).unwrap_or("").to_owned();
    (status, body)
}

fn stop(mut child: Child) -> std::process::ExitStatus {
    let status = Command::new("kill")
        .args(["-TERM", &child.id().to_string()])
        .status()
        .expect("kill runs");
    assert!(status.success());
    child.wait().expect("exits")
}

#[test]
fn the_example_configuration_serves_and_sigterm_stops_cleanly() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("waits.db");
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/serve/example.yaml");
    let (child, address, stderr) = start(&config, &db, &[("OZCHECK_GITHUB_SECRET", "s3cret")]);
    assert_eq!(http(&address, "GET", "/readyz", "").0, 200);
    assert_eq!(http(&address, "POST", "/jobs/j1", "").0, 201);
    let (status, body) = http(
        &address,
        "POST",
        "/jobs/j1/waits/ci",
        r#"{"source": "ci", "types": ["build"]}"#,
    );
    assert_eq!(status, 200, "{body}");
    let (status, body) = http(
        &address,
        "POST",
        "/sources/ci/deliveries",
        r#"{"id": "b1", "type": "build", "subject": "main"}"#,
    );
    assert_eq!(status, 202, "{body}");
    let (_, body) = http(&address, "GET", "/jobs/j1/waits/ci", "");
    assert!(body.contains(r#""state":"matched""#), "{body}");
    // Unsigned deliveries to the GitHub source are refused; the second of the minute goes to
    // the log, which is stderr.
    for _ in 0..2 {
        assert_eq!(
            http(&address, "POST", "/sources/github/deliveries", "{}").0,
            401
        );
    }
    assert!(
        db.with_extension("db-wal").exists(),
        "the store runs in WAL mode"
    );
    let exit = stop(child);
    assert!(exit.success(), "{exit:?}");
    let lines: Vec<String> = stderr.iter().collect();
    let text = lines.join("\n");
    assert!(text.contains("event.refused github signature"), "{text}");
    assert!(text.contains("stopped; the store is closed"), "{text}");
    assert!(!text.contains("without a secret"), "{text}");
    assert!(db.exists());
    assert!(
        !db.with_extension("db-wal").exists(),
        "a -wal file was left behind"
    );
}

#[test]
fn secrets_come_from_the_environment_and_a_missing_one_is_named() {
    let dir = tempfile::tempdir().unwrap();
    let config = Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus/serve/example.yaml");
    let out = Command::new(env!("CARGO_BIN_EXE_ozcheck"))
        .args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(dir.path().join("w.db"))
        .arg("--config")
        .arg(&config)
        .env_remove("OZCHECK_GITHUB_SECRET")
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("OZCHECK_GITHUB_SECRET") && stderr.contains("`github`"),
        "{stderr}"
    );
}

#[test]
fn a_github_source_without_a_secret_is_warned_about() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("open.yaml");
    std::fs::write(&config, "sources:\n  - {name: gh, kind: github}\n").unwrap();
    let (child, address, stderr) = start(&config, &dir.path().join("w.db"), &[]);
    assert_eq!(http(&address, "GET", "/healthz", "").0, 200);
    assert!(stop(child).success());
    let text: Vec<String> = stderr.iter().collect();
    let text = text.join("\n");
    assert!(
        text.contains("WARN") && text.contains("source `gh` is a GitHub source without a secret"),
        "{text}"
    );
}

#[test]
fn a_configuration_the_analyzer_refuses_stops_the_start() {
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("costly.yaml");
    std::fs::write(
        &config,
        "sources:\n  - {name: ci, kind: json}\nroutines:\n  - name: r\n    triggers:\n      - name: t\n        event: {source: ci, filter: \"event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))\"}\n",
    )
    .unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_ozcheck"))
        .args(["serve", "--listen", "127.0.0.1:0", "--db"])
        .arg(dir.path().join("w.db"))
        .arg("--config")
        .arg(&config)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("cost-over-limit"), "{stderr}");
}
