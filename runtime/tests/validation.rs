//! Validation of `wait_for` calls before any probe runs (W2, W4, W5, W7): every rejection has
//! its own code, and the boundaries on either side of each rule are pinned.

use ozcheck_runtime::probe::{InvalidWait, Until, WaitFor};
use serde_json::{Value, json};

fn code(call: &Value) -> &'static str {
    match WaitFor::from_json(call) {
        Ok(_) => "ok",
        Err(e) => e.error_code(),
    }
}

fn with(poll_sec: &Value, max_wait_sec: &Value, until: &Value) -> Value {
    json!({"probe": {"tool": "pods", "args": {}}, "until": until,
           "poll_sec": poll_sec, "max_wait_sec": max_wait_sec})
}

#[test]
fn each_rule_of_w7_has_its_own_rejection() {
    let m = json!({"matches": "Running"});
    let table: Vec<(Value, &str)> = vec![
        (
            json!({"probe": {"tool": ""}, "until": m}),
            "empty-probe-tool",
        ),
        (
            json!({"probe": {"tool": "pods", "args": []}, "until": m}),
            "probe-args-not-object",
        ),
        (
            json!({"probe": {"tool": "pods", "args": "x"}, "until": m}),
            "probe-args-not-object",
        ),
        (
            json!({"probe": {"tool": "pods", "args": null}, "until": m}),
            "probe-args-not-object",
        ),
        (
            json!({"probe": {"tool": "pods"}, "until": {"matches": "("}}),
            "invalid-regex",
        ),
        (
            json!({"probe": {"tool": "pods"}, "until": {"not_matches": "a{2,1}"}}),
            "invalid-regex",
        ),
        (with(&json!(0), &json!(10), &m), "zero-poll-sec"),
        (
            with(&json!(1), &json!(10), &json!({"quiet_for_sec": 0})),
            "zero-quiet-for-sec",
        ),
        (with(&json!(1), &json!(0), &m), "zero-max-wait-sec"),
        (with(&json!(10), &json!(10), &m), "poll-not-below-max-wait"),
        (with(&json!(11), &json!(10), &m), "poll-not-below-max-wait"),
        (
            with(&json!(1), &json!(10), &json!({"quiet_for_sec": 11})),
            "quiet-exceeds-max-wait",
        ),
        (
            json!({"probe": {"tool": "pods"}, "until": {}}),
            "not-one-condition",
        ),
        (
            json!({"probe": {"tool": "pods"}, "until": {"matches": "a", "not_matches": "b"}}),
            "not-one-condition",
        ),
        (
            json!({"probe": {"tool": "pods"}, "until": {"matches": "a", "quiet_for_sec": 3}}),
            "not-one-condition",
        ),
    ];
    for (call, expected) in &table {
        assert_eq!(code(call), *expected, "{call}");
    }
}

#[test]
fn the_boundaries_of_each_rule_are_accepted() {
    let m = json!({"matches": "Running"});
    assert_eq!(code(&with(&json!(9), &json!(10), &m)), "ok");
    assert_eq!(
        code(&with(&json!(1), &json!(10), &json!({"quiet_for_sec": 10}))),
        "ok"
    );
    assert_eq!(code(&with(&json!(1), &json!(1000), &m)), "ok");
    assert_eq!(code(&json!({"probe": {"tool": "pods"}, "until": m})), "ok");
}

#[test]
fn native_tools_cannot_be_probed() {
    for tool in ["wait_for", "submit_result", "read_artifact"] {
        let call = json!({"probe": {"tool": tool}, "until": {"matches": "x"}});
        assert_eq!(
            WaitFor::from_json(&call).unwrap_err(),
            InvalidWait::NativeProbeTool {
                tool: tool.to_owned()
            }
        );
    }
}

#[test]
fn max_wait_is_clamped_and_relations_use_the_clamped_bound() {
    let m = json!({"matches": "x"});
    let wait = WaitFor::from_json(&with(&json!(299), &json!(1000), &m)).expect("valid");
    assert_eq!(
        (wait.requested_max_wait_sec, wait.effective_max_wait_sec),
        (1000, 300)
    );
    assert_eq!(
        WaitFor::from_json(&with(&json!(300), &json!(1000), &m)).unwrap_err(),
        InvalidWait::PollNotBelowMaxWait {
            poll_sec: 300,
            max_wait_sec: 300
        }
    );
    let quiet = json!({"quiet_for_sec": 301});
    assert_eq!(
        code(&with(&json!(1), &json!(1000), &quiet)),
        "quiet-exceeds-max-wait"
    );
}

#[test]
fn omitted_durations_take_the_documented_defaults() {
    let wait =
        WaitFor::from_json(&json!({"probe": {"tool": "pods"}, "until": {"quiet_for_sec": 30}}))
            .expect("valid");
    assert_eq!((wait.poll_sec, wait.effective_max_wait_sec), (5, 300));
    assert!(wait.probe_args.is_empty());
    assert!(matches!(wait.until, Until::QuietForSec(30)));
    // A short bound alone is a valid call: the default poll interval fits under it.
    let short = |max: u64| {
        WaitFor::from_json(
            &json!({"probe": {"tool": "pods"}, "until": {"matches": "x"}, "max_wait_sec": max}),
        )
        .map(|w| w.poll_sec)
    };
    assert_eq!(short(6), Ok(5));
    assert_eq!(short(3), Ok(2));
    assert_eq!(short(1), Ok(1));
    // A poll interval the worker gave is still held to the rule.
    let given = json!({"probe": {"tool": "pods"}, "until": {"matches": "x"},
                       "poll_sec": 3, "max_wait_sec": 3});
    assert_eq!(code(&given), "poll-not-below-max-wait");
}

#[test]
fn malformed_and_unknown_fields_are_rejected_not_guessed() {
    let m = json!({"matches": "x"});
    let table: Vec<(Value, &str)> = vec![
        (json!("wait please"), "malformed"),
        (json!({"until": m}), "malformed"),
        (json!({"probe": "pods", "until": m}), "malformed"),
        (json!({"probe": {"tool": 7}, "until": m}), "malformed"),
        (
            json!({"probe": {"tool": "pods"}, "until": {"matches": 7}}),
            "malformed",
        ),
        (with(&json!(1.5), &json!(10), &m), "malformed"),
        (with(&json!(-1), &json!(10), &m), "malformed"),
        (with(&json!("5"), &json!(10), &m), "malformed"),
        (
            json!({"probe": {"tool": "pods"}, "until": m, "timeout": 5}),
            "unknown-field",
        ),
        (
            json!({"probe": {"tool": "pods", "argz": {}}, "until": m}),
            "unknown-field",
        ),
        (
            json!({"probe": {"tool": "pods"}, "until": {"equals": "x"}}),
            "unknown-field",
        ),
    ];
    for (call, expected) in &table {
        assert_eq!(code(call), *expected, "{call}");
    }
}

#[test]
fn a_regex_beyond_the_size_limit_is_invalid_not_compiled() {
    // `\w{100}` compiles under the regex crate's own default limit but needs more than
    // REGEX_SIZE_LIMIT, so only our limit rejects it.
    let huge = r"\w{100}";
    assert!(regex_automata::meta::Regex::new(huge).is_ok());
    let err = WaitFor::from_json(&json!({"probe": {"tool": "p"}, "until": {"matches": huge}}))
        .unwrap_err();
    assert_eq!(err.error_code(), "invalid-regex");
    assert!(err.to_string().contains("until.matches"), "{err}");
    let fine = "(?:a{100}){100}";
    assert_eq!(
        code(&json!({"probe": {"tool": "p"}, "until": {"matches": fine}})),
        "ok"
    );
}
