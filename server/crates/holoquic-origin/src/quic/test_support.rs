//! What the QUIC tests share: the QUIC loop on a UDP socket of 127.0.0.1 (removed with its
//! folder when dropped), and the bytes a browser sends to open a WebTransport session.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

use holoquic_proto::h3::{frame_type, stream_type, Frame, Settings};
use holoquic_proto::varint::put;
use quiche::h3::qpack;
use quiche::h3::Header;

use super::{spawn_on, QuicContext};
use crate::config::Config;
use crate::content::ContentStore;
use crate::metrics::Metrics;
use crate::shutdown::Shutdown;
use crate::tls::CertStore;

/// The origin's QUIC loop on its own thread, serving `content`.
pub struct LoopOrigin {
    dir: PathBuf,
    pub addr: SocketAddr,
    pub metrics: Arc<Metrics>,
    pub shutdown: Arc<Shutdown>,
    /// Its generated certificate, which a test may rotate.
    pub certs: Arc<CertStore>,
    /// How long the loop's rounds take.
    pub rounds: Arc<RoundStats>,
    thread: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
}

impl LoopOrigin {
    /// Serves `dir/content` on 127.0.0.1 with `flags` added to the command line; `dir` (with its
    /// generated certificate) is removed on drop.
    pub fn start(dir: PathBuf, flags: &[&str]) -> Self {
        Self::start_with_receive_buffer(dir, flags, None)
    }

    /// The same, with the socket's receive buffer set to `bytes` when given (see
    /// `enlarge_receive_buffer`).
    pub fn start_with_receive_buffer(dir: PathBuf, flags: &[&str], bytes: Option<libc::c_int>) -> Self {
        let content = dir.join("content");
        std::fs::create_dir_all(&content).unwrap();
        let mut args = vec!["x", "--content", content.to_str().unwrap(), "--listen", "127.0.0.1:0"];
        args.extend_from_slice(flags);
        let config = Arc::new(Config::parse_from(args).unwrap());
        let metrics = Arc::new(Metrics::default());
        let certs = Arc::new(CertStore::generate(&dir.join("tls"), &[]).unwrap());
        let store = Arc::new(ContentStore::open(&content, config.limits.max_object_bytes).unwrap());
        let ctx = QuicContext::new(config, Arc::clone(&certs), store, Arc::clone(&metrics), None).unwrap();
        let shutdown = Arc::new(Shutdown::default());
        let rounds = Arc::clone(&ctx.rounds);
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        if let Some(bytes) = bytes {
            enlarge_receive_buffer(&socket, bytes);
        }
        let (addr, thread) = spawn_on(ctx, socket, Arc::clone(&shutdown)).unwrap();
        Self { dir, addr, metrics, shutdown, certs, rounds, thread: Some(thread) }
    }

    /// The loop's thread is still running (it ends only when dropped, or on a panic of the loop).
    pub fn loop_running(&self) -> bool {
        self.thread.as_ref().is_some_and(|t| !t.is_finished())
    }

    pub fn count(&self, metric: impl Fn(&Metrics) -> &AtomicU64) -> u64 {
        metric(&self.metrics).load(Ordering::Relaxed)
    }
}

impl Drop for LoopOrigin {
    fn drop(&mut self) {
        self.shutdown.stop_now();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// Sets the socket's receive buffer to `bytes`: beyond `net.core.rmem_max` where the process may
/// (`SO_RCVBUFFORCE`, with CAP_NET_ADMIN), else as far as that limit allows.
fn enlarge_receive_buffer(socket: &std::net::UdpSocket, bytes: libc::c_int) {
    use std::os::fd::AsRawFd;
    for option in [libc::SO_RCVBUFFORCE, libc::SO_RCVBUF] {
        // SAFETY: valid fd, pointer to a c_int of the given length.
        let r = unsafe {
            libc::setsockopt(
                socket.as_raw_fd(),
                libc::SOL_SOCKET,
                option,
                (&bytes as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        };
        if r == 0 {
            return;
        }
    }
}

/// A fresh folder for one test's origin, under the temporary directory.
pub fn test_dir(kind: &str) -> PathBuf {
    std::env::temp_dir().join(format!("holoquic-{kind}-{}-{}", std::process::id(), rand::random::<u64>()))
}

/// The client's control stream as a browser opens it: SETTINGS enabling extended CONNECT and
/// WebTransport.
pub fn control_stream() -> Vec<u8> {
    let mut out = Vec::new();
    put(&mut out, stream_type::CONTROL);
    Settings(vec![(0x33, 1), (0x2b603742, 1)]).encode_frame(&mut out);
    out
}

/// A HEADERS frame holding `headers`, QPACK-encoded without dynamic table.
pub fn headers_frame(headers: &[Header]) -> Vec<u8> {
    let mut block = vec![0u8; 1024];
    let n = qpack::Encoder::new().encode(headers, &mut block).unwrap();
    let mut out = Vec::new();
    Frame::encode(frame_type::HEADERS, &block[..n], &mut out);
    out
}

/// The HEADERS frame of a request as a browser's WebTransport CONNECT, with `method` and `path`.
pub fn connect(method: &str, path: &str) -> Vec<u8> {
    headers_frame(&[
        Header::new(b":method", method.as_bytes()),
        Header::new(b":protocol", b"webtransport"),
        Header::new(b":scheme", b"https"),
        Header::new(b":authority", b"localhost"),
        Header::new(b":path", path.as_bytes()),
        Header::new(b"origin", b"https://localhost"),
    ])
}

/// What the isolation tests measure of the loop's rounds (one round: read up to the receive
/// budget, run timers and the connections' work, send): the longest wall-clock gap between two
/// runs of the timers, which a flood read without a budget stretches, and the longest CPU time of
/// one round on the loop's thread, which work done inline (an encoder build) stretches while the
/// machine's load, which delays the thread but gives it no CPU time, does not.
///
/// A test can also hold the loop at the start of its next round (`pause`), as a busy or
/// descheduled loop is held, to let a flood pile up in the socket's buffer.
#[derive(Debug, Default)]
pub struct RoundStats {
    inner: std::sync::Mutex<RoundInner>,
    gate: std::sync::Mutex<()>,
}

#[derive(Debug, Default)]
struct RoundInner {
    last_timers: Option<std::time::Instant>,
    longest_gap: std::time::Duration,
    longest_cpu: std::time::Duration,
    /// Datagrams read since the timers last ran, and the most between two runs.
    read_since_timers: usize,
    most_read_between_timers: usize,
    read_total: usize,
}

impl RoundStats {
    /// The loop starts a round (waiting while a test holds it paused): its thread's CPU time so
    /// far.
    pub fn begin(&self) -> std::time::Duration {
        drop(self.gate.lock());
        thread_cpu_time()
    }

    /// Holds the loop at the start of its next round until the guard is dropped.
    pub fn pause(&self) -> std::sync::MutexGuard<'_, ()> {
        self.gate.lock().unwrap()
    }

    /// The loop read a datagram from its socket.
    pub fn datagram_read(&self) {
        let mut inner = self.inner.lock().unwrap();
        inner.read_since_timers += 1;
        inner.read_total += 1;
    }

    /// The loop runs its timers now.
    pub fn timers_ran(&self, now: std::time::Instant) {
        let mut inner = self.inner.lock().unwrap();
        if let Some(last) = inner.last_timers {
            inner.longest_gap = inner.longest_gap.max(now.saturating_duration_since(last));
        }
        inner.last_timers = Some(now);
        inner.most_read_between_timers = inner.most_read_between_timers.max(inner.read_since_timers);
        inner.read_since_timers = 0;
    }

    /// The round begun at `begin` ends.
    pub fn end(&self, begin: std::time::Duration) {
        let cpu = thread_cpu_time().saturating_sub(begin);
        let mut inner = self.inner.lock().unwrap();
        inner.longest_cpu = inner.longest_cpu.max(cpu);
    }

    /// Forgets what was measured: the next figures cover only what follows.
    pub fn reset(&self) {
        *self.inner.lock().unwrap() = RoundInner::default();
    }

    /// The longest gap between two runs of the timers, and the longest CPU time of a round,
    /// since the last reset.
    pub fn longest(&self) -> (std::time::Duration, std::time::Duration) {
        let inner = self.inner.lock().unwrap();
        (inner.longest_gap, inner.longest_cpu)
    }

    /// The most datagrams read between two runs of the timers, and all read, since the last
    /// reset.
    pub fn datagrams(&self) -> (usize, usize) {
        let inner = self.inner.lock().unwrap();
        (inner.most_read_between_timers, inner.read_total)
    }
}

/// CPU time the calling thread has used.
fn thread_cpu_time() -> std::time::Duration {
    let mut t = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: a valid timespec to fill; the clock exists on Linux.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut t) };
    std::time::Duration::new(t.tv_sec as u64, t.tv_nsec as u32)
}
