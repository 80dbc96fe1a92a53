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

use super::{spawn, QuicContext};
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
    thread: Option<std::thread::JoinHandle<anyhow::Result<()>>>,
}

impl LoopOrigin {
    /// Serves `dir/content` on 127.0.0.1 with `flags` added to the command line; `dir` (with its
    /// generated certificate) is removed on drop.
    pub fn start(dir: PathBuf, flags: &[&str]) -> Self {
        let content = dir.join("content");
        std::fs::create_dir_all(&content).unwrap();
        let mut args = vec!["x", "--content", content.to_str().unwrap(), "--listen", "127.0.0.1:0"];
        args.extend_from_slice(flags);
        let config = Arc::new(Config::parse_from(args).unwrap());
        let metrics = Arc::new(Metrics::default());
        let certs = Arc::new(CertStore::generate(&dir.join("tls"), &[]).unwrap());
        let store = Arc::new(ContentStore::open(&content, config.limits.max_object_bytes).unwrap());
        let ctx = QuicContext::new(config, certs, store, Arc::clone(&metrics), None).unwrap();
        let shutdown = Arc::new(Shutdown::default());
        let (addr, thread) = spawn(ctx, Arc::clone(&shutdown)).unwrap();
        Self { dir, addr, metrics, shutdown, thread: Some(thread) }
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
