//! Probe waits end to end in virtual time: a real rmcp client and the scripted MCP server over
//! an in-memory pipe, driven by tokio's paused clock (W3–W6, W8).

// Virtual time makes elapsed times exact whole milliseconds, so exact comparisons are right.
#![allow(clippy::float_cmp)]

mod common;

use ozcheck_runtime::probe::observe::ToolCallEvents;
use ozcheck_runtime::probe::server::ScriptedServer;
use ozcheck_runtime::probe::{
    Observation, Probe, ProbeFailure, StopReason, WaitError, WaitFor, WaitForTool, WaitResult,
    run_wait,
};
use serde_json::{Value, json};

/// Calls `wait_for` through the native tool against one scripted tool named `probe`.
async fn wait(script: &str, args: Value) -> (Result<WaitResult, WaitError>, ScriptedServer) {
    let (manager, server) = common::scripted(&[("probe", script)]).await;
    let tool = WaitForTool::new(&manager, ToolCallEvents::default());
    let result = tool.call("call-1", &args).await;
    (result, server)
}

fn call(until: &Value, poll_sec: u64, max_wait_sec: u64) -> Value {
    json!({"probe": {"tool": "probe", "args": {}}, "until": until,
           "poll_sec": poll_sec, "max_wait_sec": max_wait_sec})
}

#[tokio::test(start_paused = true)]
async fn matches_stops_at_the_first_matching_sample() {
    let script = "- {calls: 1..3, text: Pending}\n- {text: Running}";
    let (result, server) = wait(script, call(&json!({"matches": "Running"}), 2, 30)).await;
    let result = result.expect("a result");
    assert_eq!(result.reason, StopReason::Matched);
    assert_eq!(result.samples, 4);
    assert!(
        (result.elapsed_sec - 6.0).abs() < 1e-9,
        "{}",
        result.elapsed_sec
    );
    assert_eq!(result.last_observation.as_deref(), Some("Running"));
    assert_eq!(result.effective_max_wait_sec, 30);
    assert_eq!(server.calls("probe"), 4);
}

#[tokio::test(start_paused = true)]
async fn first_probe_runs_at_time_zero() {
    let (result, _) = wait("- {text: Ready}", call(&json!({"matches": "Ready"}), 5, 60)).await;
    let result = result.expect("a result");
    assert_eq!((result.samples, result.elapsed_sec), (1, 0.0));
}

#[tokio::test(start_paused = true)]
async fn not_matches_stops_when_the_output_stops_matching() {
    let script = "- {calls: 1..2, text: 'pod web-1 Terminating'}\n- {text: 'no pods'}";
    let (result, _) = wait(script, call(&json!({"not_matches": "Terminating"}), 2, 30)).await;
    let result = result.expect("a result");
    assert_eq!(result.reason, StopReason::Matched);
    assert_eq!(result.samples, 3);
    assert_eq!(result.elapsed_sec, 4.0);
    assert_eq!(result.last_observation.as_deref(), Some("no pods"));
}

#[tokio::test(start_paused = true)]
async fn regexes_search_unanchored_unless_the_pattern_anchors() {
    let script = "- {text: 'status: Running'}";
    let (found, _) = wait(script, call(&json!({"matches": "Running"}), 1, 3)).await;
    assert_eq!(found.expect("a result").reason, StopReason::Matched);
    let (anchored, _) = wait(script, call(&json!({"matches": "^Running"}), 1, 3)).await;
    assert_eq!(anchored.expect("a result").reason, StopReason::Timeout);
}

#[tokio::test(start_paused = true)]
async fn quiet_window_counts_from_the_first_sample_of_the_current_output() {
    // Outputs at t = 0, 1, 2, ...: a, b, b, c, c, c, c, ... The window for `c` opens at t = 3
    // and holds 3 s later, at t = 6; the earlier `b` run was too short.
    let script = "- {calls: 1, text: a}\n- {calls: 2..3, text: b}\n- {text: c}";
    let (result, _) = wait(script, call(&json!({"quiet_for_sec": 3}), 1, 60)).await;
    let result = result.expect("a result");
    assert_eq!(result.reason, StopReason::Settled);
    assert_eq!(result.samples, 7);
    assert_eq!(result.elapsed_sec, 6.0);
    assert_eq!(result.last_observation.as_deref(), Some("c"));
}

#[tokio::test(start_paused = true)]
async fn timeout_is_a_result_with_the_last_observation() {
    let (result, server) = wait(
        "- {text: Pending}",
        call(&json!({"matches": "Done"}), 3, 10),
    )
    .await;
    let result = result.expect("timeout is not an error");
    assert_eq!(result.reason, StopReason::Timeout);
    // Samples at 0, 3, 6 and 9 s; the bound elapses at 10 s.
    assert_eq!(result.samples, 4);
    assert_eq!(result.elapsed_sec, 10.0);
    assert_eq!(result.last_observation.as_deref(), Some("Pending"));
    assert_eq!(server.calls("probe"), 4);
}

#[tokio::test(start_paused = true)]
async fn a_tick_due_at_the_deadline_is_not_taken() {
    let (result, server) = wait(
        "- {text: Pending}",
        call(&json!({"matches": "Done"}), 5, 10),
    )
    .await;
    let result = result.expect("a result");
    assert_eq!((result.reason, result.samples), (StopReason::Timeout, 2));
    assert_eq!(server.calls("probe"), 2);
}

#[tokio::test(start_paused = true)]
async fn an_answer_arriving_at_the_deadline_is_too_late() {
    let (result, server) = wait(
        "- {delay_ms: 5000, text: Done}",
        call(&json!({"matches": "Done"}), 1, 5),
    )
    .await;
    let result = result.expect("a result");
    assert_eq!((result.reason, result.samples), (StopReason::Timeout, 0));
    assert_eq!(result.last_observation, None);
    assert_eq!(server.calls("probe"), 1);
}

/// A probe that answers after a fixed time, without any I/O in between.
struct AnswersAfter(std::time::Duration);

impl Probe for AnswersAfter {
    async fn call(
        &mut self,
        _tool: &str,
        _args: &serde_json::Map<String, Value>,
    ) -> Result<Observation, ProbeFailure> {
        tokio::time::sleep(self.0).await;
        Ok(Observation {
            text: "Done".to_owned(),
            is_error: false,
        })
    }
}

#[tokio::test(start_paused = true)]
async fn the_deadline_wins_a_tie_even_against_a_probe_that_answers_without_yielding() {
    let wait = WaitFor::from_json(&call(&json!({"matches": "Done"}), 1, 5)).expect("valid");
    let tie = run_wait(&wait, &mut AnswersAfter(std::time::Duration::from_secs(5))).await;
    assert_eq!(tie.expect("a result").reason, StopReason::Timeout);
    let early = run_wait(
        &wait,
        &mut AnswersAfter(std::time::Duration::from_millis(4999)),
    )
    .await;
    assert_eq!(early.expect("a result").reason, StopReason::Matched);
}

#[tokio::test(start_paused = true)]
async fn a_hung_probe_cannot_extend_the_bound() {
    let (result, _) = wait("- {hang: true}", call(&json!({"matches": "Done"}), 1, 5)).await;
    let result = result.expect("a result");
    assert_eq!(result.reason, StopReason::Timeout);
    assert_eq!(result.elapsed_sec, 5.0);
    assert_eq!(result.samples, 0);
    assert_eq!(result.last_observation, None);
}

#[tokio::test(start_paused = true)]
async fn the_hung_call_is_cancelled_at_the_deadline() {
    let (manager, server) = common::scripted(&[("probe", "- {hang: true}")]).await;
    let tool = WaitForTool::new(&manager, ToolCallEvents::default());
    let result = tool
        .call("c", &call(&json!({"matches": "Done"}), 1, 5))
        .await;
    assert_eq!(result.expect("a result").reason, StopReason::Timeout);
    // Let the server read the notification the client sent when the call was dropped.
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    assert_eq!(server.cancellations(), 1);
}

#[tokio::test(start_paused = true)]
async fn a_probe_that_hangs_later_keeps_the_last_observation() {
    let script = "- {calls: 1..2, text: Pending}\n- {hang: true}";
    let (result, _) = wait(script, call(&json!({"matches": "Done"}), 1, 5)).await;
    let result = result.expect("a result");
    assert_eq!((result.reason, result.samples), (StopReason::Timeout, 2));
    assert_eq!(result.elapsed_sec, 5.0);
    assert_eq!(result.last_observation.as_deref(), Some("Pending"));
}

#[tokio::test(start_paused = true)]
async fn max_wait_is_clamped_to_300_and_reported() {
    let (result, _) = wait("- {hang: true}", call(&json!({"matches": "x"}), 10, 1000)).await;
    let result = result.expect("a result");
    assert_eq!(result.effective_max_wait_sec, 300);
    assert_eq!(result.elapsed_sec, 300.0);
}

#[tokio::test(start_paused = true)]
async fn an_overrunning_probe_is_followed_at_once_then_the_grid_resumes() {
    // poll_sec 2, the first call takes 5 s: the missed ticks at 2 and 4 s give one call at 5 s
    // (not two), then calls return to the grid at 6 and 8 s; the tick at 10 s is past the
    // bound. Fixed delay would call at 0, 5, 7 s; catching up every missed tick at 0, 5, 5, 6, 8.
    let script = "- {calls: 1, delay_ms: 5000, text: Pending}\n- {text: Pending}";
    let (result, server) = wait(script, call(&json!({"matches": "Done"}), 2, 9)).await;
    let result = result.expect("a result");
    assert_eq!(result.samples, 4);
    assert_eq!(server.calls("probe"), 4);
}

#[tokio::test(start_paused = true)]
async fn output_of_exactly_256_kib_is_accepted() {
    let (result, _) = wait("- {bytes: 262144}", call(&json!({"matches": "^x+$"}), 1, 5)).await;
    let result = result.expect("a result");
    assert_eq!(result.reason, StopReason::Matched);
    assert_eq!(result.last_observation.map(|o| o.len()), Some(262_144));
}

#[tokio::test(start_paused = true)]
async fn output_one_byte_over_256_kib_fails_the_wait_mid_poll() {
    let script = "- {calls: 1..2, text: Pending}\n- {bytes: 262145}";
    let (result, server) = wait(script, call(&json!({"matches": "Done"}), 1, 30)).await;
    let error = result.expect_err("a runtime error");
    assert_eq!(
        error,
        WaitError::Runtime(ProbeFailure::OutputTooLarge {
            bytes: 262_145,
            limit: 262_144
        })
    );
    assert_eq!(error.kind(), "runtime");
    assert_eq!(server.calls("probe"), 3);
}

#[tokio::test(start_paused = true)]
async fn is_error_results_are_samples_that_never_satisfy_the_condition() {
    let script = "- {calls: 1, text: 'NotFound', is_error: true}\n- {text: Found}";
    let (result, _) = wait(script, call(&json!({"matches": "^Found"}), 1, 5)).await;
    let result = result.expect("isError does not fail the wait");
    assert_eq!((result.reason, result.samples), (StopReason::Matched, 2));
    assert!(!result.last_is_error);

    // An error text that matches `matches`, that does not match `not_matches`, or that stays
    // the same for the quiet window is still not the condition holding.
    let failing = "- {text: 'error: Running is not a valid argument', is_error: true}";
    for until in [
        json!({"matches": "Running"}),
        json!({"not_matches": "Pending"}),
        json!({"quiet_for_sec": 2}),
    ] {
        let (result, _) = wait(failing, call(&until, 1, 5)).await;
        let result = result.expect("a timeout is a result");
        assert_eq!(result.reason, StopReason::Timeout, "{until}");
        assert_eq!(result.samples, 5, "{until}");
        assert!(result.last_is_error, "{until}");
        assert_eq!(
            result.last_observation.as_deref(),
            Some("error: Running is not a valid argument")
        );
    }

    // An error in the middle of a quiet window ends it: the window restarts after it.
    let flapping =
        "- {calls: 1..2, text: same}\n- {calls: 3, text: same, is_error: true}\n- {text: same}";
    let (result, _) = wait(flapping, call(&json!({"quiet_for_sec": 2}), 1, 10)).await;
    let result = result.expect("a result");
    assert_eq!(result.reason, StopReason::Settled);
    assert_eq!(
        result.elapsed_sec, 5.0,
        "window reopened at t=3, held at t=5"
    );
}

#[tokio::test(start_paused = true)]
async fn structured_only_results_are_observed_as_json_and_images_are_ignored() {
    let script = "- {calls: 1, no_text: true, image: true}
- {calls: 2, no_text: true, structured: {phase: Running}}";
    let (result, _) = wait(script, call(&json!({"matches": "Running"}), 1, 5)).await;
    let result = result.expect("a result");
    assert_eq!(result.samples, 2);
    assert_eq!(
        result.last_observation.as_deref(),
        Some(r#"{"phase":"Running"}"#)
    );
}

#[tokio::test(start_paused = true)]
async fn a_probe_the_server_does_not_offer_is_rejected_before_any_call() {
    let (manager, server) = common::scripted(&[("probe", "- {text: a}")]).await;
    let tool = WaitForTool::new(&manager, ToolCallEvents::default());
    let args = json!({"probe": {"tool": "kubectl_get"}, "until": {"matches": "a"},
                      "poll_sec": 1, "max_wait_sec": 5});
    let error = tool.call("c", &args).await.expect_err("rejected");
    assert_eq!(
        (error.kind(), error.error_code()),
        ("invalid_args", "unknown-probe-tool")
    );
    assert!(
        error.to_string().ends_with("; it offers: probe"),
        "the message lists the server's tools: {error}"
    );
    assert_eq!(server.calls("probe"), 0);
}

#[tokio::test(start_paused = true)]
async fn a_server_side_protocol_error_fails_the_wait() {
    // Bypass the tool check to reach the server with a name it does not know.
    let (manager, _) = common::scripted(&[("probe", "- {text: a}")]).await;
    let wait = ozcheck_runtime::probe::WaitFor::from_json(&json!({
        "probe": {"tool": "missing"}, "until": {"matches": "a"}, "poll_sec": 1, "max_wait_sec": 5
    }))
    .expect("valid");
    let mut probe = &manager;
    let failure = ozcheck_runtime::probe::run_wait(&wait, &mut probe)
        .await
        .expect_err("fails");
    assert!(
        matches!(failure, ProbeFailure::CallFailed { .. }),
        "{failure:?}"
    );
}
