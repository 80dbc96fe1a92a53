//! How the origin stops: a graceful drain, then (or at once, on a second signal) the end. The
//! first SIGTERM or SIGINT begins the drain (`main.rs`): the listeners stop accepting, in-flight
//! objects finish, and the QUIC loop closes each WebTransport session with its close capsule and
//! each connection, by the end of the grace period (`--drain-grace`) at the latest. A second
//! signal stops everything at once. One [`Shutdown`] is shared by the QUIC thread (which polls
//! it every round) and the tokio listeners (which await [`Shutdown::draining`]).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

#[derive(Debug, Default)]
pub struct Shutdown {
    /// When the drain must end, once it has begun.
    drain_deadline: Mutex<Option<Instant>>,
    draining: AtomicBool,
    stop_now: AtomicBool,
    begun: tokio::sync::Notify,
}

impl Shutdown {
    /// Begins the drain, which must be over within `grace` (a second call changes nothing).
    pub fn begin_drain(&self, grace: Duration) {
        if let Ok(mut deadline) = self.drain_deadline.lock() {
            deadline.get_or_insert(Instant::now() + grace);
        }
        self.draining.store(true, Ordering::Release);
        self.begun.notify_waiters();
    }

    /// Ends the drain at once (a second signal, or a test's origin dropped).
    pub fn stop_now(&self) {
        self.stop_now.store(true, Ordering::Release);
        self.draining.store(true, Ordering::Release);
        self.begun.notify_waiters();
    }

    pub fn is_draining(&self) -> bool {
        self.draining.load(Ordering::Acquire)
    }

    /// Whether everything must stop now: told to, or the drain's grace period is over.
    pub fn must_stop(&self) -> bool {
        self.stop_now.load(Ordering::Acquire) || self.drain_deadline().is_some_and(|d| Instant::now() >= d)
    }

    /// When the drain must end (None before it began).
    pub fn drain_deadline(&self) -> Option<Instant> {
        self.drain_deadline.lock().ok().and_then(|d| *d)
    }

    /// Resolves once the drain has begun (at once if it already has).
    pub async fn draining(&self) {
        let begun = self.begun.notified();
        if self.is_draining() {
            return;
        }
        begun.await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_drain_wakes_its_waiters_and_ends_at_its_deadline_or_when_stopped() {
        let shutdown = std::sync::Arc::new(Shutdown::default());
        assert!(!shutdown.is_draining() && !shutdown.must_stop());
        let waiter = tokio::spawn({
            let shutdown = std::sync::Arc::clone(&shutdown);
            async move { shutdown.draining().await }
        });
        tokio::task::yield_now().await;
        shutdown.begin_drain(Duration::from_millis(50));
        tokio::time::timeout(Duration::from_secs(5), waiter).await.unwrap().unwrap();
        tokio::time::timeout(Duration::from_secs(1), shutdown.draining()).await.expect("a late waiter returns at once");
        assert!(shutdown.is_draining() && !shutdown.must_stop(), "within the grace period");
        let deadline = shutdown.drain_deadline().unwrap();
        shutdown.begin_drain(Duration::from_secs(60));
        assert_eq!(shutdown.drain_deadline(), Some(deadline), "a second drain keeps the first deadline");
        std::thread::sleep(Duration::from_millis(60));
        assert!(shutdown.must_stop(), "the grace period is over");
        let other = Shutdown::default();
        other.stop_now();
        assert!(other.must_stop() && other.is_draining());
    }
}
