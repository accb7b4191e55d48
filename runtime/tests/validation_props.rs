//! Hostile `wait_for` arguments: validation is total (it never panics) and anything it accepts
//! satisfies every rule of W5 and W7.

use ozcheck_runtime::probe::{MAX_WAIT_CEILING_SEC, NativeTool, Until, WaitFor};
use proptest::prelude::*;
use serde_json::{Map, Value, json};

/// Arbitrary JSON, a few levels deep.
fn any_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (0u64..400).prop_map(Value::from),
        any::<f64>().prop_map(|f| json!(f)),
        "[a-z_()\\[\\]*+?{}0-9^$\\\\]{0,12}".prop_map(Value::from),
    ];
    leaf.prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::from),
            prop::collection::btree_map(
                prop_oneof![
                    Just("probe".to_owned()),
                    Just("tool".to_owned()),
                    Just("args".to_owned()),
                    Just("until".to_owned()),
                    Just("matches".to_owned()),
                    Just("not_matches".to_owned()),
                    Just("quiet_for_sec".to_owned()),
                    Just("poll_sec".to_owned()),
                    Just("max_wait_sec".to_owned()),
                    "[a-z]{1,6}",
                ],
                inner,
                0..5
            )
            .prop_map(|m| Value::Object(m.into_iter().collect::<Map<_, _>>())),
        ]
    })
}

/// Calls of the right shape with arbitrary values in every slot.
fn shaped_call() -> impl Strategy<Value = Value> {
    (any_json(), any_json(), any_json(), any_json(), any_json()).prop_map(
        |(tool, args, condition, poll, max)| {
            json!({"probe": {"tool": tool, "args": args},
                   "until": {"quiet_for_sec": condition},
                   "poll_sec": poll, "max_wait_sec": max})
        },
    )
}

fn check_accepted(call: &Value) {
    let Ok(wait) = WaitFor::from_json(call) else {
        return;
    };
    assert!(!wait.probe_tool.is_empty());
    assert!(NativeTool::from_name(&wait.probe_tool).is_none());
    assert!(wait.poll_sec >= 1);
    assert!(
        wait.effective_max_wait_sec >= 1 && wait.effective_max_wait_sec <= MAX_WAIT_CEILING_SEC
    );
    assert_eq!(
        wait.effective_max_wait_sec,
        wait.requested_max_wait_sec.min(MAX_WAIT_CEILING_SEC)
    );
    assert!(wait.poll_sec < wait.effective_max_wait_sec);
    if let Until::QuietForSec(q) = wait.until {
        assert!(q >= 1 && q <= wait.effective_max_wait_sec);
    }
}

proptest! {
    #[test]
    fn validation_is_total_on_any_json(call in any_json()) {
        check_accepted(&call);
    }

    #[test]
    fn accepted_calls_satisfy_every_rule(call in shaped_call()) {
        check_accepted(&call);
    }
}
