//! The TCP side: HTTPS (HTTP/2 and HTTP/1.1 over TLS) on the QUIC port number, and an optional
//! plain HTTP/1.1 listener for local use. Serves the web app, manifests and segments (the `h2`
//! baseline and the fallback when WebTransport is missing), `/cert-hash`, `/config.json` and
//! `/healthz` as `web.rs` defines them (HTTP/3 serves the same), writing an access-log line per
//! request. (`/metrics` is on the admin listener.)
//!
//! Every connection is bounded (docs/origin.md, "What it refuses"): a cap per listener and
//! back-off when accepting fails (`listener.rs`), a TLS-handshake timeout, hyper's header-read
//! timeout (it needs a timer), an idle timeout, and HTTP/2 keepalive and stream limits.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body as _, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo, TokioTimer};
use tokio::net::TcpListener;

use crate::access_log::{self, HttpRequest};
use crate::config::Config;
use crate::content::ContentStore;
use crate::listener::{accept_loop, close_when_idle, Activity, Ended, TrackedBody};
use crate::metrics::Metrics;
use crate::shutdown::Shutdown;
use crate::tls::CertStore;
use crate::web::{self, Site, WebRequest, WebResponse};
use crate::webfiles::WebFiles;

/// What the handlers share.
pub struct HttpContext {
    pub config: Arc<Config>,
    pub certs: Arc<CertStore>,
    pub content: Arc<ContentStore>,
    pub metrics: Arc<Metrics>,
    /// The UDP port QUIC listens on (for Alt-Svc and /config.json).
    pub quic_port: u16,
    /// The web app (`--web`), shared with HTTP/3.
    pub web: Option<Arc<WebFiles>>,
    /// The origin's drain: the listeners stop accepting and close their connections gracefully.
    pub shutdown: Arc<Shutdown>,
}

type Body = Full<Bytes>;

/// Unsent bytes the kernel may hold per HTTPS connection.
///
/// HTTP/2 multiplexes every response on one TCP stream, and whatever already sits in the socket's
/// send buffer goes out before anything written later. Linux autotunes that buffer to megabytes,
/// so a response the player cancelled (RST_STREAM, giving a segment up for a lower quality) kept
/// arriving ahead of the request that replaced it: in the QoE matrix at `ae77b98` a replacement's
/// first byte came 1.3 s after its request (median; QUIC modes: 0.02–0.2 s), and 16 of 18 were
/// late. With the unsent part kept this small, HTTP/2 decides what goes next; what remains ahead
/// of a replacement is what is already in flight. The cost is more wake-ups of the writer.
const TCP_UNSENT_LIMIT: u32 = 32 * 1024;

/// Socket options of an accepted HTTPS connection: [`TCP_UNSENT_LIMIT`], no Nagle delay (a
/// response's last partial segment would otherwise wait for the ACK of the previous one), linear
/// retransmission timeouts while few packets are in flight, and the configured congestion control.
///
/// Linear timeouts (`TCP_THIN_LINEAR_TIMEOUTS`): a connection with under four packets in flight
/// retransmits after one RTO each time, for its first six timeouts, instead of doubling the wait
/// (0.2, 0.4, 0.8 … s). A player's connection is thin exactly when it hurts: everything else waits
/// for one lost packet, and over HTTP/2 every response waits behind it. In the QoE runs at 5 %
/// bursty loss `h2` timed out 11–43 times a run and froze for the backoff (docs/results.md).
///
/// Congestion control: the kernel's default (CUBIC) halves its window at every loss, random or
/// not; BBR paces at the measured bottleneck rate, as the QUIC side's BBR2 does.
///
/// A smaller minimum retransmission timeout (`TCP_RTO_MIN_US`) shortens every timeout on a path
/// of a few tens of milliseconds, where the kernel's 200-ms floor dominates.
fn configure_accepted(tcp: &tokio::net::TcpStream, sending: &TcpSending) -> std::io::Result<()> {
    tcp.set_nodelay(true)?;
    let socket = socket2::SockRef::from(tcp);
    socket.set_tcp_notsent_lowat(TCP_UNSENT_LIMIT)?;
    socket.set_tcp_thin_linear_timeouts(sending.thin_timeouts)?;
    if !sending.congestion.is_empty() {
        socket.set_tcp_congestion(sending.congestion.as_bytes())?;
    }
    if let Some(rto_min) = sending.rto_min {
        set_rto_min(&socket, rto_min)?;
    }
    Ok(())
}

/// How accepted connections send: the configured options the kernel accepts ([`TcpSending::usable`]).
#[derive(Debug, Clone, Default)]
struct TcpSending {
    /// Empty: the kernel's default.
    congestion: String,
    thin_timeouts: bool,
    rto_min: Option<Duration>,
}

impl TcpSending {
    /// The configuration's options, less those this kernel refuses (a congestion control not
    /// offered, `TCP_RTO_MIN_US` before Linux 6.15): one warning each here, not one per connection.
    fn usable(https: &crate::config::HttpsLimits) -> Self {
        let rto_min = https.tcp_rto_min.filter(|&d| {
            let tried = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).and_then(|s| set_rto_min(&socket2::SockRef::from(&s), d));
            if let Err(e) = &tried {
                tracing::warn!("HTTPS connections keep the kernel's smallest retransmission timeout: {d:?} refused ({e})");
            }
            tried.is_ok()
        });
        Self { congestion: usable_congestion(&https.tcp_congestion), thin_timeouts: https.tcp_thin_timeouts, rto_min }
    }
}

/// `TCP_RTO_MIN_US` of Linux 6.15 (include/uapi/linux/tcp.h), not yet in the libc crate.
const TCP_RTO_MIN_US: libc::c_int = 45;

fn set_rto_min(socket: &socket2::SockRef<'_>, rto_min: Duration) -> std::io::Result<()> {
    use std::os::fd::AsRawFd;
    let micros = libc::c_int::try_from(rto_min.as_micros()).unwrap_or(libc::c_int::MAX);
    // SAFETY: a valid socket descriptor, and an int option value of the size passed.
    let rc = unsafe {
        libc::setsockopt(
            socket.as_raw_fd(),
            libc::IPPROTO_TCP,
            TCP_RTO_MIN_US,
            (&micros as *const libc::c_int).cast(),
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// `wanted` if the kernel lets this process set it (a module not loaded, or a name unknown, is
/// refused), else empty — the system's default — with one warning rather than one per connection.
fn usable_congestion(wanted: &str) -> String {
    if wanted.is_empty() {
        return String::new();
    }
    let tried = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).and_then(|s| s.set_tcp_congestion(wanted.as_bytes()));
    match tried {
        Ok(()) => wanted.to_owned(),
        Err(e) => {
            tracing::warn!("HTTPS connections keep the kernel's default congestion control: {wanted:?} refused ({e})");
            String::new()
        }
    }
}

/// How long an idle connection's graceful close (HTTP/2 GOAWAY) may take before it is dropped
/// (a drain gives connections its own grace period instead).
const CLOSE_GRACE: Duration = Duration::from_secs(5);

/// Binds the HTTPS listener; returns its address and the accept loop to spawn.
pub async fn bind_https(ctx: Arc<HttpContext>, addr: SocketAddr) -> Result<(SocketAddr, impl std::future::Future<Output = ()>)> {
    let listener = TcpListener::bind(addr).await.with_context(|| format!("binding TCP {addr}"))?;
    serve_https(ctx, listener)
}

/// The HTTPS accept loop on `listener` (already bound); returns its address and the loop to spawn.
pub fn serve_https(ctx: Arc<HttpContext>, listener: TcpListener) -> Result<(SocketAddr, impl std::future::Future<Output = ()>)> {
    let local = listener.local_addr()?;
    let acceptor = tokio_rustls::TlsAcceptor::from(ctx.certs.rustls_config()?);
    let (max_connections, metrics, shutdown) = (ctx.config.https.max_connections, Arc::clone(&ctx.metrics), Arc::clone(&ctx.shutdown));
    let sending = TcpSending::usable(&ctx.config.https);
    let serve = accept_loop(listener, max_connections, metrics, shutdown, move |tcp, peer, slot| {
        if let Err(e) = configure_accepted(&tcp, &sending) {
            tracing::warn!(%peer, "cannot set the socket options of an HTTPS connection: {e}");
        }
        let (ctx, acceptor) = (Arc::clone(&ctx), acceptor.clone());
        tokio::spawn(async move {
            let _slot = slot;
            let tls = match tokio::time::timeout(ctx.config.https.handshake_timeout, acceptor.accept(tcp)).await {
                Ok(Ok(tls)) => tls,
                Ok(Err(e)) => return tracing::debug!(%peer, "TLS handshake failed: {e}"),
                Err(_) => {
                    Metrics::inc(&ctx.metrics.https_timeouts_total);
                    return tracing::debug!(%peer, "TLS handshake timed out");
                }
            };
            serve_connection(ctx, TokioIo::new(tls), peer, true).await;
        });
    });
    Ok((local, serve))
}

/// Binds the plain HTTP/1.1 listener (local use: `http://127.0.0.1` is a secure context).
pub async fn bind_http(ctx: Arc<HttpContext>, addr: SocketAddr) -> Result<(SocketAddr, impl std::future::Future<Output = ()>)> {
    let listener = TcpListener::bind(addr).await.with_context(|| format!("binding TCP {addr}"))?;
    let local = listener.local_addr()?;
    let (max_connections, metrics, shutdown) = (ctx.config.https.max_connections, Arc::clone(&ctx.metrics), Arc::clone(&ctx.shutdown));
    let serve = accept_loop(listener, max_connections, metrics, shutdown, move |tcp, peer, slot| {
        let ctx = Arc::clone(&ctx);
        tokio::spawn(async move {
            let _slot = slot;
            serve_connection(ctx, TokioIo::new(tcp), peer, false).await
        });
    });
    Ok((local, serve))
}

async fn serve_connection<I>(ctx: Arc<HttpContext>, io: I, peer: SocketAddr, secure: bool)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let limits = ctx.config.https.clone();
    let (metrics, origin) = (Arc::clone(&ctx.metrics), Arc::clone(&ctx.shutdown));
    let activity = Arc::new(Activity::default());
    let requests = Arc::clone(&activity);
    let service = hyper::service::service_fn(move |req| {
        let ctx = Arc::clone(&ctx);
        let in_flight = requests.begin();
        // `handle` reads files (canonicalize, metadata, whole objects) synchronously: on the
        // blocking pool, so a slow disk or a large file never holds one of the two runtime
        // workers that every other connection needs.
        async move {
            let (started, method, path, version) = (Instant::now(), req.method().clone(), req.uri().path().to_owned(), req.version());
            let response = tokio::task::spawn_blocking(move || handle(&ctx, req, secure)).await;
            let response = response.unwrap_or_else(|_| text(StatusCode::INTERNAL_SERVER_ERROR, "internal error\n"));
            let (status, bytes, transport) =
                (response.status().as_u16(), response.body().size_hint().exact().unwrap_or(0), access_log::http_transport(version, secure));
            access_log::http_request(&HttpRequest {
                method: method.as_str(),
                path: &path,
                status,
                bytes,
                duration: started.elapsed(),
                peer: Some(peer),
                transport,
            });
            Ok::<_, Infallible>(response.map(|body| TrackedBody::new(body, in_flight)))
        }
    });
    let mut builder = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new());
    // Without a timer hyper enforces none of its timeouts.
    builder.http1().timer(TokioTimer::new()).header_read_timeout(limits.header_timeout);
    builder
        .http2()
        .timer(TokioTimer::new())
        .keep_alive_interval(limits.keepalive_interval)
        .keep_alive_timeout(limits.keepalive_timeout)
        .max_concurrent_streams(limits.max_streams);
    let connection = builder.serve_connection(io, service);
    match close_when_idle(connection, &activity, limits.idle_timeout, CLOSE_GRACE, &origin, |c| c.graceful_shutdown()).await {
        Ended::Finished(Ok(())) => {}
        Ended::Drained => tracing::debug!("HTTP connection closed: the origin drains"),
        Ended::Finished(Err(e)) => {
            if e.downcast_ref::<hyper::Error>().is_some_and(hyper::Error::is_timeout) {
                Metrics::inc(&metrics.https_timeouts_total);
            }
            tracing::debug!("HTTP connection ended: {e}");
        }
        Ended::Idle => {
            Metrics::inc(&metrics.https_timeouts_total);
            tracing::debug!("HTTP connection closed after {:?} idle", limits.idle_timeout);
        }
    }
}

fn text(status: StatusCode, body: &str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_owned())));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r
}

/// Answers one request as `web.rs` says. Never panics on any input.
pub fn handle(ctx: &HttpContext, req: Request<Incoming>, secure: bool) -> Response<Body> {
    Metrics::inc(&ctx.metrics.https_requests_total);
    let site = Site { config: &ctx.config, certs: &ctx.certs, content: &ctx.content, web: ctx.web.as_deref(), quic_port: ctx.quic_port };
    // HTTP/2 names the authority in the request target, HTTP/1.1 in the Host header.
    let authority = match req.uri().authority() {
        Some(authority) => Some(authority.as_str()),
        // A Host header that is not visible ASCII is no authority: "" makes /config.json refuse it.
        None => req.headers().get(header::HOST).map(|v| v.to_str().unwrap_or("")),
    };
    let request = WebRequest {
        method: req.method().as_str(),
        target: req.uri().path(),
        authority,
        range: req.headers().get(header::RANGE).and_then(|v| v.to_str().ok()),
        if_none_match: req.headers().get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()),
        alt_svc: secure,
    };
    to_hyper(web::respond(&site, &request))
}

/// A `web.rs` answer as a hyper response.
fn to_hyper(answer: WebResponse) -> Response<Body> {
    let mut r = Response::new(Full::new(answer.body));
    *r.status_mut() = StatusCode::from_u16(answer.status).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    for (name, value) in answer.headers {
        if let Ok(value) = HeaderValue::from_str(&value) {
            r.headers_mut().insert(name, value);
        }
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn accepted_connections_keep_little_unsent_data_and_no_nagle_delay() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = tokio::net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        let before = socket2::SockRef::from(&accepted).tcp_notsent_lowat().unwrap();
        assert_ne!(before, TCP_UNSENT_LIMIT, "the default must differ, or this test proves nothing");
        assert!(!socket2::SockRef::from(&accepted).tcp_thin_linear_timeouts().unwrap(), "off by default, or this test proves nothing");
        configure_accepted(&accepted, &TcpSending { thin_timeouts: true, ..TcpSending::default() }).unwrap();
        assert_eq!(socket2::SockRef::from(&accepted).tcp_notsent_lowat().unwrap(), TCP_UNSENT_LIMIT);
        assert!(accepted.nodelay().unwrap());
        assert!(socket2::SockRef::from(&accepted).tcp_thin_linear_timeouts().unwrap());
        drop(client);
    }

    #[tokio::test]
    async fn accepted_connections_take_the_configured_congestion_control_if_the_kernel_offers_it() {
        // Reno is built into every Linux kernel; the name below into none.
        assert_eq!(usable_congestion("reno"), "reno");
        assert_eq!(usable_congestion("no-such-controller"), "");
        assert_eq!(usable_congestion(""), "");
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = tokio::net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        configure_accepted(&accepted, &TcpSending { congestion: "reno".into(), ..TcpSending::default() }).unwrap();
        let name = socket2::SockRef::from(&accepted).tcp_congestion().unwrap();
        assert_eq!(name.split(|&b| b == 0).next().unwrap(), b"reno");
        drop(client);
    }

    #[tokio::test]
    async fn accepted_connections_take_the_configured_smallest_retransmission_timeout() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = tokio::net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        let rto_min_us = |tcp: &tokio::net::TcpStream| {
            use std::os::fd::AsRawFd;
            let (mut value, mut len): (libc::c_int, libc::socklen_t) = (0, std::mem::size_of::<libc::c_int>() as libc::socklen_t);
            // SAFETY: a valid socket descriptor, and an int buffer of the size passed.
            let rc = unsafe { libc::getsockopt(tcp.as_raw_fd(), libc::IPPROTO_TCP, TCP_RTO_MIN_US, (&mut value as *mut libc::c_int).cast(), &mut len) };
            (rc == 0).then_some(value)
        };
        let Some(before) = rto_min_us(&accepted) else {
            return eprintln!("this kernel has no TCP_RTO_MIN_US (Linux < 6.15): nothing to check");
        };
        assert!(before >= 200_000, "the kernel's floor is 200 ms, got {before} us");
        configure_accepted(&accepted, &TcpSending { rto_min: Some(Duration::from_millis(50)), ..TcpSending::default() }).unwrap();
        // The kernel keeps it in jiffies: 50 ms reads back rounded up to the tick.
        let after = rto_min_us(&accepted).unwrap();
        assert!((50_000..60_000).contains(&after), "got {after} us");
        drop(client);
    }
}
