//! The runtime's log: every line goes to `tracing` (the CLI writes it to stderr) and into a
//! bounded in-memory ring that the API and the conformance `log` operation read. The ring keeps
//! the newest [`LOG_RING_LINES`] lines, so a flood of refused deliveries cannot grow memory.

use std::collections::VecDeque;
use std::sync::Mutex;

/// How many lines the ring keeps.
pub const LOG_RING_LINES: usize = 1000;

/// The newest log lines, at most a fixed number.
#[derive(Debug)]
pub struct LogRing {
    lines: Mutex<VecDeque<String>>,
    capacity: usize,
    dropped: std::sync::atomic::AtomicU64,
}

impl Default for LogRing {
    fn default() -> Self {
        Self::with_capacity(LOG_RING_LINES)
    }
}

impl LogRing {
    /// A ring that keeps the newest `capacity` lines.
    pub fn with_capacity(capacity: usize) -> Self {
        Self {
            lines: Mutex::new(VecDeque::with_capacity(capacity.min(LOG_RING_LINES))),
            capacity: capacity.max(1),
            dropped: std::sync::atomic::AtomicU64::new(0),
        }
    }

    /// Records a line: to `tracing` at `warn` (what the edge refused or skipped is worth an
    /// operator's eye) and into the ring, dropping the oldest line when it is full.
    pub fn push(&self, line: String) {
        tracing::warn!(target: "ozcheck_runtime", "{line}");
        let mut lines = self
            .lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        if lines.len() == self.capacity {
            lines.pop_front();
            self.dropped
                .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        }
        lines.push_back(line);
    }

    /// The lines kept, oldest first.
    pub fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
            .iter()
            .cloned()
            .collect()
    }

    /// How many lines were dropped to keep the ring bounded.
    pub fn dropped(&self) -> u64 {
        self.dropped.load(std::sync::atomic::Ordering::Relaxed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_ring_keeps_the_newest_lines() {
        let ring = LogRing::with_capacity(3);
        for i in 0..10 {
            ring.push(format!("line {i}"));
        }
        assert_eq!(ring.lines(), ["line 7", "line 8", "line 9"]);
        assert_eq!(ring.dropped(), 7);
    }
}
