//! Bounds of the TCP listeners: the accept loop with its connection cap and its back-off when
//! accepting fails, and the idle tracking of a connection's requests.
//!
//! **Cap.** Every accepted connection holds one permit of a semaphore until it ends, TLS
//! handshake included. With none left a new connection is closed at once (a reset): the client
//! learns immediately, and no socket waits in a queue for a slot that idle connections may hold
//! for a full timeout. Waiting briefly instead would only delay that answer.
//!
//! **Back-off.** When `accept` fails for want of resources (file descriptors, memory), the
//! pending connection stays queued and the listener stays readable, so retrying at once spins a
//! core. The loop sleeps instead, 5 ms doubling to 1 s, resetting on the next success, and warns
//! at most every 10 s (descriptors freed one at a time make failures and successes alternate).
//!
//! **Drain.** When the origin drains (`shutdown.rs`) the accept loop returns, closing the
//! listening socket (new connections are refused by the kernel), and each open connection is
//! shut down gracefully (HTTP/2 GOAWAY, HTTP/1.1 `Connection: close` after the request under way):
//! responses under way finish, for as long as the drain's grace period lasts.

use std::future::Future;
use std::net::SocketAddr;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use crate::metrics::Metrics;
use crate::shutdown::Shutdown;

const FIRST_BACKOFF: Duration = Duration::from_millis(5);
const MAX_BACKOFF: Duration = Duration::from_secs(1);
const WARN_EVERY: Duration = Duration::from_secs(10);

/// The delay before the next `accept` after a run of failures, and when to warn of them.
#[derive(Debug, Default)]
pub struct AcceptBackoff {
    delay: Duration,
    unreported: u64,
    last_warning: Option<Instant>,
}

impl AcceptBackoff {
    /// Records a failure; returns how long to sleep.
    pub fn failed(&mut self, error: &std::io::Error) -> Duration {
        self.unreported += 1;
        if self.last_warning.is_none_or(|t| t.elapsed() >= WARN_EVERY) {
            tracing::warn!(failures = self.unreported, "accepting TCP connections failed, backing off up to 1 s: {error}");
            self.last_warning = Some(Instant::now());
            self.unreported = 0;
        }
        self.delay = if self.delay.is_zero() { FIRST_BACKOFF } else { (self.delay * 2).min(MAX_BACKOFF) };
        self.delay
    }

    /// Records a success: the next failure starts from the shortest delay.
    pub fn succeeded(&mut self) {
        self.delay = Duration::ZERO;
    }
}

/// Errors that concern one pending connection only (it went away before we took it): retrying
/// at once is right.
fn is_per_connection(error: &std::io::Error) -> bool {
    use std::io::ErrorKind::*;
    matches!(error.kind(), ConnectionAborted | ConnectionReset | Interrupted | WouldBlock)
}

/// Accepts connections until the origin drains, handing each with its permit to `serve` (which
/// spawns); closes those beyond `max_connections` at once.
pub async fn accept_loop<F>(listener: TcpListener, max_connections: usize, metrics: Arc<Metrics>, shutdown: Arc<Shutdown>, mut serve: F)
where
    F: FnMut(TcpStream, SocketAddr, ConnectionSlot),
{
    let slots = Arc::new(Semaphore::new(max_connections));
    let mut backoff = AcceptBackoff::default();
    loop {
        let accepted = tokio::select! {
            _ = shutdown.draining() => {
                tracing::info!(addr = ?listener.local_addr().ok(), "draining: no longer accepting TCP connections");
                return;
            }
            accepted = listener.accept() => accepted,
        };
        match accepted {
            Ok((tcp, peer)) => {
                backoff.succeeded();
                match Arc::clone(&slots).try_acquire_owned() {
                    Ok(permit) => serve(tcp, peer, ConnectionSlot::new(permit, Arc::clone(&metrics))),
                    Err(_) => {
                        Metrics::inc(&metrics.https_connections_refused_total);
                        // A reset rather than a FIN: no TIME_WAIT on our side, and the client
                        // knows at once that nothing will be answered.
                        let _ = socket2::SockRef::from(&tcp).set_linger(Some(Duration::ZERO));
                        drop(tcp);
                    }
                }
            }
            Err(e) if is_per_connection(&e) => {}
            Err(e) => {
                Metrics::inc(&metrics.https_accept_errors_total);
                tokio::time::sleep(backoff.failed(&e)).await;
            }
        }
    }
}

/// Raises the soft limit of open files to the hard one: each TCP connection takes a descriptor,
/// and Debian's default soft limit (1024) is below the default connection cap. Returns the limit
/// now in force.
pub fn raise_open_file_limit() -> u64 {
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 {
            return 0;
        }
        if limit.rlim_cur < limit.rlim_max {
            let raised = libc::rlimit { rlim_cur: limit.rlim_max, rlim_max: limit.rlim_max };
            if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
                limit = raised;
            }
        }
    }
    limit.rlim_cur
}

/// A connection's place under the cap, given back (and the gauge lowered) when dropped.
pub struct ConnectionSlot {
    _permit: OwnedSemaphorePermit,
    metrics: Arc<Metrics>,
}

impl ConnectionSlot {
    fn new(permit: OwnedSemaphorePermit, metrics: Arc<Metrics>) -> Self {
        metrics.https_connections_active.fetch_add(1, Ordering::Relaxed);
        Self { _permit: permit, metrics }
    }
}

impl Drop for ConnectionSlot {
    fn drop(&mut self) {
        self.metrics.https_connections_active.fetch_sub(1, Ordering::Relaxed);
    }
}

/// Whether a connection has requests in flight, and since when it has had none.
#[derive(Debug)]
pub struct Activity {
    start: Instant,
    in_flight: AtomicUsize,
    /// Milliseconds after `start` when the last request ended.
    idle_since_ms: AtomicU64,
}

impl Default for Activity {
    fn default() -> Self {
        Self { start: Instant::now(), in_flight: AtomicUsize::new(0), idle_since_ms: AtomicU64::new(0) }
    }
}

impl Activity {
    /// Marks a request as in flight until the returned guard (kept by its response body) drops.
    pub fn begin(self: &Arc<Self>) -> RequestGuard {
        self.in_flight.fetch_add(1, Ordering::AcqRel);
        RequestGuard(Arc::clone(self))
    }

    /// When the connection will have been idle for `timeout`, if nothing starts before; None while
    /// a request is in flight.
    pub fn idle_deadline(&self, timeout: Duration) -> Option<Instant> {
        (self.in_flight.load(Ordering::Acquire) == 0).then(|| self.start + Duration::from_millis(self.idle_since_ms.load(Ordering::Acquire)) + timeout)
    }
}

/// Ends a request's flight when dropped.
pub struct RequestGuard(Arc<Activity>);

impl Drop for RequestGuard {
    fn drop(&mut self) {
        let now = self.0.start.elapsed().as_millis() as u64;
        self.0.idle_since_ms.fetch_max(now, Ordering::AcqRel);
        self.0.in_flight.fetch_sub(1, Ordering::AcqRel);
    }
}

/// A response body that keeps its request in flight until hyper has taken its last frame (or
/// dropped it: the client went away).
pub struct TrackedBody<B> {
    inner: B,
    _guard: RequestGuard,
}

impl<B> TrackedBody<B> {
    pub fn new(inner: B, guard: RequestGuard) -> Self {
        Self { inner, _guard: guard }
    }
}

impl<B: Body<Data = Bytes> + Unpin> Body for TrackedBody<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        Pin::new(&mut self.get_mut().inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// How a connection driven by [`close_when_idle`] ended.
pub enum Ended<T> {
    /// By itself (the client closed it, or an error or hyper's own timeout), with this output.
    Finished(T),
    /// Closed for being idle.
    Idle,
    /// Closed because the origin drains.
    Drained,
}

/// Drives `connection` until it ends, starting its graceful shutdown (`shutdown`) once it has
/// had no request in flight for `idle_timeout`, or when the origin drains. What is left then has
/// `grace` to finish after an idle close, and until the drain's deadline (`--drain-grace`) in a
/// drain: a large response to a slow client may need all of it, and the drain promises it.
pub async fn close_when_idle<C, S>(
    connection: C,
    activity: &Activity,
    idle_timeout: Duration,
    grace: Duration,
    origin: &Shutdown,
    shutdown: S,
) -> Ended<C::Output>
where
    C: Future,
    S: FnOnce(Pin<&mut C>),
{
    let mut connection = std::pin::pin!(connection);
    let mut ended = Ended::Idle;
    loop {
        // While a request is in flight, look again after a full timeout (a request that ends
        // before then sets the next deadline from its end).
        let deadline = activity.idle_deadline(idle_timeout).unwrap_or_else(|| Instant::now() + idle_timeout);
        tokio::select! {
            output = connection.as_mut() => return Ended::Finished(output),
            _ = origin.draining() => {
                ended = Ended::Drained;
                break;
            }
            _ = tokio::time::sleep_until(deadline.into()) => {
                if activity.idle_deadline(idle_timeout).is_some_and(|d| d <= Instant::now()) {
                    break;
                }
            }
        }
    }
    shutdown(connection.as_mut());
    let left = match (&ended, origin.drain_deadline()) {
        (Ended::Drained, Some(deadline)) => deadline.saturating_duration_since(Instant::now()),
        _ => grace,
    };
    let _ = tokio::time::timeout(left, connection).await;
    ended
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_to_a_second_and_resets_on_success() {
        let mut backoff = AcceptBackoff::default();
        let emfile = std::io::Error::from_raw_os_error(libc::EMFILE);
        let delays: Vec<_> = (0..12).map(|_| backoff.failed(&emfile)).collect();
        assert_eq!(delays[0], FIRST_BACKOFF);
        assert!(delays.windows(2).all(|w| w[1] >= w[0]));
        assert_eq!(*delays.last().unwrap(), MAX_BACKOFF);
        backoff.succeeded();
        assert_eq!(backoff.failed(&emfile), FIRST_BACKOFF);
        assert!(is_per_connection(&std::io::Error::from_raw_os_error(libc::ECONNABORTED)));
        assert!(!is_per_connection(&emfile));
        assert!(!is_per_connection(&std::io::Error::from_raw_os_error(libc::ENFILE)));
    }

    #[test]
    fn idle_deadline_counts_from_the_last_request_and_pauses_while_one_is_in_flight() {
        let activity = Arc::new(Activity::default());
        let t = Duration::from_secs(5);
        assert_eq!(activity.idle_deadline(t), Some(activity.start + t));
        let a = activity.begin();
        let b = activity.begin();
        assert_eq!(activity.idle_deadline(t), None);
        drop(a);
        assert_eq!(activity.idle_deadline(t), None, "b is still in flight");
        std::thread::sleep(Duration::from_millis(20));
        drop(b);
        assert!(activity.idle_deadline(t).unwrap() >= activity.start + Duration::from_millis(20) + t);
    }
}
