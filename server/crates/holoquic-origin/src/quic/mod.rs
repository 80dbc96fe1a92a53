//! The UDP side: one thread runs every QUIC connection (quiche is sans-IO, so the loop owns the
//! socket, the timers and pacing), with the WebTransport layer on each connection. The files:
//! - `mod.rs` (here): the loop — accepting connections (per-IP limits), receiving within a
//!   budget, timers, pacing, reaping, a panic in one connection's handling closing only that
//!   connection, and the drain on shutdown (`drain.rs`); `udp.rs` sends in GSO batches, `retry.rs` mints and checks Retry tokens,
//!   `congestion.rs` tunes congestion control.
//! - `loader.rs`: worker threads that read objects and build encoders so the loop never blocks;
//!   `budget.rs`: the byte budgets of what requests hold.
//! - `webtransport.rs`: per connection, feeds quiche's events to the session machine, performs
//!   its actions and runs the scheduler.
//! - `session.rs` (with `control.rs` for the peer's unidirectional streams and `headers.rs` for
//!   HTTP/3 field sections): the session state machine, no I/O; `action.rs`: what it asks the
//!   driver to do; `path_report.rs`: each session's path stream of PATH reports (RTT, window).
//! - `scheduler.rs`: the order object bytes leave — urgency, stream writing, datagram window
//!   filling, purging, departures.
//! - `delivery.rs` (with `delivery/`): one object request on its stream (reliable or RaptorQ
//!   datagrams, repair); `symbols.rs`: an object's RaptorQ symbols.
//! - tests: `handshake_tests.rs` (the loop over UDP), `isolation_tests.rs` (the loop over UDP
//!   against floods, storms, slow reads, panics and limits), `limits_tests.rs` (the layer against
//!   a misbehaving client, over quiche's test pipe), `memory_tests.rs` (its state bounded over
//!   many requests, on the same pipe), `session_tests.rs` (the machine, bytes
//!   alone).

mod action;
pub mod budget;
pub mod congestion;
mod control;
pub mod delivery;
mod drain;
pub mod headers;
mod http3;
pub mod loader;
mod path_report;
pub mod retry;
mod scheduler;
mod session;
pub mod symbols;
pub mod udp;
pub mod webtransport;

#[cfg(test)]
mod handshake_tests;
#[cfg(test)]
mod isolation_tests;
#[cfg(test)]
mod limits_tests;
#[cfg(test)]
mod memory_tests;
#[cfg(test)]
mod path_report_tests;
#[cfg(test)]
mod session_tests;
#[cfg(test)]
mod test_support;

use std::collections::{HashMap, VecDeque};
use std::net::{IpAddr, SocketAddr, UdpSocket};
use std::panic::AssertUnwindSafe;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use anyhow::{Context, Result};
use ring::rand::SecureRandom;

use crate::config::Config;
use crate::content::ContentStore;
use crate::metrics::Metrics;
use crate::shutdown::Shutdown;
use crate::tls::CertStore;
use crate::webfiles::WebFiles;

pub struct QuicContext {
    pub config: Arc<Config>,
    pub certs: Arc<CertStore>,
    pub content: Arc<ContentStore>,
    pub metrics: Arc<Metrics>,
    /// The web app (`--web`), shared with HTTPS.
    pub web: Option<Arc<WebFiles>>,
    /// Reads objects and builds encoders for the loop's requests (its workers start with it).
    pub loader: Arc<loader::Loader>,
    /// How long the loop's rounds take, for the isolation tests.
    #[cfg(test)]
    pub rounds: Arc<test_support::RoundStats>,
}

impl QuicContext {
    /// The context of a QUIC loop, with its loader started.
    pub fn new(config: Arc<Config>, certs: Arc<CertStore>, content: Arc<ContentStore>, metrics: Arc<Metrics>, web: Option<Arc<WebFiles>>) -> Result<Self> {
        let limits = &config.limits;
        let loader = loader::Loader::new(Arc::clone(&content), limits.max_queued_loads, limits.max_held_bytes).context("starting the loader")?;
        Ok(Self {
            config,
            certs,
            content,
            metrics,
            web,
            loader,
            #[cfg(test)]
            rounds: Arc::default(),
        })
    }
}

/// Largest UDP payload we send and receive (findings §1: Chromium takes server datagrams up to
/// ~1325 bytes of payload on a 1350-byte path).
const MAX_UDP_PAYLOAD: usize = 1350;
/// How far ahead of its pacing time a packet may leave: the timer's granularity, and the burst a
/// late wake-up may send. quiche's pacer never makes up for lost time (its next release is a
/// pacing interval after the actual send), so with a 1-ms slack a loop that gets the CPU a few ms
/// late (a busy 2-core machine: decoding browser, impairer, other work) sent 2–3 packets per
/// wake-up and, at a 100-ms RTT, objects left at 1–5 Mbit/s with the window open and their bytes
/// buffered in quiche (qlog, docs/results.md → "Goodput at 50 ms"). 4 ms is a burst of under 10 kB at
/// 20 Mbit/s, far below the bottleneck queues it meets.
const PACING_SLACK: Duration = Duration::from_millis(4);
/// When the socket's send buffer is full, how long before a held packet is tried again at the
/// latest (the loop also wakes as soon as the socket is writable).
const SEND_RETRY: Duration = Duration::from_micros(200);
/// Longest the loop sleeps when nothing is scheduled (checks shutdown).
const IDLE_WAKE: Duration = Duration::from_millis(100);
/// A connection still in its handshake after this long is dropped: a real client finishes in a
/// few round trips, a spoofed Initial never does, and each one holds a connection slot.
const HANDSHAKE_TIMEOUT: Duration = Duration::from_secs(10);
/// Datagrams read from the socket per round of the loop before timers, the connections' work
/// and sending run: a flood then slows the loop's rounds but cannot stop them (a socket drained
/// without a bound starved pacing and timers for as long as the flood lasted).
const RECV_BUDGET: usize = 256;
/// quiche's INTERNAL_ERROR transport error code: what a connection closed after a panic gets.
const INTERNAL_ERROR: u64 = 0x1;

/// Binds the UDP socket and runs the QUIC loop on its own thread (see `spawn_on`).
pub fn spawn(ctx: QuicContext, shutdown: Arc<Shutdown>) -> Result<(SocketAddr, std::thread::JoinHandle<Result<()>>)> {
    let socket = UdpSocket::bind(ctx.config.listen).with_context(|| format!("binding UDP {}", ctx.config.listen))?;
    spawn_on(ctx, socket, shutdown)
}

/// Runs the QUIC loop on `socket` on its own thread until `shutdown` says it must stop, or its
/// drain is over (every connection closed).
pub fn spawn_on(ctx: QuicContext, socket: UdpSocket, shutdown: Arc<Shutdown>) -> Result<(SocketAddr, std::thread::JoinHandle<Result<()>>)> {
    let local = socket.local_addr()?;
    // Built here, not on the thread: the certificate files are read before the caller announces
    // the origin ready (a failure is a start-up error), not later, when file descriptors may have
    // run out and the loop would end with the process.
    let mut server = Server::new(ctx, socket, local)?;
    let handle = std::thread::Builder::new().name("quic".into()).spawn(move || server.run(&shutdown))?;
    Ok((local, handle))
}

struct Client {
    conn: quiche::Connection,
    /// The peer's address as the per-IP limits count it (`ip_key`).
    ip: IpAddr,
    /// Its handling panicked: it is closed, only its close goes out, then it is reaped.
    poisoned: bool,
    accepted_at: Instant,
    wt: webtransport::Connection,
    /// Packets produced but not sent yet, oldest first, each batch with the time it may leave:
    /// quiche's pacing time, or a retry time when the socket's buffer was full.
    held: VecDeque<(udp::Batch, Instant)>,
    /// How far its part of the origin's drain has come.
    drain: drain::Step,
}

struct Server {
    ctx: QuicContext,
    out: udp::UdpOut,
    local: SocketAddr,
    quiche_config: quiche::Config,
    cert_generation: u64,
    clients: HashMap<quiche::ConnectionId<'static>, Client>,
    /// Client-chosen initial DCIDs → our SCID, so retransmitted Initials find their connection.
    aliases: HashMap<Vec<u8>, quiche::ConnectionId<'static>>,
    rng: ring::rand::SystemRandom,
    retry_tokens: retry::RetryTokens,
    /// The socket's send buffer was full: wait until it is writable, not only readable.
    send_blocked: bool,
    /// The origin drains: new connections are refused, the others closed once their work is done.
    draining: bool,
}

impl Server {
    fn new(ctx: QuicContext, socket: UdpSocket, local: SocketAddr) -> Result<Self> {
        let cert_generation = ctx.certs.current().generation;
        let quiche_config = quiche_config(&ctx)?;
        let rng = ring::rand::SystemRandom::new();
        let retry_tokens = retry::RetryTokens::new(&rng)?;
        Ok(Self {
            ctx,
            out: udp::UdpOut::new(socket),
            local,
            quiche_config,
            cert_generation,
            clients: HashMap::new(),
            aliases: HashMap::new(),
            rng,
            retry_tokens,
            send_blocked: false,
            draining: false,
        })
    }

    fn run(&mut self, shutdown: &Shutdown) -> Result<()> {
        let mut buf = vec![0u8; 65_536];
        self.out.socket.set_nonblocking(true)?;
        while !shutdown.must_stop() {
            let wait = self.next_wake().saturating_duration_since(Instant::now());
            if wait_for_socket(&self.out.socket, self.ctx.loader.wake_fd(), wait, self.send_blocked)? {
                self.ctx.loader.clear_wake();
            }
            self.send_blocked = false;
            #[cfg(test)]
            let round = self.ctx.rounds.begin();
            // Read what is queued, up to the budget, then run timers, the WebTransport layer and
            // sending; what is left is read next round (the socket is still readable, so the
            // loop does not sleep).
            for _ in 0..RECV_BUDGET {
                match self.out.socket.recv_from(&mut buf) {
                    Ok((n, from)) => {
                        #[cfg(test)]
                        self.ctx.rounds.datagram_read();
                        self.on_packet(&mut buf[..n], from)
                    }
                    Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => break,
                    Err(e) => {
                        tracing::debug!("recv_from: {e}");
                        break;
                    }
                }
            }
            let now = Instant::now();
            #[cfg(test)]
            self.ctx.rounds.timers_ran(now);
            for client in self.clients.values_mut() {
                guarded(client, &self.ctx, "timers and streams", |client, ctx| {
                    if client.conn.timeout().is_some_and(|t| t.is_zero()) {
                        client.conn.on_timeout();
                    }
                    if client.poisoned {
                        return;
                    }
                    client.wt.process(&mut client.conn, ctx, now);
                    if let Some((code, reason)) = client.wt.take_close() {
                        Metrics::inc(&ctx.metrics.protocol_errors_total);
                        let _ = client.conn.close(true, code, reason.as_bytes());
                    }
                });
            }
            if shutdown.is_draining() {
                self.drain_round();
            }
            self.flush();
            // The drain's steps look at a connection only once this round's writes have gone
            // through quiche's send (see drain.rs): before it, an object's last bytes can be
            // written into quiche yet unsent, which its timers cannot show. What a step wrote
            // (close capsules, the connection's close) is sent at once.
            if shutdown.is_draining() {
                self.drain_steps(now);
                self.flush();
            }
            self.reap();
            #[cfg(test)]
            self.ctx.rounds.end(round);
            if self.draining && self.clients.is_empty() {
                tracing::info!("drained: every connection is closed");
                return Ok(());
            }
        }
        self.close_all();
        Ok(())
    }

    /// When the drain's grace period is over (or a second signal came): tells every client the
    /// session and the connection are over instead of going silent — the sessions' close
    /// capsules as far as the congestion window takes them, then the connection's close — so a
    /// browser notices at once and reconnects (to this origin restarted, or another) rather than
    /// waiting for its idle timeout. Sent without pacing: nothing follows it.
    fn close_all(&mut self) {
        let mut packet = [0u8; MAX_UDP_PAYLOAD];
        let now = Instant::now();
        for client in self.clients.values_mut() {
            if !client.poisoned && client.conn.is_established() {
                guarded(client, &self.ctx, "closing sessions", |client, ctx| {
                    client.wt.close_sessions(&mut client.conn, ctx, now);
                });
            }
            for close in [false, true] {
                if close {
                    let _ = client.conn.close(true, holoquic_proto::h3::error_code::H3_NO_ERROR, b"origin shutting down");
                }
                while let Ok((n, info)) = client.conn.send(&mut packet) {
                    let _ = self.out.socket.send_to(&packet[..n], info.to);
                }
            }
        }
    }

    /// The earliest quiche timer or pacing time.
    fn next_wake(&self) -> Instant {
        let now = Instant::now();
        let mut wake = now + IDLE_WAKE;
        for c in self.clients.values() {
            if let Some(t) = c.conn.timeout() {
                wake = wake.min(now + t);
            }
            if let Some((_, at)) = c.held.front() {
                wake = wake.min(*at);
            }
        }
        wake
    }

    fn on_packet(&mut self, packet: &mut [u8], from: SocketAddr) {
        let Ok(header) = quiche::Header::from_slice(packet, quiche::MAX_CONN_ID_LEN) else { return };
        let id = if self.clients.contains_key(&header.dcid) {
            header.dcid.clone().into_owned()
        } else if let Some(id) = self.aliases.get(header.dcid.as_ref()) {
            id.clone()
        } else {
            if header.ty != quiche::Type::Initial {
                return;
            }
            if !quiche::version_is_supported(header.version) {
                let mut out = [0u8; MAX_UDP_PAYLOAD];
                if let Ok(n) = quiche::negotiate_version(&header.scid, &header.dcid, &mut out) {
                    let _ = self.out.socket.send_to(&out[..n], from);
                }
                return;
            }
            if self.clients.len() >= self.ctx.config.limits.max_connections {
                return;
            }
            let token = header.token.as_deref().unwrap_or_default();
            let odcid = if token.is_empty() {
                if self.half_open() >= retry::RETRY_ABOVE_HALF_OPEN {
                    self.send_retry(&header, from);
                    return;
                }
                None
            } else {
                // Only our Retry tokens exist (the origin sends no NEW_TOKEN): one that does
                // not check out is a forgery or stale, and gets nothing.
                match self.retry_tokens.validate(token, from, SystemTime::now()) {
                    Some(odcid) => Some(quiche::ConnectionId::from_vec(odcid)),
                    None => {
                        Metrics::inc(&self.ctx.metrics.retry_tokens_refused_total);
                        return;
                    }
                }
            };
            let ip = ip_key(from.ip());
            if !self.admits(ip) {
                Metrics::inc(&self.ctx.metrics.connections_refused_per_ip_total);
                return;
            }
            // After a Retry the client already uses the connection id the Retry gave it.
            let scid = match &odcid {
                Some(_) => header.dcid.clone().into_owned(),
                None => match self.new_connection_id() {
                    Some(id) => id,
                    None => return,
                },
            };
            // The certificate the store serves now, as HTTPS's resolver takes it per handshake:
            // a rotation (or a switch in --cert-dir) between two rounds reaches this connection.
            self.refresh_certificate();
            let conn = match quiche::accept(&scid, odcid.as_ref(), self.local, from, &mut self.quiche_config) {
                Ok(c) => c,
                Err(e) => {
                    tracing::debug!("accept failed: {e}");
                    return;
                }
            };
            let mut client = Client {
                conn,
                ip,
                poisoned: false,
                accepted_at: Instant::now(),
                wt: webtransport::Connection::new(),
                held: VecDeque::new(),
                drain: drain::Step::default(),
            };
            if self.draining {
                // Accepted only to be refused cleanly (CONNECTION_REFUSED, see `drain_round`).
                Metrics::inc(&self.ctx.metrics.connections_refused_draining_total);
                client.wt.begin_drain();
            }
            if let Some(dir) = &self.ctx.config.qlog_dir {
                attach_qlog(&mut client.conn, dir);
            }
            Metrics::inc(&self.ctx.metrics.connections_total);
            Metrics::inc(&self.ctx.metrics.connections_active);
            self.aliases.insert(header.dcid.to_vec(), scid.clone());
            self.clients.insert(scid.clone(), client);
            scid
        };
        let local = self.local;
        if let Some(client) = self.clients.get_mut(&id) {
            guarded(client, &self.ctx, "receiving", |client, _| {
                if let Err(e) = client.conn.recv(packet, quiche::RecvInfo { from, to: local }) {
                    tracing::trace!("recv: {e}");
                }
            });
        }
    }

    /// Sends what every connection has, honouring quiche's pacing times, in GSO batches.
    fn flush(&mut self) {
        let now = Instant::now();
        for client in self.clients.values_mut() {
            guarded(client, &self.ctx, "sending", |client, ctx| flush_client(&mut self.out, ctx, client, now, &mut self.send_blocked));
        }
    }

    /// Whether a new connection from `ip` is within the per-IP limits: connections, and
    /// handshakes in progress (what a flood of Initials from one host would pile up).
    fn admits(&self, ip: IpAddr) -> bool {
        let limits = &self.ctx.config.limits;
        let (mut connections, mut handshakes) = (0, 0);
        for client in self.clients.values().filter(|c| c.ip == ip) {
            connections += 1;
            handshakes += usize::from(!client.conn.is_established());
        }
        connections < limits.max_connections_per_ip && handshakes < limits.max_handshakes_per_ip
    }

    fn new_connection_id(&self) -> Option<quiche::ConnectionId<'static>> {
        let mut id = [0u8; quiche::MAX_CONN_ID_LEN];
        self.rng.fill(&mut id).ok()?;
        Some(quiche::ConnectionId::from_vec(id.to_vec()))
    }

    /// Connections whose handshake is not complete (their client's address is not validated).
    fn half_open(&self) -> usize {
        self.clients.values().filter(|c| !c.conn.is_established()).count()
    }

    /// Answers an Initial with a Retry whose token the client must echo (retry.rs).
    fn send_retry(&mut self, header: &quiche::Header<'_>, from: SocketAddr) {
        let Some(new_scid) = self.new_connection_id() else { return };
        let token = self.retry_tokens.mint(from, &header.dcid, SystemTime::now());
        let mut out = [0u8; MAX_UDP_PAYLOAD];
        if let Ok(n) = quiche::retry(&header.scid, &header.dcid, &new_scid, &token, header.version, &mut out) {
            let _ = self.out.socket.send_to(&out[..n], from);
            Metrics::inc(&self.ctx.metrics.retries_sent_total);
        }
    }

    fn reap(&mut self) {
        let now = Instant::now();
        let closed: Vec<_> = self
            .clients
            .iter()
            .filter(|(_, c)| c.conn.is_closed() || (c.poisoned && c.held.is_empty()) || (!c.conn.is_established() && now - c.accepted_at > HANDSHAKE_TIMEOUT))
            .map(|(id, _)| id.clone())
            .collect();
        for id in closed {
            if let Some(mut client) = self.clients.remove(&id) {
                // A poisoned client's state may be half updated: its bookkeeping may panic too.
                let _ = std::panic::catch_unwind(AssertUnwindSafe(|| {
                    client.wt.count_sent_datagrams(&client.conn, &self.ctx);
                    client.wt.on_close(&self.ctx);
                }));
                let stats = client.conn.stats();
                Metrics::add(&self.ctx.metrics.quic_packets_sent_total, stats.sent as u64);
                Metrics::add(&self.ctx.metrics.quic_packets_lost_total, stats.lost as u64);
                Metrics::dec(&self.ctx.metrics.connections_active);
            }
            self.aliases.retain(|_, v| *v != id);
        }
    }

    /// Rebuilds the quiche configuration when the certificate store serves another pair than the
    /// one it was built with (a rotation, a SIGHUP reload, the next certificate of `--cert-dir`).
    /// Called before every accept, never only at the end of a round: a client that saw the new
    /// hash over HTTPS may send its Initial before the loop's next round, and would otherwise be
    /// handed the old certificate, which it does not pin. A pair that does not load is logged
    /// once and the one in service stays.
    fn refresh_certificate(&mut self) {
        let generation = self.ctx.certs.current().generation;
        if generation == self.cert_generation {
            return;
        }
        match quiche_config(&self.ctx) {
            Ok(config) => self.quiche_config = config,
            Err(e) => tracing::error!(generation, "loading the certificate for QUIC failed, keeping the one in service: {e:#}"),
        }
        self.cert_generation = generation;
    }
}

/// Sends what `client` has (see `Server::flush`); a poisoned client only sends its close.
fn flush_client(out: &mut udp::UdpOut, ctx: &QuicContext, client: &mut Client, now: Instant, blocked: &mut bool) {
    let mut packet = [0u8; MAX_UDP_PAYLOAD];
    while let Some((batch, at)) = client.held.front() {
        if *at > now + PACING_SLACK {
            return;
        }
        match out.send(batch) {
            Ok(()) => {
                client.held.pop_front();
            }
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {
                *blocked = true;
                return;
            }
            Err(e) => {
                tracing::debug!("send: {e}");
                client.held.pop_front();
            }
        }
    }
    let mut batch = udp::Batch::default();
    let mut refilled = false;
    loop {
        let queued = client.conn.dgram_send_queue_len();
        let (n, info) = match client.conn.send(&mut packet) {
            Ok(v) => {
                client.wt.packet_sent(v.0, client.conn.dgram_send_queue_len() < queued, now);
                v
            }
            // quiche has nothing more: top its queues up from ours once, then try again.
            Err(quiche::Error::Done) if !refilled && !client.poisoned => {
                client.wt.process(&mut client.conn, ctx, now);
                refilled = true;
                continue;
            }
            // Datagrams wait that do not fit the window's tail: fill it (see fill_window).
            Err(quiche::Error::Done) if !client.poisoned && client.wt.fill_window(&mut client.conn, ctx, now) => continue,
            Err(quiche::Error::Done) => break,
            Err(e) => {
                tracing::debug!("send: {e}");
                let _ = client.conn.close(false, 0x1, b"send failed");
                break;
            }
        };
        refilled = false;
        if info.at > now + PACING_SLACK {
            let mut later = udp::Batch::default();
            later.push(&packet[..n], info.to);
            client.held.push_back((later, info.at));
            break;
        }
        if !batch.accepts(n, info.to) && !transmit(out, &mut batch, client, blocked) {
            // Blocked: this packet waits behind the batch.
            let mut rest = udp::Batch::default();
            rest.push(&packet[..n], info.to);
            client.held.push_back((rest, Instant::now() + SEND_RETRY));
            break;
        }
        batch.push(&packet[..n], info.to);
        if batch.is_full() && !transmit(out, &mut batch, client, blocked) {
            break;
        }
    }
    // A paced packet may sit behind this batch in `held`: the batch is older and goes first.
    if !batch.is_empty() {
        let paced = client.held.pop_back();
        transmit(out, &mut batch, client, blocked);
        client.held.extend(paced);
    }
}

/// Runs `work` on one client; when it panics, that connection is closed (INTERNAL_ERROR), counted
/// and logged, and the loop goes on with the others. A poisoned client's WebTransport state is
/// not trusted again: it only sends its close and is reaped.
fn guarded(client: &mut Client, ctx: &QuicContext, what: &str, work: impl FnOnce(&mut Client, &QuicContext)) {
    if std::panic::catch_unwind(AssertUnwindSafe(|| work(client, ctx))).is_ok() {
        return;
    }
    Metrics::inc(&ctx.metrics.connection_panics_total);
    tracing::error!("connection {}: a panic while {what}; closing this connection", client.conn.trace_id());
    client.poisoned = true;
    client.held.clear();
    let _ = std::panic::catch_unwind(AssertUnwindSafe(|| client.conn.close(false, INTERNAL_ERROR, b"internal error")));
}

/// The address a client counts under for the per-IP limits: IPv4 as it is (an IPv4-mapped IPv6
/// address as its IPv4), IPv6 by its /64 prefix, which a single host or subscriber usually holds
/// whole.
fn ip_key(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => IpAddr::V4(v4),
            None => IpAddr::V6(std::net::Ipv6Addr::from(u128::from(v6) & !((1u128 << 64) - 1))),
        },
    }
}

/// Sends `batch` now (it is emptied); when the socket's buffer is full it is kept, in order, as
/// the client's next packets to retry (quiche already counts them as sent, so dropping them would
/// be a self-inflicted loss). Returns whether the caller may go on sending.
fn transmit(out: &mut udp::UdpOut, batch: &mut udp::Batch, client: &mut Client, blocked: &mut bool) -> bool {
    let batch = std::mem::take(batch);
    if client.held.is_empty() {
        match out.send(&batch) {
            Ok(()) => return true,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
            Err(e) => {
                tracing::debug!("send: {e}");
                return true;
            }
        }
    }
    // Retried when the socket turns writable (POLLOUT) or after a short back-off.
    client.held.push_back((batch, Instant::now() + SEND_RETRY));
    *blocked = true;
    false
}

/// Waits until the socket is readable (or writable, when `writable` is asked for), the loader
/// has finished a job (`wake` readable: returns true) or `timeout` has passed. `ppoll` sleeps on
/// a high-resolution timer: `SO_RCVTIMEO`, used before, rounds up to scheduler ticks (4 ms and
/// more), which held every paced packet a tick and capped a connection at about one packet per
/// tick (~1.5 Mbit/s under BBR2, whose pacing spaces packets).
fn wait_for_socket(socket: &UdpSocket, wake: std::os::fd::RawFd, timeout: Duration, writable: bool) -> Result<bool> {
    use std::os::fd::AsRawFd;
    let events = if writable { libc::POLLIN | libc::POLLOUT } else { libc::POLLIN };
    let mut fds = [libc::pollfd { fd: socket.as_raw_fd(), events, revents: 0 }, libc::pollfd { fd: wake, events: libc::POLLIN, revents: 0 }];
    let timeout = libc::timespec { tv_sec: timeout.as_secs() as libc::time_t, tv_nsec: timeout.subsec_nanos() as libc::c_long };
    // SAFETY: two valid pollfds, a valid timespec, no signal mask.
    let r = unsafe { libc::ppoll(fds.as_mut_ptr(), 2, &timeout, std::ptr::null()) };
    if r < 0 {
        let e = std::io::Error::last_os_error();
        if e.kind() != std::io::ErrorKind::Interrupted {
            return Err(e).context("ppoll on the QUIC socket");
        }
    }
    Ok(fds[1].revents & libc::POLLIN != 0)
}

pub(crate) fn quiche_config(ctx: &QuicContext) -> Result<quiche::Config> {
    let pair = ctx.certs.current();
    let mut c = quiche::Config::new(quiche::PROTOCOL_VERSION)?;
    c.load_cert_chain_from_pem_file(pair.cert_pem.to_str().context("certificate path is not UTF-8")?)?;
    c.load_priv_key_from_pem_file(pair.key_pem.to_str().context("key path is not UTF-8")?)?;
    c.set_application_protos(&[b"h3"])?;
    c.set_max_idle_timeout(30_000);
    c.set_max_recv_udp_payload_size(MAX_UDP_PAYLOAD);
    c.set_max_send_udp_payload_size(MAX_UDP_PAYLOAD);
    // What a client sends us is small (requests of at most 2 KiB, REPAIR/CANCEL, capsules,
    // SETTINGS), and quiche buffers out-of-order stream data up to these windows: keep them small
    // so a client cannot park megabytes per connection behind a gap.
    c.set_initial_max_data(1 << 20);
    c.set_initial_max_stream_data_bidi_local(16 << 20);
    c.set_initial_max_stream_data_bidi_remote(64 << 10);
    c.set_initial_max_stream_data_uni(64 << 10);
    c.set_initial_max_streams_bidi(1000);
    c.set_initial_max_streams_uni(100);
    c.set_disable_active_migration(true);
    c.enable_dgram(true, 1024, 1024);
    c.grease(false);
    congestion::configure(&mut c, ctx.config.cc, ctx.config.loss_tolerance);
    c.set_initial_rtt(ctx.config.initial_rtt);
    Ok(c)
}

/// Writes the connection's qlog into `dir` (created if missing) as `<trace id>.sqlog`.
fn attach_qlog(conn: &mut quiche::Connection, dir: &std::path::Path) {
    let path = dir.join(format!("{}.sqlog", conn.trace_id()));
    match std::fs::create_dir_all(dir).and_then(|()| std::fs::File::create(&path)) {
        Ok(file) => conn.set_qlog(Box::new(std::io::BufWriter::new(file)), "holoquic-origin".into(), conn.trace_id().to_owned()),
        Err(e) => tracing::warn!("qlog {}: {e}", path.display()),
    }
}
