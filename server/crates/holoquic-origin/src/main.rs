//! The `holoquic-origin` binary: reads the configuration, starts the QUIC loop on its own thread
//! and the HTTPS and admin listeners on tokio, prints one ready line, reloads on SIGHUP, drains
//! on SIGINT/SIGTERM (`shutdown.rs`) and stops at once on a second one.

use std::io::Write;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::Duration;

use anyhow::{anyhow, Result};
use holoquic_origin::access_log;
use holoquic_origin::admin::bind_admin;
use holoquic_origin::config::Config;
use holoquic_origin::content::ContentStore;
use holoquic_origin::https::{bind_http, serve_https, HttpContext};
use holoquic_origin::metrics::Metrics;
use holoquic_origin::ports::bind_pair;
use holoquic_origin::private_dir::PrivateDir;
use holoquic_origin::quic::{self, QuicContext};
use holoquic_origin::shutdown::Shutdown;
use holoquic_origin::tls::CertStore;
use holoquic_origin::webfiles::WebFiles;
use tokio::signal::unix::{signal, SignalKind};

fn main() {
    let config = Config::from_args().unwrap_or_else(|e| fail(e));
    let log = access_log::init(config.access_log_format, config.access_log.as_deref()).unwrap_or_else(|e| fail(e));
    let result = run(config);
    drop(log); // flushes the access log's queued lines
    if let Err(e) = result {
        fail(e);
    }
}

fn fail(e: anyhow::Error) -> ! {
    eprintln!("holoquic-origin: {e:#}");
    std::process::exit(1);
}

fn run(config: Config) -> Result<()> {
    let config = Arc::new(config);
    holoquic_origin::listener::raise_open_file_limit();
    let runtime = tokio::runtime::Builder::new_multi_thread().worker_threads(2).enable_all().build()?;
    runtime.block_on(async {
        // Signals first: from here on SIGINT/SIGTERM end `run` normally, which removes the
        // private directory.
        let mut interrupt = signal(SignalKind::interrupt())?;
        let mut term = signal(SignalKind::terminate())?;
        let mut hangup = signal(SignalKind::hangup())?;
        let private = PrivateDir::create()?;
        let certs = Arc::new(match (&config.cert, &config.key) {
            (Some(cert), Some(key)) => CertStore::from_files(cert, key, private.path())?,
            _ => match &config.cert_dir {
                Some(dir) => {
                    let validity = generated_validity();
                    CertStore::shared(dir, private.path(), &config.cert_names, validity, validity / 5)?
                }
                None => CertStore::generate(private.path(), &config.cert_names)?,
            },
        });
        certs.spawn_rotation();
        let content = Arc::new(ContentStore::open_source(&config.content, &config.bucket, config.limits.max_object_bytes)?);
        let web = config.web.as_deref().map(WebFiles::open).transpose()?.map(Arc::new);
        let metrics = Arc::new(Metrics::default());
        // Memory freed after an overload goes back to the system (heap.rs).
        holoquic_origin::heap::spawn_trimmer(Arc::clone(&metrics))?;
        let shutdown = Arc::new(Shutdown::default());

        // UDP and TCP on one port number (port 0 → a free pair, see ports.rs).
        let (udp, tcp) = bind_pair(config.listen)?;
        tcp.set_nonblocking(true)?;
        let (quic_addr, quic_thread) = quic::spawn_on(
            QuicContext::new(Arc::clone(&config), Arc::clone(&certs), Arc::clone(&content), Arc::clone(&metrics), web.clone())?,
            udp,
            Arc::clone(&shutdown),
        )?;
        let mut quic_ended = tokio::task::spawn_blocking(move || quic_thread.join());

        let ctx = Arc::new(HttpContext {
            config: Arc::clone(&config),
            certs: Arc::clone(&certs),
            content: Arc::clone(&content),
            metrics: Arc::clone(&metrics),
            quic_port: quic_addr.port(),
            web,
            shutdown: Arc::clone(&shutdown),
        });
        let (https_addr, https) = serve_https(Arc::clone(&ctx), tokio::net::TcpListener::from_std(tcp)?)?;
        tokio::spawn(https);
        let http_addr = match config.http_listen {
            Some(addr) => {
                let (local, http) = bind_http(Arc::clone(&ctx), addr).await?;
                tokio::spawn(http);
                Some(local)
            }
            None => None,
        };
        let admin_addr = match config.admin_listen {
            Some(addr) => {
                let (local, admin) = bind_admin(Arc::clone(&metrics), Arc::clone(&content), addr).await?;
                tokio::spawn(admin);
                Some(local)
            }
            None => None,
        };
        let shown = |a: Option<std::net::SocketAddr>| a.map_or_else(|| "-".to_owned(), |a| a.to_string());
        println!("holoquic-origin: listening quic={quic_addr} https={https_addr} http={} admin={}", shown(http_addr), shown(admin_addr));
        std::io::stdout().flush()?;

        loop {
            tokio::select! {
                _ = interrupt.recv() => break,
                _ = term.recv() => break,
                _ = hangup.recv() => reload(&certs, &content),
                // The QUIC loop returns only when told to stop: ending before means it failed or
                // panicked. Exit then (non-zero, for a supervisor to restart us) rather than go on
                // serving HTTPS — and answering /healthz — while every WebTransport client fails.
                ended = &mut quic_ended => return Err(quic_failure(ended).unwrap_or_else(|| anyhow!("the QUIC loop stopped unasked"))),
            }
        }
        // The drain (shutdown.rs): the listeners stop accepting, the QUIC loop finishes what is
        // in flight and closes every session and connection, HTTPS connections close gracefully;
        // all within the grace period. A second signal ends it at once.
        tracing::info!(grace = ?config.drain_grace, "draining (a second SIGINT or SIGTERM stops at once)");
        metrics.draining.store(1, Ordering::Relaxed);
        shutdown.begin_drain(config.drain_grace);
        let drained = async {
            let ended = (&mut quic_ended).await;
            https_closed(&metrics, &shutdown).await;
            ended
        };
        let mut drained = std::pin::pin!(drained);
        let ended = loop {
            tokio::select! {
                ended = &mut drained => break ended,
                _ = interrupt.recv() => shutdown.stop_now(),
                _ = term.recv() => shutdown.stop_now(),
            }
        };
        tracing::info!("stopped");
        let ended = quic_failure(ended).map_or(Ok(()), Err);
        drop(private); // the certificate files go with it
        ended
    })
}

/// Waits until the HTTPS and plain-HTTP connections have closed (they were told to when the
/// drain began), or the drain must end.
async fn https_closed(metrics: &Metrics, shutdown: &Shutdown) {
    while metrics.https_connections_active.load(Ordering::Relaxed) > 0 && !shutdown.must_stop() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// SIGHUP: the PKI certificate from its files (a failure keeps the one in service) and the
/// content read afresh (a replaced scene is served from its new files).
/// Validity of certificates made in `--cert-dir`: the usual 10 days, or for tests of rotation a
/// few seconds from `HOLOQUIC_TEST_CERT_VALIDITY_SECONDS` (never longer than the usual).
fn generated_validity() -> Duration {
    std::env::var("HOLOQUIC_TEST_CERT_VALIDITY_SECONDS")
        .ok()
        .and_then(|s| s.parse::<u64>().ok())
        .map(Duration::from_secs)
        .filter(|d| !d.is_zero())
        .map_or(holoquic_origin::tls::GENERATED_VALIDITY, |d| d.min(holoquic_origin::tls::GENERATED_VALIDITY))
}

fn reload(certs: &CertStore, content: &ContentStore) {
    match certs.reload() {
        Ok(true) => tracing::info!(generation = certs.current().generation, "SIGHUP: reloaded the certificate and key"),
        Ok(false) => tracing::info!("SIGHUP: the certificate is generated (it rotates by itself): nothing to reload"),
        Err(e) => tracing::error!("SIGHUP: keeping the certificate in service, the new one did not load: {e:#}"),
    }
    content.invalidate_all();
    tracing::info!("SIGHUP: content cache emptied");
}

/// The error of a QUIC thread that ended, if it ended with one or panicked.
fn quic_failure(ended: std::result::Result<std::thread::Result<Result<()>>, tokio::task::JoinError>) -> Option<anyhow::Error> {
    match ended {
        Ok(Ok(Ok(()))) => None,
        Ok(Ok(Err(e))) => Some(e.context("the QUIC loop failed")),
        Ok(Err(_)) | Err(_) => Some(anyhow!("the QUIC thread panicked")),
    }
}
