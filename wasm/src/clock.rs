//! The meter's clock on a JavaScript host: `performance.now()` (browsers, Node 16 and later,
//! Deno, Workers), since `std::time::Instant` panics on `wasm32-unknown-unknown`.

use std::time::Duration;

use ozcheck_analyzer::eval::Clock;
use wasm_bindgen::prelude::*;

#[wasm_bindgen]
extern "C" {
    /// The host's monotonic clock in milliseconds, with sub-millisecond fractions.
    #[wasm_bindgen(js_namespace = performance, js_name = now)]
    fn performance_now() -> f64;
}

/// A monotonic clock whose origin is its creation, read from the host.
#[derive(Clone, Copy, Debug)]
pub struct HostClock {
    origin_ms: f64,
}

impl HostClock {
    /// A clock whose origin is now.
    pub fn new() -> Self {
        Self {
            origin_ms: performance_now(),
        }
    }

    /// Microseconds since the origin (the `elapsed_us` of an evaluation).
    pub fn now_micros(self) -> u64 {
        self.now().as_micros() as u64
    }
}

impl Clock for HostClock {
    fn now(&self) -> Duration {
        // `performance.now()` never goes back, but a host may coarsen it; clamp at zero anyway so
        // a NaN or a negative difference cannot make `Duration` panic.
        let ms = performance_now() - self.origin_ms;
        if ms.is_finite() && ms > 0.0 {
            Duration::from_secs_f64(ms / 1000.0)
        } else {
            Duration::ZERO
        }
    }
}
