//! The admin listener (`--admin-listen`): plain HTTP/1.1 for operators and their tools, apart
//! from the public port — `/metrics` (Prometheus text) and `/healthz`. Bind it to loopback or a
//! management network: it has no TLS and no authentication, and counts what clients do.

use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{Context, Result};
use bytes::Bytes;
use http_body_util::Full;
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

use crate::content::ContentStore;
use crate::metrics::Metrics;

/// Scrapers are few: more connections than this at once are refused until one ends.
const MAX_CONNECTIONS: usize = 64;
/// A connection idle or unfinished this long is closed (a scrape takes milliseconds).
const CONNECTION_TIMEOUT: Duration = Duration::from_secs(30);

/// Binds the admin listener; returns its address and the accept loop to spawn. `/metrics` gives
/// the origin's `metrics` and the content store's (`content_metrics.rs`).
pub async fn bind_admin(metrics: Arc<Metrics>, content: Arc<ContentStore>, addr: SocketAddr) -> Result<(SocketAddr, impl std::future::Future<Output = ()>)> {
    let listener = TcpListener::bind(addr).await.with_context(|| format!("binding the admin listener {addr}"))?;
    let local = listener.local_addr()?;
    let slots = Arc::new(tokio::sync::Semaphore::new(MAX_CONNECTIONS));
    let serve = async move {
        loop {
            let Ok(slot) = Arc::clone(&slots).acquire_owned().await else { return };
            let tcp = match listener.accept().await {
                Ok((tcp, _)) => tcp,
                Err(e) => {
                    // Out of file descriptors, typically: wait rather than spin.
                    tracing::warn!("admin listener: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(100)).await;
                    continue;
                }
            };
            let (metrics, content) = (Arc::clone(&metrics), Arc::clone(&content));
            tokio::spawn(async move {
                let service = hyper::service::service_fn(move |req| {
                    let response = route(&metrics, &content, &req);
                    async move { Ok::<_, Infallible>(response) }
                });
                let connection = hyper::server::conn::http1::Builder::new().keep_alive(true).serve_connection(TokioIo::new(tcp), service);
                let _ = tokio::time::timeout(CONNECTION_TIMEOUT, connection).await;
                drop(slot);
            });
        }
    };
    Ok((local, serve))
}

fn route<B>(metrics: &Metrics, content: &ContentStore, req: &Request<B>) -> Response<Full<Bytes>> {
    let (status, media_type, body) = match (req.method(), req.uri().path()) {
        (&Method::GET, "/metrics") => {
            let mut text = metrics.render_prometheus();
            content.render_metrics(&mut text);
            (StatusCode::OK, "text/plain; version=0.0.4", text)
        }
        // A draining origin is going away: health checks take it out of rotation.
        (&Method::GET, "/healthz") if metrics.draining.load(std::sync::atomic::Ordering::Relaxed) > 0 => {
            (StatusCode::SERVICE_UNAVAILABLE, "text/plain; charset=utf-8", "draining\n".to_owned())
        }
        (&Method::GET, "/healthz") => (StatusCode::OK, "text/plain; charset=utf-8", "ok\n".to_owned()),
        (&Method::GET, _) => (StatusCode::NOT_FOUND, "text/plain; charset=utf-8", "not found: /metrics or /healthz\n".to_owned()),
        _ => (StatusCode::METHOD_NOT_ALLOWED, "text/plain; charset=utf-8", "only GET\n".to_owned()),
    };
    let mut r = Response::new(Full::new(Bytes::from(body)));
    *r.status_mut() = status;
    r.headers_mut().insert(header::CONTENT_TYPE, HeaderValue::from_static(media_type));
    r.headers_mut().insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}
