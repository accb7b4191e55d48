//! The conformance runner: reads scenario files, turns their steps into protocol requests, sends
//! them to the reference runtime in process or to any implementation's adapter over stdio, and
//! checks the answers. Step kinds are an open set: every kind but the runner's own
//! (`concurrently`) is sent as the operation of the same name.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Map, Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use super::adapter::{ReferenceAdapter, SessionStores};
use super::matcher;
use crate::source::{SIGNATURE_HEADER, sign};

/// How to run the scenarios.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    /// An adapter command (split on whitespace); `None` runs the reference runtime in process.
    pub adapter: Option<String>,
    /// Insert a crash-restart between every two top-level steps.
    pub restart_every_step: bool,
    /// Where the in-process reference runtime keeps each scenario's store.
    pub stores: SessionStores,
}

/// The outcome of one scenario.
#[derive(Clone, Debug)]
pub struct ScenarioResult {
    /// The scenario's id (or its path when it has none).
    pub id: String,
    /// The file.
    pub path: PathBuf,
    /// `None` when it passed; otherwise what failed.
    pub failure: Option<String>,
}

/// A parsed scenario file.
#[derive(Clone, Debug)]
pub struct Scenario {
    /// Its id.
    pub id: String,
    /// The requirements it checks.
    pub requirements: Vec<String>,
    /// Whether it may run with inserted restarts.
    pub restart_every_step: bool,
    /// The `reset` arguments.
    pub setup: Value,
    /// The steps.
    pub steps: Vec<Step>,
}

/// One step: a kind and its arguments, plus what to expect.
#[derive(Clone, Debug)]
pub struct Step {
    /// The kind (an operation name, or `concurrently`).
    pub kind: String,
    /// The arguments (for `concurrently`, unused).
    pub args: Value,
    /// The inner steps of `concurrently`.
    pub inner: Vec<Step>,
    /// The expected result.
    pub expect: Option<Value>,
    /// The expected error.
    pub expect_error: Option<Value>,
}

const RESERVED: &[&str] = &["expect", "expect_error", "note"];

fn parse_step(value: &Value, at: &str) -> Result<Step, String> {
    let Some(map) = value.as_object() else {
        return Err(format!("{at}: a step is a mapping"));
    };
    let kinds: Vec<&String> = map
        .keys()
        .filter(|k| !RESERVED.contains(&k.as_str()))
        .collect();
    let [kind] = kinds.as_slice() else {
        return Err(format!(
            "{at}: a step has exactly one kind key besides {RESERVED:?}, found {kinds:?}"
        ));
    };
    let body = &map[kind.as_str()];
    let (args, inner) = if *kind == "concurrently" {
        let Some(items) = body.as_array() else {
            return Err(format!("{at}: `concurrently` takes a list of steps"));
        };
        let inner = items
            .iter()
            .enumerate()
            .map(|(i, s)| parse_step(s, &format!("{at}.concurrently[{i}]")))
            .collect::<Result<Vec<_>, _>>()?;
        (Value::Null, inner)
    } else {
        let args = match body {
            Value::Null => Value::Object(Map::new()),
            Value::Object(_) => body.clone(),
            _ => return Err(format!("{at}: the arguments of `{kind}` must be a mapping")),
        };
        (args, Vec::new())
    };
    Ok(Step {
        kind: (*kind).clone(),
        args,
        inner,
        expect: map.get("expect").cloned(),
        expect_error: map.get("expect_error").cloned(),
    })
}

impl Scenario {
    /// Parses a scenario from YAML text.
    pub fn parse(text: &str) -> Result<Scenario, String> {
        let doc: Value = yaml_serde::from_str(text).map_err(|e| format!("not valid YAML: {e}"))?;
        let Some(map) = doc.as_object() else {
            return Err("a scenario is a mapping".to_owned());
        };
        for key in map.keys() {
            if ![
                "id",
                "requirements",
                "description",
                "restart_every_step",
                "setup",
                "steps",
            ]
            .contains(&key.as_str())
            {
                return Err(format!("unknown key `{key}`"));
            }
        }
        let id = map
            .get("id")
            .and_then(Value::as_str)
            .ok_or("`id` (a string) is required")?
            .to_owned();
        let requirements = map
            .get("requirements")
            .and_then(Value::as_array)
            .map(|r| {
                r.iter()
                    .filter_map(|v| v.as_str().map(str::to_owned))
                    .collect()
            })
            .unwrap_or_default();
        let restart_every_step = map
            .get("restart_every_step")
            .and_then(Value::as_bool)
            .unwrap_or(true);
        let setup = map.get("setup").cloned().unwrap_or_else(|| json!({}));
        let steps = map
            .get("steps")
            .and_then(Value::as_array)
            .ok_or("`steps` (a list) is required")?
            .iter()
            .enumerate()
            .map(|(i, s)| parse_step(s, &format!("step {}", i + 1)))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Scenario {
            id,
            requirements,
            restart_every_step,
            setup,
            steps,
        })
    }
}

/// Every `*.yaml` file under `paths` (files as given, directories recursively), sorted.
pub fn collect(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for path in paths {
        if path.is_dir() {
            walk(path, &mut out).map_err(|e| format!("{}: {e}", path.display()))?;
        } else if path.is_file() {
            out.push(path.clone());
        } else {
            return Err(format!("{}: no such file or directory", path.display()));
        }
    }
    out.sort();
    Ok(out)
}

fn walk(dir: &Path, out: &mut Vec<PathBuf>) -> std::io::Result<()> {
    for entry in std::fs::read_dir(dir)? {
        let path = entry?.path();
        if path.is_dir() {
            walk(&path, out)?;
        } else if path.extension().is_some_and(|e| e == "yaml" || e == "yml") {
            out.push(path);
        }
    }
    Ok(())
}

/// Runs one scenario file.
pub async fn run_file(path: &Path, options: &RunOptions) -> ScenarioResult {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            return failed(
                path,
                path.display().to_string(),
                format!("cannot read: {e}"),
            );
        }
    };
    let scenario = match Scenario::parse(&text) {
        Ok(s) => s,
        Err(e) => return failed(path, path.display().to_string(), e),
    };
    let failure = run_scenario(&scenario, options).await.err();
    ScenarioResult {
        id: scenario.id,
        path: path.to_owned(),
        failure,
    }
}

fn failed(path: &Path, id: String, message: String) -> ScenarioResult {
    ScenarioResult {
        id,
        path: path.to_owned(),
        failure: Some(message),
    }
}

/// Runs a parsed scenario; the error says which step failed and how.
pub async fn run_scenario(scenario: &Scenario, options: &RunOptions) -> Result<(), String> {
    let mut transport = Transport::open(options)?;
    let result = drive(&mut transport, scenario, options).await;
    // The session ends either way; a failure to shut down only matters when all else passed.
    let shutdown = transport
        .call(&[json!({"op": "shutdown", "args": {}})])
        .await;
    transport.close().await;
    result?;
    shutdown.map(|_| ())
}

async fn drive(t: &mut Transport, scenario: &Scenario, options: &RunOptions) -> Result<(), String> {
    let hello = t.call(&[json!({"op": "hello", "args": {}})]).await?;
    if hello[0]["ok"] != json!(true) {
        return Err(format!("hello failed: {}", hello[0]));
    }
    let protocol = &hello[0]["result"]["protocol"];
    if protocol != super::PROTOCOL {
        return Err(format!(
            "the adapter speaks the protocol {protocol}, not {}",
            super::PROTOCOL
        ));
    }
    let nodes = scenario.setup["nodes"].as_array().map_or(1, Vec::len);
    let supported = hello[0]["result"]["nodes"].as_u64().unwrap_or(1);
    if nodes as u64 > supported {
        return Err(format!(
            "the scenario runs on {nodes} edges; the implementation supports {supported} \
             (hello.nodes)"
        ));
    }
    let reset = t
        .call(&[json!({"op": "reset", "args": scenario.setup})])
        .await?;
    if reset[0]["ok"] != json!(true) {
        return Err(format!("reset (setup) failed: {}", reset[0]["error"]));
    }
    let secrets = secrets_of(&scenario.setup);
    let restarts = options.restart_every_step && scenario.restart_every_step;
    for (i, step) in scenario.steps.iter().enumerate() {
        let at = format!("step {} ({})", i + 1, step.kind);
        if restarts && i > 0 {
            let r = t
                .call(&[json!({"op": "restart", "args": {"mode": "crash"}})])
                .await?;
            if r[0]["ok"] != json!(true) {
                return Err(format!("restart before {at} failed: {}", r[0]["error"]));
            }
        }
        let steps: Vec<&Step> = if step.kind == "concurrently" {
            step.inner.iter().collect()
        } else {
            vec![step]
        };
        let requests: Vec<Value> = steps
            .iter()
            .map(|s| request(s, &secrets))
            .collect::<Result<_, _>>()
            .map_err(|e| format!("{at}: {e}"))?;
        let responses = t.call(&requests).await.map_err(|e| format!("{at}: {e}"))?;
        for (j, (s, response)) in steps.iter().zip(&responses).enumerate() {
            let at = if step.kind == "concurrently" {
                format!("{at}[{j}] ({})", s.kind)
            } else {
                at.clone()
            };
            check_response(s, response).map_err(|e| format!("{at}: {e}"))?;
        }
    }
    Ok(())
}

fn secrets_of(setup: &Value) -> Vec<(String, String)> {
    setup["sources"]
        .as_array()
        .map(|sources| {
            sources
                .iter()
                .filter_map(|s| {
                    Some((
                        s["name"].as_str()?.to_owned(),
                        s["secret"].as_str()?.to_owned(),
                    ))
                })
                .collect()
        })
        .unwrap_or_default()
}

/// Builds the request for a step. `deliver` steps get their body written out and signed here,
/// so every implementation receives the bytes and headers an HTTP sender would send.
fn request(step: &Step, secrets: &[(String, String)]) -> Result<Value, String> {
    let mut args = step.args.clone();
    if step.kind == "deliver" {
        let map = args.as_object_mut().ok_or("`deliver` takes a mapping")?;
        let body = match map.remove("body") {
            None | Some(Value::Null) => String::new(),
            Some(Value::String(s)) => s,
            Some(other) => other.to_string(),
        };
        let signature = map.remove("signature");
        let mut headers = match map.remove("headers") {
            None | Some(Value::Null) => Map::new(),
            Some(Value::Object(h)) => h,
            Some(_) => return Err("`headers` must be a mapping".to_owned()),
        };
        let source = map.get("source").and_then(Value::as_str).unwrap_or("");
        match signature {
            Some(Value::String(s)) if s == "none" => {}
            Some(Value::String(s)) => {
                headers.insert(SIGNATURE_HEADER.to_owned(), Value::String(s));
            }
            Some(_) => return Err("`signature` must be a string".to_owned()),
            None => {
                if let Some((_, secret)) = secrets.iter().find(|(name, _)| name == source) {
                    headers.insert(
                        SIGNATURE_HEADER.to_owned(),
                        Value::String(sign(secret, body.as_bytes())),
                    );
                }
            }
        }
        map.insert("headers".into(), Value::Object(headers));
        map.insert("body".into(), Value::String(body));
    }
    Ok(json!({"op": step.kind, "args": args}))
}

fn check_response(step: &Step, response: &Value) -> Result<(), String> {
    let ok = response["ok"] == json!(true);
    if response["ok"] == json!(false) && response["error"]["kind"] == json!("unknown_op") {
        return Err(format!(
            "the implementation does not support the operation `{}`",
            step.kind
        ));
    }
    match (&step.expect_error, ok) {
        (Some(want), false) => matcher::check(want, &response["error"])
            .map_err(|e| format!("wrong error: {}", e.replacen("result", "error", 1))),
        (Some(_), true) => Err(format!(
            "expected an error, got success: {}",
            response["result"]
        )),
        (None, false) => Err(format!(
            "failed: {} {}",
            response["error"]["kind"].as_str().unwrap_or("?"),
            response["error"]["message"].as_str().unwrap_or("")
        )),
        (None, true) => match &step.expect {
            Some(want) => matcher::check(want, &response["result"]),
            None => Ok(()),
        },
    }
}

/// Where requests go.
enum Transport {
    InProcess {
        adapter: Arc<ReferenceAdapter>,
        seq: u64,
    },
    Child {
        pipes: Box<Pipes>,
        seq: u64,
    },
}

/// An adapter process and its pipes.
struct Pipes {
    child: Child,
    stdin: ChildStdin,
    stdout: Lines<BufReader<ChildStdout>>,
}

/// How long the runner waits for an adapter's answer before it gives up on it.
const ANSWER_TIMEOUT: Duration = Duration::from_secs(60);

impl Transport {
    fn open(options: &RunOptions) -> Result<Transport, String> {
        let Some(command) = &options.adapter else {
            return Ok(Transport::InProcess {
                adapter: ReferenceAdapter::with_stores(options.stores.clone()),
                seq: 0,
            });
        };
        let mut words = command.split_whitespace();
        let program = words.next().ok_or("the adapter command is empty")?;
        let mut child = Command::new(program)
            .args(words)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| format!("cannot start the adapter `{command}`: {e}"))?;
        let stdin = child.stdin.take().ok_or("the adapter has no stdin")?;
        let stdout = child.stdout.take().ok_or("the adapter has no stdout")?;
        Ok(Transport::Child {
            pipes: Box::new(Pipes {
                child,
                stdin,
                stdout: BufReader::new(stdout).lines(),
            }),
            seq: 0,
        })
    }

    /// Sends the requests (pipelined when several) and returns their responses in order.
    async fn call(&mut self, requests: &[Value]) -> Result<Vec<Value>, String> {
        let (seq, lines) = match self {
            Transport::InProcess { seq, .. } | Transport::Child { seq, .. } => {
                let first = *seq + 1;
                *seq += requests.len() as u64;
                let lines: Vec<String> = requests
                    .iter()
                    .enumerate()
                    .map(|(i, r)| {
                        let mut r = r.clone();
                        r["seq"] = json!(first + i as u64);
                        r.to_string()
                    })
                    .collect();
                (first, lines)
            }
        };
        let answers: Vec<String> = match self {
            Transport::InProcess { adapter, .. } => {
                let tasks: Vec<_> = lines
                    .into_iter()
                    .map(|line| {
                        let adapter = adapter.clone();
                        tokio::spawn(async move { adapter.handle_line(&line).await })
                    })
                    .collect();
                let mut out = Vec::with_capacity(tasks.len());
                for task in tasks {
                    out.push(
                        task.await
                            .map_err(|e| format!("the adapter task failed: {e}"))?,
                    );
                }
                out
            }
            Transport::Child { pipes, .. } => {
                let Pipes { stdin, stdout, .. } = &mut **pipes;
                for line in &lines {
                    stdin
                        .write_all(format!("{line}\n").as_bytes())
                        .await
                        .map_err(|e| format!("writing to the adapter: {e}"))?;
                }
                stdin
                    .flush()
                    .await
                    .map_err(|e| format!("writing to the adapter: {e}"))?;
                let mut out = Vec::with_capacity(lines.len());
                for _ in &lines {
                    let line = tokio::time::timeout(ANSWER_TIMEOUT, stdout.next_line())
                        .await
                        .map_err(|_| "the adapter did not answer within 60 s".to_owned())?
                        .map_err(|e| format!("reading from the adapter: {e}"))?
                        .ok_or("the adapter closed its output")?;
                    out.push(line);
                }
                out
            }
        };
        let mut responses = vec![Value::Null; answers.len()];
        for answer in answers {
            let value: Value = serde_json::from_str(&answer)
                .map_err(|e| format!("the adapter's answer is not JSON ({e}): {answer}"))?;
            let index = value["seq"]
                .as_u64()
                .and_then(|s| s.checked_sub(seq))
                .filter(|i| (*i as usize) < responses.len())
                .ok_or_else(|| format!("the adapter answered with an unexpected seq: {answer}"))?;
            responses[index as usize] = value;
        }
        Ok(responses)
    }

    async fn close(self) {
        if let Transport::Child { pipes, .. } = self {
            let Pipes {
                mut child, stdin, ..
            } = *pipes;
            drop(stdin);
            if tokio::time::timeout(Duration::from_secs(5), child.wait())
                .await
                .is_err()
            {
                let _ = child.kill().await;
            }
        }
    }
}

/// Serves the protocol for the reference runtime on stdin/stdout until stdin closes. Requests
/// run concurrently; each answer is written when its operation finishes.
pub async fn serve_stdio(stores: SessionStores) -> std::io::Result<()> {
    let adapter = ReferenceAdapter::with_stores(stores);
    let mut lines = BufReader::new(tokio::io::stdin()).lines();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    let writer = tokio::spawn(async move {
        let mut out = tokio::io::stdout();
        while let Some(line) = rx.recv().await {
            out.write_all(line.as_bytes()).await?;
            out.write_all(b"\n").await?;
            out.flush().await?;
        }
        std::io::Result::Ok(())
    });
    while let Some(line) = lines.next_line().await? {
        if line.trim().is_empty() {
            continue;
        }
        let adapter = adapter.clone();
        let tx = tx.clone();
        // The runner sends a request while others are in flight only inside `concurrently`,
        // so every request may run on its own task.
        tokio::spawn(async move {
            let answer = adapter.handle_line(&line).await;
            let _ = tx.send(answer);
        });
    }
    drop(tx);
    let written = writer.await.map_err(std::io::Error::other)?;
    super::release_schemas().await;
    written
}
