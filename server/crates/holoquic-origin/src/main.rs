//! The `holoquic-origin` binary: reads the configuration, starts the QUIC loop on its own thread
//! and the HTTPS listeners on tokio, prints one ready line, and stops on SIGINT/SIGTERM.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::{anyhow, Result};
use holoquic_origin::config::Config;
use holoquic_origin::content::ContentStore;
use holoquic_origin::https::{bind_http, bind_https, HttpContext};
use holoquic_origin::metrics::Metrics;
use holoquic_origin::quic::{self, QuicContext};
use holoquic_origin::tls::CertStore;

fn main() {
    tracing_subscriber::fmt()
        .with_env_filter(tracing_subscriber::EnvFilter::try_from_default_env().unwrap_or_else(|_| "info".into()))
        .with_writer(std::io::stderr)
        .init();
    if let Err(e) = run() {
        eprintln!("holoquic-origin: {e:#}");
        std::process::exit(1);
    }
}

fn run() -> Result<()> {
    let config = Arc::new(Config::from_args()?);
    let certs = Arc::new(match (&config.cert, &config.key) {
        (Some(cert), Some(key)) => CertStore::from_files(cert, key)?,
        _ => {
            let dir = std::env::temp_dir().join(format!("holoquic-origin-{}", std::process::id()));
            CertStore::generate(&dir, &config.cert_names)?
        }
    });
    certs.spawn_rotation();
    let content = Arc::new(ContentStore::open(&config.content, config.limits.max_object_bytes)?);
    let metrics = Arc::new(Metrics::default());
    let shutdown = Arc::new(AtomicBool::new(false));

    let (quic_addr, quic_thread) = quic::spawn(
        QuicContext { config: Arc::clone(&config), certs: Arc::clone(&certs), content: Arc::clone(&content), metrics: Arc::clone(&metrics) },
        Arc::clone(&shutdown),
    )?;

    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    let quic_ended = runtime.spawn_blocking(move || quic_thread.join());
    runtime.block_on(async {
        let ctx = Arc::new(HttpContext {
            config: Arc::clone(&config),
            certs: Arc::clone(&certs),
            content,
            metrics,
            quic_port: quic_addr.port(),
            web_root: match &config.web {
                Some(w) => Some(w.canonicalize()?),
                None => None,
            },
        });
        // The HTTPS listener takes the same port number as QUIC (port 0 → the port QUIC got).
        let (https_addr, https) = bind_https(Arc::clone(&ctx), quic_addr).await?;
        tokio::spawn(https);
        let http_addr = match config.http_listen {
            Some(addr) => {
                let (local, http) = bind_http(Arc::clone(&ctx), addr).await?;
                tokio::spawn(http);
                Some(local)
            }
            None => None,
        };
        let http = http_addr.map(|a| a.to_string()).unwrap_or_else(|| "-".into());
        println!("holoquic-origin: listening quic={quic_addr} https={https_addr} http={http}");
        std::io::stdout().flush()?;

        let mut term = tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())?;
        let mut quic_ended = quic_ended;
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
            // The QUIC loop returns only when told to stop: ending before means it failed or
            // panicked. Exit then (non-zero, for a supervisor to restart us) rather than go on
            // serving HTTPS — and answering /healthz — while every WebTransport client fails.
            ended = &mut quic_ended => return Err(quic_failure(ended).unwrap_or_else(|| anyhow!("the QUIC loop stopped unasked"))),
        }
        tracing::info!("shutting down");
        shutdown.store(true, Ordering::Relaxed);
        quic_failure(quic_ended.await).map_or(Ok(()), Err)
    })
}

/// The error of a QUIC thread that ended, if it ended with one or panicked.
fn quic_failure(ended: std::result::Result<std::thread::Result<Result<()>>, tokio::task::JoinError>) -> Option<anyhow::Error> {
    match ended {
        Ok(Ok(Ok(()))) => None,
        Ok(Ok(Err(e))) => Some(e.context("the QUIC loop failed")),
        Ok(Err(_)) | Err(_) => Some(anyhow!("the QUIC thread panicked")),
    }
}
