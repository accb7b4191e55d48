//! `ozcheck eval` as a user runs it: the value or the stop kind, exit codes, the JSON contract.

use std::process::Command;

const ADV: &str = "corpus/events/adv_int8k.json";
const REALISTIC: &str = "corpus/events/realistic.json";
const NESTED: &str = "event.attributes.a.exists(x, event.attributes.b.exists(y, x == y))";

fn eval(args: &[&str]) -> (i32, serde_json::Value, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_ozcheck"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .arg("eval")
        .args(args)
        .args(["--format", "json"])
        .output()
        .expect("runs");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let json = serde_json::from_str(&stdout).unwrap_or(serde_json::Value::Null);
    (
        out.status.code().unwrap(),
        json,
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn evaluates_with_value_cost_and_estimate() {
    let (code, v, _) = eval(&["event.action == 'opened'", "--event", REALISTIC]);
    assert_eq!(code, 0);
    assert_eq!(v["value"], true);
    let cost = v["cost"].as_u64().unwrap();
    let (min, max) = (
        v["estimate"]["min"].as_u64().unwrap(),
        v["estimate"]["max"].as_u64().unwrap(),
    );
    assert!(min <= cost && cost <= max, "{v}");
    assert!(v["elapsed_us"].is_u64());
    assert_eq!(
        v["cost_model_version"],
        ozcheck_analyzer::cost::COST_MODEL_VERSION
    );
}

#[test]
fn the_static_check_refuses_before_evaluating() {
    let (code, v, _) = eval(&[NESTED, "--event", ADV]);
    assert_eq!(code, 1);
    assert_eq!(v["error"]["kind"], "refused");
    assert_eq!(v["error"]["diagnostics"][0]["code"], "cost-over-limit");
    assert_eq!(
        v["cost_model_version"],
        ozcheck_analyzer::cost::COST_MODEL_VERSION
    );
}

#[test]
fn runtime_only_the_meter_stops_the_nested_exists() {
    // A generous deadline, so that on a slow (debug, loaded) machine the cost limit still comes
    // first: this test is about the meter, the next one about the deadline.
    let (code, v, _) = eval(&[
        NESTED,
        "--event",
        ADV,
        "--no-static-check",
        "--deadline-ms",
        "600000",
    ]);
    assert_eq!(code, 1);
    assert_eq!(v["error"]["kind"], "cost-limit");
    let cost = v["error"]["cost"].as_u64().unwrap();
    assert!(cost > 1_000_000);
    assert_eq!(
        v["cost_model_version"],
        ozcheck_analyzer::cost::COST_MODEL_VERSION
    );
    // The message is text for people: the cost grouped by thousands; the field is raw.
    let message = v["error"]["message"].as_str().expect("message");
    let grouped = ozcheck_analyzer::cost::group(cost);
    assert!(
        message.contains(&format!("would cost {grouped} units")),
        "{message}"
    );
}

#[test]
fn without_a_cost_limit_the_deadline_stops_it() {
    let (code, v, _) = eval(&[
        NESTED,
        "--event",
        ADV,
        "--no-static-check",
        "--limit",
        "0",
        "--deadline-ms",
        "20",
    ]);
    assert_eq!(code, 1);
    assert_eq!(v["error"]["kind"], "deadline");
}

#[test]
fn runtime_errors_are_reported_as_such() {
    let (code, v, _) = eval(&["event.attributes.missing == 1", "--event", REALISTIC]);
    assert_eq!(code, 1);
    assert_eq!(v["error"]["kind"], "runtime");
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("no such key")
    );
}

#[test]
fn unreadable_or_oversized_events_are_usage_errors() {
    let (code, _, stderr) = eval(&["true", "--event", "no/such/event.json"]);
    assert_eq!(code, 2);
    assert!(stderr.contains("cannot read"));

    let dir = std::env::temp_dir().join(format!("ozcheck-eval-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let big = dir.join("big.json");
    let text = "x".repeat(16 * 1024 + 1);
    std::fs::write(
        &big,
        serde_json::json!({"id": "1", "source": "s", "type": "t", "action": "a",
                           "subject": "s", "text": text, "attributes": {}})
        .to_string(),
    )
    .unwrap();
    let (code, _, stderr) = eval(&["true", "--event", big.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(stderr.contains("text"), "{stderr}");
    std::fs::remove_dir_all(dir).unwrap();
}

/// Runs `ozcheck ARGS` with standard output a pipe whose reader is closed before anything is
/// written: the event (or the input) comes on standard input, sent only once the reader is gone.
fn with_closed_stdout(args: &[&str], input: &[u8]) -> (Option<i32>, String) {
    use std::io::Write;
    use std::process::Stdio;
    let mut child = Command::new(env!("CARGO_BIN_EXE_ozcheck"))
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("runs");
    drop(child.stdout.take());
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input).expect("event sent");
    drop(stdin);
    let out = child.wait_with_output().expect("ends");
    (
        out.status.code(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn a_closed_pipe_ends_quietly() {
    let event = std::fs::read(format!("{}/{REALISTIC}", env!("CARGO_MANIFEST_DIR"))).unwrap();
    for format in ["json", "full"] {
        let args = [
            "eval",
            "event.action == 'opened'",
            "--event",
            "/dev/stdin",
            "--format",
            format,
        ];
        let (code, stderr) = with_closed_stdout(&args, &event);
        assert_eq!(code, Some(141), "{format}: {stderr}");
        assert_eq!(stderr, "", "{format}");
    }
    // `ozcheck filter` reads its expression from standard input with `-`.
    let (code, stderr) = with_closed_stdout(&["filter", "-"], b"event.text == ''");
    assert_eq!(code, Some(141), "{stderr}");
    assert_eq!(stderr, "");
}
