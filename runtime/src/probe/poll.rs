//! The poll loop of a probe wait (W3–W6, W8): a fixed-rate schedule raced against a deadline.
//!
//! The first probe call starts at once (t = 0); later calls start on the multiples of
//! `poll_sec` after the start (fixed rate). Calls never overlap: when a call overruns one or more
//! ticks, the next call starts as soon as it returns (once, however many ticks were missed) and
//! the calls after it return to the grid. The whole loop runs inside
//! `tokio::time::timeout_at(deadline)`, so the bound does not depend on the probe ever returning:
//! at the deadline the in-flight call is dropped, which cancels it, and the wait returns
//! `timeout` with the last output observed before.
//!
//! A result the tool flags with `isError` is a sample (counted, and shown as
//! `last_observation` with `last_is_error: true`), but it never satisfies the condition: a
//! probe that fails (bad arguments, a missing permission) must not come back `matched` because
//! its error text happens not to match a `not_matches` pattern, nor `settled` because it keeps
//! failing the same way. An error sample also ends an open quiet window.

use std::future::Future;

use serde_json::{Map, Value};
use tokio::time::{Instant, MissedTickBehavior};

use super::validate::{Pattern, Until, WaitFor};
use super::{MAX_OUTPUT_BYTES, ProbeFailure, StopReason, WaitResult};

/// One output of a probe call.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Observation {
    /// The output the condition is checked against.
    pub text: String,
    /// Whether the tool flagged its result as an error; such a result is still an observation.
    pub is_error: bool,
}

/// Something that can be called repeatedly to observe the world: in production an MCP tool.
pub trait Probe {
    /// Calls `tool` with `args` once. The future may never finish; the caller bounds it.
    fn call(
        &mut self,
        tool: &str,
        args: &Map<String, Value>,
    ) -> impl Future<Output = Result<Observation, ProbeFailure>> + Send;
}

/// How a wait ended, before it is turned into a result or an error: kept apart so the caller
/// can record span fields for both.
#[derive(Debug)]
pub struct Outcome {
    /// The result, or the probe failure that ended the wait.
    pub result: Result<WaitResult, ProbeFailure>,
    /// How many outputs were observed, also when the wait failed.
    pub samples: u64,
    /// Milliseconds from start to end of the wait.
    pub elapsed_ms: u64,
}

/// Runs a validated wait against `probe` and returns its result (W3–W8).
pub async fn run_wait<P: Probe>(wait: &WaitFor, probe: &mut P) -> Result<WaitResult, ProbeFailure> {
    run_wait_outcome(wait, probe).await.result
}

/// Like [`run_wait`], but also reports the sample count and elapsed time when the wait fails.
pub async fn run_wait_outcome<P: Probe>(wait: &WaitFor, probe: &mut P) -> Outcome {
    run_wait_from(wait, probe, Instant::now()).await
}

/// Like [`run_wait_outcome`] for a wait whose bound started at `start` (before the MCP server
/// was reached, say): the deadline is `start + max_wait`, whatever happened since.
pub async fn run_wait_from<P: Probe>(wait: &WaitFor, probe: &mut P, start: Instant) -> Outcome {
    let deadline = start + wait.max_wait();
    let mut sampler = Sampler {
        condition: Condition::new(&wait.until),
        samples: 0,
        last: None,
        last_is_error: false,
    };
    let bounded =
        tokio::time::timeout_at(deadline, sampler.run(wait, probe, start, deadline)).await;
    let end = Instant::now();
    let reason = match bounded {
        Ok(Ok(reason)) => Ok(reason),
        Ok(Err(failure)) => Err(failure),
        Err(_elapsed) => Ok(StopReason::Timeout),
    };
    // On timeout the clock reads the deadline exactly; elsewhere it reads the instant the
    // deciding sample arrived.
    let elapsed = end.min(deadline) - start;
    let elapsed_ms = elapsed.as_millis() as u64;
    Outcome {
        result: reason.map(|reason| WaitResult {
            reason,
            samples: sampler.samples,
            elapsed_sec: WaitResult::seconds(elapsed),
            last_observation: sampler.last.clone(),
            last_is_error: sampler.last_is_error,
            effective_max_wait_sec: wait.effective_max_wait_sec,
        }),
        samples: sampler.samples,
        elapsed_ms,
    }
}

/// The state of the loop that outlives the timeout: what was seen, and the condition's memory.
struct Sampler<'w> {
    condition: Condition<'w>,
    samples: u64,
    last: Option<String>,
    last_is_error: bool,
}

impl Sampler<'_> {
    /// Polls until the condition holds; the caller's timeout ends it otherwise.
    async fn run<P: Probe>(
        &mut self,
        wait: &WaitFor,
        probe: &mut P,
        start: Instant,
        deadline: Instant,
    ) -> Result<StopReason, ProbeFailure> {
        let mut ticks = tokio::time::interval_at(start, wait.poll_interval());
        ticks.set_missed_tick_behavior(MissedTickBehavior::Skip);
        loop {
            ticks.tick().await;
            // A tick due at the deadline itself is not taken: the bound has elapsed.
            if Instant::now() >= deadline {
                return std::future::pending().await;
            }
            let observation = probe.call(&wait.probe_tool, &wait.probe_args).await?;
            let now = Instant::now();
            // An answer that arrives at the deadline is too late, even from a probe that
            // answers without yielding, so the outcome never depends on poll order.
            if now >= deadline {
                return std::future::pending().await;
            }
            if observation.text.len() > MAX_OUTPUT_BYTES {
                return Err(ProbeFailure::OutputTooLarge {
                    bytes: observation.text.len(),
                    limit: MAX_OUTPUT_BYTES,
                });
            }
            self.samples += 1;
            let reason = if observation.is_error {
                self.condition.interrupt();
                None
            } else {
                self.condition.observe(&observation.text, now)
            };
            self.last = Some(observation.text);
            self.last_is_error = observation.is_error;
            if let Some(reason) = reason {
                return Ok(reason);
            }
        }
    }
}

/// A stop condition with the memory it needs: the quiet window remembers the current output
/// and when it was first seen.
enum Condition<'w> {
    Matches(&'w Pattern),
    NotMatches(&'w Pattern),
    Quiet {
        window: std::time::Duration,
        current: Option<(String, Instant)>,
    },
}

impl<'w> Condition<'w> {
    fn new(until: &'w Until) -> Self {
        match until {
            Until::Matches(p) => Condition::Matches(p),
            Until::NotMatches(p) => Condition::NotMatches(p),
            Until::QuietForSec(secs) => Condition::Quiet {
                window: std::time::Duration::from_secs(*secs),
                current: None,
            },
        }
    }

    /// An error sample: it shows no output, so a quiet window in progress ends.
    fn interrupt(&mut self) {
        if let Condition::Quiet { current, .. } = self {
            *current = None;
        }
    }

    /// Feeds one output observed at `now`; returns why to stop, if the condition now holds.
    fn observe(&mut self, output: &str, now: Instant) -> Option<StopReason> {
        match self {
            Condition::Matches(p) => p.is_match(output).then_some(StopReason::Matched),
            Condition::NotMatches(p) => (!p.is_match(output)).then_some(StopReason::Matched),
            Condition::Quiet { window, current } => {
                // The window opens at the first sample showing an output and is measured to
                // each later sample that shows the same output; any change reopens it.
                match current {
                    Some((seen, since)) if seen == output => {
                        (now - *since >= *window).then_some(StopReason::Settled)
                    }
                    _ => {
                        *current = Some((output.to_owned(), now));
                        None
                    }
                }
            }
        }
    }
}
