//! The TCP side: HTTPS (HTTP/2 and HTTP/1.1 over TLS) on the QUIC port number, and an optional
//! plain HTTP/1.1 listener for local use. Serves the web app, manifests and segments (the `h2`
//! baseline and the fallback when WebTransport is missing), `/cert-hash`, `/config.json` and
//! `/healthz`, writing an access-log line per request. (`/metrics` is on the admin listener.)

use std::convert::Infallible;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Instant;

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::Full;
use hyper::body::{Body as _, Incoming};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::{TokioExecutor, TokioIo};
use tokio::net::TcpListener;

use crate::access_log::{self, HttpRequest};
use crate::config::Config;
use crate::content::{content_type, read_inside, relative_path, ContentError, ContentStore, CONTENT_PREFIX};
use crate::metrics::Metrics;
use crate::tls::{hex, CertStore};

/// What the handlers share.
pub struct HttpContext {
    pub config: Arc<Config>,
    pub certs: Arc<CertStore>,
    pub content: Arc<ContentStore>,
    pub metrics: Arc<Metrics>,
    /// The UDP port QUIC listens on (for Alt-Svc and /config.json).
    pub quic_port: u16,
    pub web_root: Option<PathBuf>,
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

/// Socket options of an accepted HTTPS connection: [`TCP_UNSENT_LIMIT`], and no Nagle delay (a
/// response's last partial segment would otherwise wait for the ACK of the previous one).
fn configure_accepted(tcp: &tokio::net::TcpStream) -> std::io::Result<()> {
    tcp.set_nodelay(true)?;
    socket2::SockRef::from(tcp).set_tcp_notsent_lowat(TCP_UNSENT_LIMIT)
}

/// Binds the HTTPS listener; returns its address and the accept loop to spawn.
pub async fn bind_https(ctx: Arc<HttpContext>, addr: SocketAddr) -> Result<(SocketAddr, impl std::future::Future<Output = ()>)> {
    let listener = TcpListener::bind(addr).await.with_context(|| format!("binding TCP {addr}"))?;
    let local = listener.local_addr()?;
    let acceptor = tokio_rustls::TlsAcceptor::from(ctx.certs.rustls_config()?);
    let serve = async move {
        loop {
            let Ok((tcp, peer)) = listener.accept().await else { continue };
            if let Err(e) = configure_accepted(&tcp) {
                tracing::warn!(%peer, "cannot set the socket options of an HTTPS connection: {e}");
            }
            let (ctx, acceptor) = (Arc::clone(&ctx), acceptor.clone());
            tokio::spawn(async move {
                let tls = match acceptor.accept(tcp).await {
                    Ok(tls) => tls,
                    Err(e) => return tracing::debug!(%peer, "TLS handshake failed: {e}"),
                };
                serve_connection(ctx, TokioIo::new(tls), peer, true).await;
            });
        }
    };
    Ok((local, serve))
}

/// Binds the plain HTTP/1.1 listener (local use: `http://127.0.0.1` is a secure context).
pub async fn bind_http(ctx: Arc<HttpContext>, addr: SocketAddr) -> Result<(SocketAddr, impl std::future::Future<Output = ()>)> {
    let listener = TcpListener::bind(addr).await.with_context(|| format!("binding TCP {addr}"))?;
    let local = listener.local_addr()?;
    let serve = async move {
        loop {
            let Ok((tcp, peer)) = listener.accept().await else { continue };
            let ctx = Arc::clone(&ctx);
            tokio::spawn(async move { serve_connection(ctx, TokioIo::new(tcp), peer, false).await });
        }
    };
    Ok((local, serve))
}

async fn serve_connection<I>(ctx: Arc<HttpContext>, io: I, peer: SocketAddr, secure: bool)
where
    I: hyper::rt::Read + hyper::rt::Write + Unpin + Send + 'static,
{
    let service = hyper::service::service_fn(move |req| {
        let ctx = Arc::clone(&ctx);
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
            Ok::<_, Infallible>(response)
        }
    });
    if let Err(e) = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new()).serve_connection(io, service).await {
        tracing::debug!("HTTP connection ended: {e}");
    }
}

fn text(status: StatusCode, body: &str) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(body.to_owned())));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("text/plain; charset=utf-8"));
    r
}

fn json(value: serde_json::Value) -> Response<Body> {
    let mut r = Response::new(Full::new(Bytes::from(value.to_string())));
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

/// Routes one request. Never panics on any input.
pub fn handle(ctx: &HttpContext, req: Request<Incoming>, secure: bool) -> Response<Body> {
    Metrics::inc(&ctx.metrics.https_requests_total);
    let path = req.uri().path().to_owned();
    let method = req.method().clone();
    let mut response = if method == Method::OPTIONS && ctx.config.cors {
        let mut r = text(StatusCode::NO_CONTENT, "");
        r.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_METHODS, HeaderValue::from_static("GET, HEAD, OPTIONS"));
        r.headers_mut().insert(header::ACCESS_CONTROL_ALLOW_HEADERS, HeaderValue::from_static("range"));
        r.headers_mut().insert(header::ACCESS_CONTROL_MAX_AGE, HeaderValue::from_static("86400"));
        r
    } else if method != Method::GET && method != Method::HEAD {
        let mut r = text(StatusCode::METHOD_NOT_ALLOWED, "only GET and HEAD\n");
        r.headers_mut().insert(header::ALLOW, HeaderValue::from_static("GET, HEAD"));
        r
    } else {
        route(ctx, &req, &path)
    };
    let headers = response.headers_mut();
    if ctx.config.cors {
        headers.insert(header::ACCESS_CONTROL_ALLOW_ORIGIN, HeaderValue::from_static("*"));
        headers.insert(header::ACCESS_CONTROL_EXPOSE_HEADERS, HeaderValue::from_static("content-length, content-range"));
    }
    if secure {
        if let Ok(v) = HeaderValue::from_str(&format!("h3=\":{}\"; ma=86400", ctx.quic_port)) {
            headers.insert(header::ALT_SVC, v);
        }
    }
    headers.insert(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff"));
    if method == Method::HEAD {
        let len = response.headers().get(header::CONTENT_LENGTH).cloned();
        let (mut parts, _) = response.into_parts();
        if let Some(len) = len {
            parts.headers.insert(header::CONTENT_LENGTH, len);
        }
        return Response::from_parts(parts, Full::new(Bytes::new()));
    }
    response
}

fn route(ctx: &HttpContext, req: &Request<Incoming>, path: &str) -> Response<Body> {
    match path {
        "/healthz" => text(StatusCode::OK, "ok\n"),
        "/cert-hash" => match ctx.certs.published_hashes().first() {
            Some((hash, not_after)) => json(serde_json::json!({
                "algorithm": "sha-256", "value": hex(hash), "notAfter": rfc3339(*not_after),
            })),
            None => text(StatusCode::NOT_FOUND, "the origin uses a PKI certificate: no hash to pin\n"),
        },
        "/config.json" => {
            let host = match &ctx.config.public_host {
                Some(public) => public.clone(),
                None => {
                    // The session URL names the host the page reached us by (HTTP/2 :authority,
                    // else the Host header), which goes into the answer: it must be a valid one.
                    let asked = match (req.uri().authority(), req.headers().get(header::HOST)) {
                        (Some(authority), _) => Some(authority.host().to_owned()),
                        (None, Some(value)) => match value.to_str().ok().and_then(host_of) {
                            Some(host) => Some(host),
                            None => return text(StatusCode::BAD_REQUEST, "malformed Host header\n"),
                        },
                        (None, None) => None,
                    };
                    format!("{}:{}", asked.as_deref().unwrap_or("localhost"), ctx.quic_port)
                }
            };
            let hashes: Vec<_> = ctx.certs.published_hashes().iter().map(|(h, _)| serde_json::json!({ "algorithm": "sha-256", "value": hex(h) })).collect();
            json(serde_json::json!({
                "webtransportUrl": format!("https://{}{}", host, ctx.config.wt_path),
                "certificateHashes": hashes,
                "contentBase": CONTENT_PREFIX,
            }))
        }
        p if p.starts_with(CONTENT_PREFIX) => match ctx.content.get(p) {
            Ok(bytes) => with_range(req, bytes, content_type(p), "public, max-age=3600"),
            Err(e) => content_error(e),
        },
        p => serve_web(ctx, req, p),
    }
}

fn serve_web(ctx: &HttpContext, req: &Request<Incoming>, path: &str) -> Response<Body> {
    let Some(root) = &ctx.web_root else {
        return text(StatusCode::NOT_FOUND, "not found (no web app configured: --web)\n");
    };
    let file = if path == "/" { "/index.html".to_owned() } else { path.to_owned() };
    let Some(relative) = relative_path(&file, "/") else { return text(StatusCode::BAD_REQUEST, "invalid path\n") };
    match read_inside(root, &relative, 64 << 20, None) {
        // Hashed asset names (Vite's assets/) never change; pages must be revalidated.
        Ok(bytes) => with_range(req, bytes, content_type(&file), if file.starts_with("/assets/") { "public, max-age=31536000, immutable" } else { "no-cache" }),
        Err(e) => content_error(e),
    }
}

fn content_error(e: ContentError) -> Response<Body> {
    match e {
        ContentError::NotFound => text(StatusCode::NOT_FOUND, "no such object\n"),
        ContentError::BadPath => text(StatusCode::BAD_REQUEST, "invalid object path\n"),
        ContentError::TooLarge { .. } => text(StatusCode::PAYLOAD_TOO_LARGE, &format!("{e}\n")),
        ContentError::Io(err) => {
            tracing::warn!("content read failed: {err}");
            text(StatusCode::INTERNAL_SERVER_ERROR, "could not read the object\n")
        }
    }
}

/// Full response, or 206 for a single satisfiable `Range: bytes=a-b`, or 416.
fn with_range(req: &Request<Incoming>, bytes: Bytes, media_type: &'static str, cache: &'static str) -> Response<Body> {
    let total = bytes.len() as u64;
    let range = req.headers().get(header::RANGE).and_then(|v| v.to_str().ok()).map_or(RangeRequest::Whole, |v| parse_range(v, total));
    let mut r = match range {
        RangeRequest::Whole => Response::new(Full::new(bytes)),
        RangeRequest::Part(start, end) => {
            let mut r = Response::new(Full::new(bytes.slice(start as usize..=end as usize)));
            *r.status_mut() = StatusCode::PARTIAL_CONTENT;
            r.headers_mut().insert(header::CONTENT_RANGE, HeaderValue::from_str(&format!("bytes {start}-{end}/{total}")).expect("ascii"));
            r
        }
        RangeRequest::Unsatisfiable => {
            let mut r = text(StatusCode::RANGE_NOT_SATISFIABLE, "range not satisfiable\n");
            r.headers_mut().insert(header::CONTENT_RANGE, HeaderValue::from_str(&format!("bytes */{total}")).expect("ascii"));
            return r;
        }
    };
    let h = r.headers_mut();
    h.insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    h.insert(header::ACCEPT_RANGES, HeaderValue::from_static("bytes"));
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static(cache));
    r
}

/// What a `Range` header asks of a representation `total` bytes long.
#[derive(Debug, PartialEq, Eq)]
pub enum RangeRequest {
    /// Send it all (200): a unit other than bytes, which RFC 9110 §14.2 says to ignore, or several
    /// ranges, which a server may answer whole rather than as multipart/byteranges.
    Whole,
    /// Inclusive byte positions (206).
    Part(u64, u64),
    /// A malformed or unsatisfiable byte range (416).
    Unsatisfiable,
}

/// Reads `bytes=a-b`, `bytes=a-`, `bytes=-n`.
pub fn parse_range(value: &str, total: u64) -> RangeRequest {
    let Some(spec) = value.trim().strip_prefix("bytes=") else { return RangeRequest::Whole };
    if spec.contains(',') {
        return RangeRequest::Whole;
    }
    single_range(spec, total).map_or(RangeRequest::Unsatisfiable, |(start, end)| RangeRequest::Part(start, end))
}

fn single_range(spec: &str, total: u64) -> Option<(u64, u64)> {
    if total == 0 {
        return None;
    }
    let (a, b) = spec.split_once('-')?;
    let (start, end) = match (a.trim(), b.trim()) {
        ("", n) => {
            let n: u64 = n.parse().ok()?;
            if n == 0 {
                return None;
            }
            (total.saturating_sub(n), total - 1)
        }
        (s, "") => (s.parse().ok()?, total - 1),
        (s, e) => (s.parse().ok()?, e.parse::<u64>().ok()?.min(total - 1)),
    };
    (start <= end && start < total).then_some((start, end))
}

/// The host of a Host header value (port dropped, IPv6 literals keep their brackets), or None
/// when the value is not an authority.
fn host_of(value: &str) -> Option<String> {
    let authority: hyper::http::uri::Authority = value.parse().ok()?;
    // An authority may carry userinfo ("user@host"); a Host header may not.
    (!value.contains('@') && !authority.host().is_empty()).then(|| authority.host().to_owned())
}

fn rfc3339(t: std::time::SystemTime) -> String {
    time::OffsetDateTime::from(t).format(&time::format_description::well_known::Rfc3339).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        use RangeRequest::*;
        assert_eq!(parse_range("bytes=0-9", 100), Part(0, 9));
        assert_eq!(parse_range("bytes=90-", 100), Part(90, 99));
        assert_eq!(parse_range("bytes=-10", 100), Part(90, 99));
        assert_eq!(parse_range("bytes=50-500", 100), Part(50, 99));
        assert_eq!(parse_range("bytes=100-", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=5-1", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=-0", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=x-y", 100), Unsatisfiable);
        assert_eq!(parse_range("bytes=0-", 0), Unsatisfiable);
        // Several ranges are answered whole; an unknown unit is ignored.
        assert_eq!(parse_range("bytes=0-1,3-4", 100), Whole);
        assert_eq!(parse_range("items=0-1", 100), Whole);
    }

    #[tokio::test]
    async fn accepted_connections_keep_little_unsent_data_and_no_nagle_delay() {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = tokio::net::TcpStream::connect(listener.local_addr().unwrap()).await.unwrap();
        let (accepted, _) = listener.accept().await.unwrap();
        let before = socket2::SockRef::from(&accepted).tcp_notsent_lowat().unwrap();
        assert_ne!(before, TCP_UNSENT_LIMIT, "the default must differ, or this test proves nothing");
        configure_accepted(&accepted).unwrap();
        assert_eq!(socket2::SockRef::from(&accepted).tcp_notsent_lowat().unwrap(), TCP_UNSENT_LIMIT);
        assert!(accepted.nodelay().unwrap());
        drop(client);
    }

    #[test]
    fn host_without_port() {
        assert_eq!(host_of("example.org:4433").as_deref(), Some("example.org"));
        assert_eq!(host_of("[::1]:4433").as_deref(), Some("[::1]"));
        assert_eq!(host_of("example.org").as_deref(), Some("example.org"));
        for bad in ["[", "[x", "", "a b", "evil.org/x?", "user@evil.org", ":4433", "[::1"] {
            assert_eq!(host_of(bad), None, "{bad:?}");
        }
    }
}
