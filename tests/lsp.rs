//! `ozcheck server` driven over its standard input and output by an LSP client (framing by
//! `lsp-server`'s `Message`, the protocol's JSON written out with `serde_json`): diagnostics on open at the
//! exact UTF-16 range of CEL findings inside block and quoted scalars, new diagnostics after a
//! change, the quick fix of a compound timeout that leaves the file clean, hovers on keys and
//! filters, `ozcheck.toml` found above the file, the plugin's agents read for a routine, and a
//! clean shutdown.

use std::io::{BufReader, Write};
use std::path::Path;
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};

use lsp_server::{Message, Notification, Request, RequestId};
use serde_json::{Value, json};

struct Client {
    child: Child,
    stdin: ChildStdin,
    stdout: BufReader<ChildStdout>,
    next_id: i32,
}

impl Client {
    fn start() -> Client {
        let mut child = Command::new(env!("CARGO_BIN_EXE_ozcheck"))
            .arg("server")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("ozcheck server starts");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = BufReader::new(child.stdout.take().expect("stdout"));
        let mut client = Client {
            child,
            stdin,
            stdout,
            next_id: 0,
        };
        let init = client.request(
            "initialize",
            json!({ "capabilities": {}, "processId": null }),
        );
        assert_eq!(init["capabilities"]["positionEncoding"], "utf-16");
        assert_eq!(init["capabilities"]["hoverProvider"], true);
        client.notify("initialized", json!({}));
        client
    }

    fn send(&mut self, message: &Message) {
        message.write(&mut self.stdin).expect("write");
        self.stdin.flush().expect("flush");
    }

    fn notify(&mut self, method: &str, params: Value) {
        self.send(&Message::Notification(Notification::new(
            method.to_owned(),
            params,
        )));
    }

    /// Sends a request and returns its result, skipping notifications meanwhile.
    fn request(&mut self, method: &str, params: Value) -> Value {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.send(&Message::Request(Request::new(
            id.clone(),
            method.to_owned(),
            params,
        )));
        loop {
            match Message::read(&mut self.stdout)
                .expect("read")
                .expect("a message")
            {
                Message::Response(r) if r.id == id => {
                    assert!(r.error.is_none(), "{method}: {:?}", r.error);
                    return r.result.unwrap_or(Value::Null);
                }
                _ => {}
            }
        }
    }

    /// The diagnostics published until a hover (which the server answers after everything
    /// sent before it), in order: (URI, diagnostics).
    fn published_until_answered(&mut self) -> Vec<(String, Value)> {
        self.next_id += 1;
        let id = RequestId::from(self.next_id);
        self.send(&Message::Request(Request::new(
            id.clone(),
            "textDocument/hover".to_owned(),
            json!({ "textDocument": { "uri": "file:///nowhere.yaml" }, "position": { "line": 0, "character": 0 } }),
        )));
        let mut published = Vec::new();
        loop {
            match Message::read(&mut self.stdout)
                .expect("read")
                .expect("a message")
            {
                Message::Response(r) if r.id == id => return published,
                Message::Notification(n) if n.method == "textDocument/publishDiagnostics" => {
                    let uri = n.params["uri"].as_str().unwrap_or_default().to_owned();
                    published.push((uri, n.params["diagnostics"].clone()));
                }
                _ => {}
            }
        }
    }

    /// The next diagnostics published for `uri`.
    fn diagnostics(&mut self, uri: &str) -> Vec<Value> {
        loop {
            if let Message::Notification(n) = Message::read(&mut self.stdout)
                .expect("read")
                .expect("a message")
                && n.method == "textDocument/publishDiagnostics"
                && n.params["uri"] == uri
            {
                return n.params["diagnostics"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
            }
        }
    }

    fn open(&mut self, uri: &str, text: &str) -> Vec<Value> {
        self.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "yaml", "version": 1, "text": text } }),
        );
        self.diagnostics(uri)
    }

    fn stop(mut self) {
        self.request("shutdown", Value::Null);
        self.notify("exit", Value::Null);
        let status = self.child.wait().expect("ends");
        assert!(status.success(), "{status}");
    }
}

fn uri_of(path: &Path) -> String {
    let path = path.display().to_string();
    assert!(
        path.starts_with('/') && !path.contains(['%', '#', '?']),
        "a path that needs no escaping but spaces: {path}"
    );
    format!("file://{}", path.replace(' ', "%20"))
}

fn range(start: (u32, u32), end: (u32, u32)) -> Value {
    json!({
        "start": { "line": start.0, "character": start.1 },
        "end": { "line": end.0, "character": end.1 },
    })
}

fn by_code<'a>(diagnostics: &'a [Value], code: &str) -> Vec<&'a Value> {
    diagnostics.iter().filter(|d| d["code"] == code).collect()
}

/// A flow with a compound timeout, a misspelt field in a block-scalar filter after non-ASCII
/// text, and one in a double-quoted filter after an escape.
const FLOW: &str = "name: watch\nsteps:\n  - id: ci\n    wait_for_event:\n      source: github-events\n      timeout: 1h30m\n      filter: |\n        event.text.contains('😀é') &&\n          event.atributes.x == 1\n  - id: two\n    wait_for_event:\n      source: github-events\n      filter: \"event.text == '\\u00e9' && event.atributes.y == 2\"\n";

#[test]
fn diagnostics_fixes_and_hovers_over_stdio() {
    let tmp = tempfile::tempdir().expect("tmp");
    let flows = tmp.path().join("my plugin/flows");
    std::fs::create_dir_all(&flows).expect("mkdir");
    let path = flows.join("watch.yaml");
    std::fs::write(&path, FLOW).expect("write");
    let uri = uri_of(&path);
    let mut client = Client::start();
    let diagnostics = client.open(&uri, FLOW);
    let compound = by_code(&diagnostics, "compound-timeout");
    assert_eq!(compound.len(), 1, "{diagnostics:#?}");
    assert_eq!(compound[0]["range"], range((5, 15), (5, 20)));
    assert_eq!(compound[0]["severity"], 1);
    // An absolute URL: the root package inherits the workspace's `repository` (a relative
    // path, which opened nothing, was given without it).
    let href = compound[0]["codeDescription"]["href"]
        .as_str()
        .unwrap_or("");
    assert!(
        href.starts_with("https://") && href.ends_with("docs/rules.md#compound-timeout"),
        "{href}"
    );
    let filters = by_code(&diagnostics, "invalid-filter");
    // Line 8 (0-based) of the block scalar: `event.atributes` after 10 spaces; and in the quoted
    // scalar, after the six bytes of `\u00e9` that stand for one character.
    let ranges: Vec<&Value> = filters.iter().map(|d| &d["range"]).collect();
    assert_eq!(
        ranges,
        [&range((8, 16), (8, 25)), &range((12, 47), (12, 56))],
        "{filters:#?}"
    );

    // The quick fix of the compound timeout.
    let actions = client.request(
        "textDocument/codeAction",
        json!({ "textDocument": { "uri": uri }, "range": range((5, 16), (5, 16)), "context": { "diagnostics": [] } }),
    );
    let actions = actions.as_array().expect("actions");
    let quick = actions
        .iter()
        .find(|a| a["kind"] == "quickfix")
        .expect("a quick fix");
    assert_eq!(quick["title"], "write 90m (compound-timeout)");
    let edits = &quick["edit"]["changes"][&uri];
    assert_eq!(
        edits,
        &json!([{ "range": range((5, 15), (5, 20)), "newText": "90m" }])
    );
    let all = actions
        .iter()
        .find(|a| a["kind"] == "source.fixAll.ozcheck")
        .expect("a fix-all action");
    let whole = &all["edit"]["changes"][&uri][0]["newText"];
    assert_eq!(whole, &json!(FLOW.replace("1h30m", "90m")));

    // The change: the fixed text and the filters corrected lints clean.
    let fixed = FLOW
        .replace("1h30m", "90m")
        .replace("atributes", "attributes");
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": uri, "version": 2 }, "contentChanges": [{ "text": fixed }] }),
    );
    assert_eq!(client.diagnostics(&uri), Vec::<Value>::new());

    // Hovers: a key's description, a filter's cost.
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 5, "character": 8 } }),
    );
    let text = hover["contents"]["value"].as_str().expect("markdown");
    assert!(
        text.starts_with("`steps[].wait_for_event.timeout` — A whole number and one unit"),
        "{text}"
    );
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri }, "position": { "line": 12, "character": 20 } }),
    );
    let text = hover["contents"]["value"].as_str().expect("markdown");
    assert!(
        text.contains("**cost**") && text.contains("of the limit 1,000,000"),
        "{text}"
    );
    assert!(text.contains("**dominated by**"), "{text}");
    client.stop();
}

#[test]
fn configuration_above_and_the_plugins_agents_are_used() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plugin = tmp.path().join("repo/plugin");
    std::fs::create_dir_all(plugin.join("agents")).expect("mkdir");
    std::fs::create_dir_all(plugin.join("routines")).expect("mkdir");
    std::fs::write(
        plugin.join("agents/helper.yaml"),
        "name: helper\nruntime: acp\n",
    )
    .expect("write");
    std::fs::write(
        tmp.path().join("ozcheck.toml"),
        "[rules]\nunknown-key = \"off\"\n",
    )
    .expect("write");
    let routine = plugin.join("routines/r.yaml");
    let text = "name: r\nagent: helpr\nownr_team: x\n";
    std::fs::write(&routine, text).expect("write");
    let mut client = Client::start();
    let uri = uri_of(&routine);
    let diagnostics = client.open(&uri, text);
    let codes: Vec<&Value> = diagnostics.iter().map(|d| &d["code"]).collect();
    // The agent is read from disk; `unknown-key` is off in the ozcheck.toml two folders up.
    assert_eq!(codes, [&json!("unknown-agent")], "{diagnostics:#?}");
    assert!(
        diagnostics[0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("did you mean `helper`?")
    );
    // Opening the agent under another name changes the routine's findings: the open buffer
    // wins over the disk.
    let agent_uri = uri_of(&plugin.join("agents/helper.yaml"));
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": agent_uri, "languageId": "yaml", "version": 1, "text": "name: helpr\nruntime: acp\n" } }),
    );
    let mut routine_diagnostics = None;
    for _ in 0..2 {
        let n = loop {
            if let Message::Notification(n) = Message::read(&mut client.stdout)
                .expect("read")
                .expect("msg")
                && n.method == "textDocument/publishDiagnostics"
            {
                break n;
            }
        };
        if n.params["uri"] == uri {
            routine_diagnostics = Some(n.params["diagnostics"].clone());
        }
    }
    assert_eq!(routine_diagnostics, Some(json!([])));
    client.stop();
}

#[test]
fn other_yaml_gets_no_diagnostics_and_bad_requests_get_errors() {
    let tmp = tempfile::tempdir().expect("tmp");
    let ci = tmp.path().join("ci.yaml");
    let mut client = Client::start();
    let diagnostics = client.open(&uri_of(&ci), "on: push\njobs: {\n");
    assert_eq!(diagnostics, Vec::<Value>::new());
    // A hover far outside the text answers nothing rather than failing.
    let hover = client.request(
        "textDocument/hover",
        json!({ "textDocument": { "uri": uri_of(&ci) }, "position": { "line": 999, "character": 999 } }),
    );
    assert_eq!(hover, Value::Null);
    client.stop();
}

#[test]
fn the_extensions_of_the_configuration_above_are_used() {
    let tmp = tempfile::tempdir().expect("tmp");
    let routines = tmp.path().join("plugin/routines");
    std::fs::create_dir_all(&routines).expect("mkdir");
    std::fs::write(
        tmp.path().join("ozcheck.toml"),
        "[rules]\nunknown-agent = \"off\"\n[extensions]\ndisabled = [\"strings\"]\n",
    )
    .expect("write");
    let routine = routines.join("r.yaml");
    let text = "name: r\nagent: a\ntriggers:\n  - name: t\n    event:\n      source: github-events\n      filter: event.text.lowerAscii() == 'x'\n";
    std::fs::write(&routine, text).expect("write");
    let mut client = Client::start();
    let diagnostics = client.open(&uri_of(&routine), text);
    let found = by_code(&diagnostics, "invalid-filter");
    assert_eq!(found.len(), 1, "{diagnostics:#?}");
    assert_eq!(found[0]["range"], range((6, 25), (6, 35)));
    let message = found[0]["message"].as_str().unwrap_or("");
    assert!(message.contains("the `strings` extension"), "{message}");
    client.stop();
}

fn codes(diagnostics: &Value) -> Vec<&str> {
    diagnostics
        .as_array()
        .map(|d| d.iter().filter_map(|d| d["code"].as_str()).collect())
        .unwrap_or_default()
}

#[test]
fn many_open_agents_publish_once_each_and_a_real_change_still_reaches_the_routine() {
    let tmp = tempfile::tempdir().expect("tmp");
    let plugin = tmp.path().join("plugin");
    std::fs::create_dir_all(plugin.join("agents")).expect("mkdir");
    std::fs::create_dir_all(plugin.join("routines")).expect("mkdir");
    let helper = plugin.join("agents/helper.yaml");
    let helper_text = "name: helper\nruntime: acp\n";
    std::fs::write(&helper, helper_text).expect("write");
    let routine = plugin.join("routines/r.yaml");
    let routine_text = "name: r\nagent: helpr\n";
    std::fs::write(&routine, routine_text).expect("write");
    let routine_uri = uri_of(&routine);
    let helper_uri = uri_of(&helper);
    let mut client = Client::start();
    let diagnostics = client.open(&routine_uri, routine_text);
    assert_eq!(codes(&Value::from(diagnostics)), ["unknown-agent"]);

    // 200 agents that are only buffers (no other file reads them) and the helper opened with
    // its text on disk: none changes what the routine reads.
    let agents: Vec<String> = (0..200)
        .map(|n| uri_of(&plugin.join(format!("agents/a{n}.yaml"))))
        .collect();
    for (n, uri) in agents.iter().enumerate() {
        client.notify(
            "textDocument/didOpen",
            json!({ "textDocument": { "uri": uri, "languageId": "yaml", "version": 1, "text": format!("name: a{n}\nruntime: acp\n") } }),
        );
    }
    client.notify(
        "textDocument/didOpen",
        json!({ "textDocument": { "uri": helper_uri, "languageId": "yaml", "version": 1, "text": helper_text } }),
    );
    let published = client.published_until_answered();
    let mut counts = std::collections::HashMap::<&str, usize>::new();
    for (uri, _) in &published {
        *counts.entry(uri.as_str()).or_default() += 1;
    }
    assert_eq!(published.len(), 201, "{} publishes", published.len());
    assert!(counts.values().all(|&n| n == 1), "{counts:?}");
    assert!(!counts.contains_key(routine_uri.as_str()));

    // The helper renamed in its buffer: the routine's finding goes, and only documents whose
    // diagnostics change are published.
    client.notify(
        "textDocument/didChange",
        json!({ "textDocument": { "uri": helper_uri, "version": 2 }, "contentChanges": [{ "text": "name: helpr\nruntime: acp\n" }] }),
    );
    assert_eq!(client.diagnostics(&routine_uri), Vec::<Value>::new());
    let published = client.published_until_answered();
    assert!(
        published.iter().all(|(uri, _)| *uri == helper_uri),
        "{published:?}"
    );
    // Closed, the helper is read from disk again: the routine's finding is back.
    client.notify(
        "textDocument/didClose",
        json!({ "textDocument": { "uri": helper_uri } }),
    );
    let published = client.published_until_answered();
    let routine_now: Vec<&Value> = published
        .iter()
        .filter(|(uri, _)| *uri == routine_uri)
        .map(|(_, d)| d)
        .collect();
    assert_eq!(routine_now.len(), 1, "{published:?}");
    assert_eq!(codes(routine_now[0]), ["unknown-agent"]);
    // The helper's diagnostics cleared, and nothing for the 200 others.
    assert_eq!(published.len(), 2, "{published:?}");
    client.stop();
}
