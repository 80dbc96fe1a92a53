//! Lock-free per-direction counters, readable while the relay runs.

use std::sync::atomic::{AtomicU64, Ordering::Relaxed};

use serde::Serialize;

#[derive(Debug, Default)]
pub struct DirectionStats {
    seen: AtomicU64,
    seen_bytes: AtomicU64,
    dropped_loss: AtomicU64,
    dropped_queue: AtomicU64,
    delayed: AtomicU64,
}

/// A point-in-time copy of [`DirectionStats`], serialised into the JSON report.
#[derive(Debug, Clone, Copy, Default, Serialize, PartialEq, Eq)]
pub struct DirectionSnapshot {
    pub seen: u64,
    pub seen_bytes: u64,
    pub dropped_loss: u64,
    pub dropped_queue: u64,
    pub delayed: u64,
}

impl DirectionStats {
    pub fn seen(&self, len: usize) {
        self.seen.fetch_add(1, Relaxed);
        self.seen_bytes.fetch_add(len as u64, Relaxed);
    }
    pub fn lost(&self) {
        self.dropped_loss.fetch_add(1, Relaxed);
    }
    pub fn queue_full(&self) {
        self.dropped_queue.fetch_add(1, Relaxed);
    }
    pub fn delayed(&self) {
        self.delayed.fetch_add(1, Relaxed);
    }
    pub fn snapshot(&self) -> DirectionSnapshot {
        DirectionSnapshot {
            seen: self.seen.load(Relaxed),
            seen_bytes: self.seen_bytes.load(Relaxed),
            dropped_loss: self.dropped_loss.load(Relaxed),
            dropped_queue: self.dropped_queue.load(Relaxed),
            delayed: self.delayed.load(Relaxed),
        }
    }
}

/// Counters for both directions of the relay.
#[derive(Debug, Default)]
pub struct RelayStats {
    pub to_upstream: DirectionStats,
    pub to_client: DirectionStats,
}

#[derive(Debug, Clone, Copy, Serialize)]
pub struct RelaySnapshot {
    pub to_upstream: DirectionSnapshot,
    pub to_client: DirectionSnapshot,
    pub clients: usize,
}
