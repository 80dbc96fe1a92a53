//! The access log — one line per HTTPS request and per object request — and the process's
//! logging, which it shares a subscriber with.
//!
//! Two `tracing` layers: the diagnostic log (stderr, filtered by `RUST_LOG`) and the access log
//! (events of target [`TARGET`] only, to stderr or `--access-log FILE`, as text or JSON). Access
//! lines go through `tracing_appender`'s non-blocking writer, so the QUIC thread only queues a
//! line: a slow disk or a full pipe costs lost lines (the writer drops them), never a stall.

use std::net::SocketAddr;
use std::path::Path;
use std::time::Duration;

use anyhow::{Context, Result};
use tracing_subscriber::filter::{EnvFilter, Targets};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::Layer;

use crate::config::AccessLogFormat;
use crate::metrics::{RequestDelivery, RequestEnd};

/// `tracing` target of access-log events; the diagnostic log leaves them out.
pub const TARGET: &str = "access";

/// Keeps the access log's writer thread; dropping it flushes the lines still queued.
pub struct LogGuard(#[allow(dead_code)] Option<tracing_appender::non_blocking::WorkerGuard>);

/// Installs the process's logging: diagnostics to stderr by `RUST_LOG` (default `info`), and the
/// access log as configured.
pub fn init(format: AccessLogFormat, file: Option<&Path>) -> Result<LogGuard> {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()).add_directive(format!("{TARGET}=off").parse()?);
    let diagnostics = tracing_subscriber::fmt::layer().with_writer(std::io::stderr).with_filter(filter);
    let (access, guard) = match format {
        AccessLogFormat::Off => (None, None),
        AccessLogFormat::Text | AccessLogFormat::Json => {
            let (writer, guard) = match file {
                Some(path) => {
                    let file = std::fs::OpenOptions::new()
                        .create(true)
                        .append(true)
                        .open(path)
                        .with_context(|| format!("opening the access log {}", path.display()))?;
                    tracing_appender::non_blocking(file)
                }
                None => tracing_appender::non_blocking(std::io::stderr()),
            };
            let layer = tracing_subscriber::fmt::layer().with_writer(writer).with_target(false).with_level(false).with_ansi(false);
            let layer = match format {
                AccessLogFormat::Json => layer.json().flatten_event(true).with_current_span(false).with_span_list(false).boxed(),
                _ => layer.boxed(),
            };
            (Some(layer.with_filter(Targets::new().with_target(TARGET, tracing::Level::INFO))), Some(guard))
        }
    };
    tracing_subscriber::registry().with(diagnostics).with(access).try_init().context("installing the logger")?;
    Ok(LogGuard(guard))
}

/// One object request, as it ended (see `Metrics::request_ended`, which calls this).
pub fn object_request(end: &RequestEnd<'_>) {
    if end.status == 0 {
        return; // the stream ended before a REQUEST: nothing was asked
    }
    let kind = match end.delivery {
        Some(RequestDelivery::Reliable) => "reliable",
        Some(RequestDelivery::Datagram) => "datagram",
        None => "refused",
    };
    tracing::info!(
        target: TARGET,
        kind,
        path = end.path,
        status = end.status,
        reason = end.reason,
        bytes = end.object_bytes,
        duration_ms = millis(end.ended_at.saturating_duration_since(end.received_at)),
        client = %client(end.peer),
        transport = "webtransport",
        cancelled = end.cancelled,
        deadline_missed = end.deadline_missed,
        "object"
    );
}

/// One HTTPS (or plain HTTP) request, as its response is handed to hyper.
pub struct HttpRequest<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub status: u16,
    /// Body bytes of the response.
    pub bytes: u64,
    pub duration: Duration,
    pub peer: Option<SocketAddr>,
    /// `h2`, `http/1.1` … with `+tls` over HTTPS.
    pub transport: &'a str,
}

pub fn http_request(r: &HttpRequest<'_>) {
    tracing::info!(
        target: TARGET,
        kind = r.method,
        path = r.path,
        status = r.status,
        bytes = r.bytes,
        duration_ms = millis(r.duration),
        client = %client(r.peer),
        transport = r.transport,
        "http"
    );
}

/// `h2+tls`, `http/1.1` …: the protocol of a request and whether TLS carried it.
pub fn http_transport(version: hyper::Version, secure: bool) -> &'static str {
    match (version, secure) {
        (hyper::Version::HTTP_2, true) => "h2+tls",
        (hyper::Version::HTTP_2, false) => "h2",
        (hyper::Version::HTTP_10, true) => "http/1.0+tls",
        (hyper::Version::HTTP_10, false) => "http/1.0",
        (_, true) => "http/1.1+tls",
        (_, false) => "http/1.1",
    }
}

fn client(peer: Option<SocketAddr>) -> String {
    peer.map_or_else(|| "-".to_owned(), |p| p.to_string())
}

/// Milliseconds with microsecond resolution.
fn millis(d: Duration) -> f64 {
    (d.as_micros() as f64) / 1000.0
}
