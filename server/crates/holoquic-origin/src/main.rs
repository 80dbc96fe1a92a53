//! The `holoquic-origin` binary: reads the configuration, starts the QUIC loop on its own thread
//! and the HTTPS listeners on tokio, prints one ready line, and stops on SIGINT/SIGTERM.

use std::io::Write;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

use anyhow::Result;
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
        tokio::select! {
            _ = tokio::signal::ctrl_c() => {}
            _ = term.recv() => {}
        }
        tracing::info!("shutting down");
        anyhow::Ok(())
    })?;
    shutdown.store(true, Ordering::Relaxed);
    match quic_thread.join() {
        Ok(result) => result,
        Err(_) => anyhow::bail!("the QUIC thread panicked"),
    }
}
