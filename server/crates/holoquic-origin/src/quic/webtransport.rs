//! The WebTransport layer of one QUIC connection (docs/protocol.md §2), driving the raw
//! `quiche::Connection`: quiche's own `h3` module cannot carry WebTransport streams (findings
//! §1). This driver opens our control stream with SETTINGS, feeds what the peer sends (stream
//! bytes, FIN, resets, datagrams) to the session machine (`session.rs`), performs the actions it
//! returns, and runs the scheduler (`scheduler.rs`) over the object requests (`delivery.rs`)
//! and the writer of plain HTTP/3 answers (`http3.rs`) over GET and HEAD requests. When the
//! origin drains, it refuses new sessions and requests and, once asked, closes its sessions with
//! their close capsule.

use std::time::Instant;

use holoquic_proto::h3::{frame_type, stream_type, CloseSession, Frame, Settings};

use super::action::Action;
use super::budget::ConnectionBudgets;
use super::headers;
use super::http3::Responses;
use super::scheduler::Scheduler;
use super::session::{SessionEnv, SessionMachine};
use super::QuicContext;

/// Server-initiated unidirectional stream id of our control stream (the first one).
const OUR_CONTROL_STREAM: u64 = 3;

/// The WebTransport side of one QUIC connection.
#[derive(Default)]
pub struct Connection {
    control_opened: bool,
    sessions: SessionMachine,
    scheduler: Scheduler,
    responses: Responses,
    /// What this connection's requests may hold (made with its first request, from the limits).
    budgets: Option<ConnectionBudgets>,
    /// The origin is draining: new sessions and requests are refused (503).
    draining: bool,
}

impl Connection {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn session_count(&self) -> usize {
        self.sessions.session_count()
    }

    /// Unidirectional streams of the peer we hold state for.
    pub fn uni_stream_count(&self) -> usize {
        self.sessions.uni_stream_count()
    }

    /// Plain HTTP/3 answers still being written, and their body bytes not yet taken by quiche.
    pub fn http3_backlog(&self) -> (usize, usize) {
        (self.responses.len(), self.responses.queued_bytes())
    }

    /// Whether a request waits for the loader's workers (tests wait for them).
    pub fn waits_for_loader(&self) -> bool {
        self.scheduler.waits_for_loader() || self.responses.waits_for_loader()
    }

    /// The origin begins to drain: from now on new sessions and requests get 503.
    pub fn begin_drain(&mut self) {
        self.draining = true;
    }

    /// Whether an object request or a plain HTTP/3 answer is still under way (a drain waits for
    /// them before it closes the sessions).
    pub fn has_work_in_flight(&self) -> bool {
        self.scheduler.has_objects_in_flight() || self.responses.len() > 0
    }

    /// Closes every open session: its requests stop, and our CLOSE_WEBTRANSPORT_SESSION capsule
    /// and FIN go on its stream. Returns the session streams closed.
    pub fn close_sessions(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, now: Instant) -> Vec<u64> {
        let actions = self.sessions.close_all(&session_env(ctx, self.draining));
        let closed = actions.iter().filter_map(|a| if let Action::SessionClosed { stream, .. } = a { Some(*stream) } else { None }).collect();
        self.perform(conn, ctx, actions, now);
        closed
    }

    /// When the connection must close, the error code and reason to close it with (once).
    pub fn take_close(&mut self) -> Option<(u64, &'static str)> {
        self.sessions.take_close()
    }

    /// One round of work after packets arrived or a timer fired: read every readable stream and
    /// datagram, apply deadlines, write what is pending.
    pub fn process(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, now: Instant) {
        if !conn.is_established() || self.sessions.must_close() {
            return;
        }
        if !self.control_opened {
            let mut buf = Vec::new();
            holoquic_proto::varint::put(&mut buf, stream_type::CONTROL);
            Settings::webtransport_origin().encode_frame(&mut buf);
            if conn.stream_send(OUR_CONTROL_STREAM, &buf, false).is_ok() {
                let _ = conn.stream_priority(OUR_CONTROL_STREAM, 0, false);
                self.control_opened = true;
            }
        }
        let readable: Vec<u64> = conn.readable().collect();
        for id in readable {
            self.read_stream(conn, ctx, id, now);
            if self.sessions.must_close() {
                return;
            }
        }
        let mut buf = [0u8; 2048];
        while let Ok(n) = conn.dgram_recv(&mut buf) {
            self.sessions.on_datagram(&session_env(ctx, self.draining), &buf[..n]);
        }
        self.responses.write(conn);
        self.scheduler.on_time(now);
        self.scheduler.purge_ended(conn, ctx);
        self.scheduler.write_streams(conn, ctx);
        self.scheduler.send_datagrams(conn, ctx);
        self.scheduler.report_departed(conn);
        self.scheduler.count_sent_datagrams(conn, ctx);
        self.scheduler.write_streams(conn, ctx);
        let finished = self.scheduler.collect(conn, ctx);
        self.sessions.requests_finished(finished);
    }

    /// Fills the tail of the congestion window when datagrams wait that do not fit it; returns
    /// whether there is something new for quiche to send (see `Scheduler::fill_window`).
    pub fn fill_window(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext) -> bool {
        self.scheduler.fill_window(conn, ctx)
    }

    /// Adds the datagrams quiche has sent since the last call to `symbols_sent_total`; called
    /// once more when the connection is reaped.
    pub fn count_sent_datagrams(&mut self, conn: &quiche::Connection, ctx: &QuicContext) {
        self.scheduler.count_sent_datagrams(conn, ctx);
    }

    /// Called when the connection closes: sessions end.
    pub fn on_close(&mut self, ctx: &QuicContext) {
        self.sessions.on_connection_closed(&session_env(ctx, self.draining));
    }

    /// Reads stream `id` until it has nothing more, handing each piece to the session machine.
    fn read_stream(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, id: u64, now: Instant) {
        let mut buf = [0u8; 16 * 1024];
        loop {
            let (n, fin) = match conn.stream_recv(id, &mut buf) {
                Ok(v) => v,
                Err(quiche::Error::Done) => return,
                Err(_) => {
                    // Reset by the peer.
                    let actions = self.sessions.on_stream_reset(&session_env(ctx, self.draining), id);
                    self.perform(conn, ctx, actions, now);
                    return;
                }
            };
            let actions = self.sessions.on_stream_data(&session_env(ctx, self.draining), id, &buf[..n], fin);
            self.perform(conn, ctx, actions, now);
            if self.sessions.must_close() || fin {
                return;
            }
        }
    }

    /// Does what the session machine decided, in order.
    fn perform(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, actions: Vec<Action>, now: Instant) {
        for action in actions {
            match action {
                Action::StopSending { stream, code } => {
                    let _ = conn.stream_shutdown(stream, quiche::Shutdown::Read, code);
                }
                Action::RejectStream { stream, code } => {
                    let _ = conn.stream_shutdown(stream, quiche::Shutdown::Read, code);
                    let _ = conn.stream_shutdown(stream, quiche::Shutdown::Write, code);
                }
                Action::Accept { stream } => {
                    let sent = conn.stream_send(stream, &headers::session_accepted(), false).is_ok();
                    let next = self.sessions.on_accept_sent(&session_env(ctx, self.draining), stream, sent);
                    self.perform(conn, ctx, next, now);
                }
                Action::Refuse { stream, status, body } => {
                    let _ = conn.stream_send(stream, &headers::refusal(status, body), true);
                }
                Action::Serve { stream, head } => {
                    let budgets = self.budgets.get_or_insert_with(|| ConnectionBudgets::new(&ctx.config.limits));
                    self.responses.serve(conn, ctx, budgets, self.draining, stream, &head)
                }
                Action::OpenRequest { stream, session } => self.scheduler.open(stream, session, now),
                Action::RequestData { stream, data, fin } => {
                    let budgets = self.budgets.get_or_insert_with(|| ConnectionBudgets::new(&ctx.config.limits));
                    self.scheduler.feed(conn, ctx, budgets, self.draining, stream, &data, fin, now)
                }
                Action::RequestReset { stream } => self.scheduler.reset(conn, ctx, stream),
                Action::RequestSessionGone { stream } => self.scheduler.session_gone(conn, ctx, stream),
                Action::SessionClosed { stream, reply } => {
                    if reply {
                        let mut capsule = Vec::new();
                        CloseSession { code: 0, reason: String::new() }.encode_capsule(&mut capsule);
                        let mut out = Vec::new();
                        Frame::encode(frame_type::DATA, &capsule, &mut out);
                        let _ = conn.stream_send(stream, &out, true);
                    }
                }
            }
        }
    }
}

/// The session machine's view of the origin's configuration and metrics.
fn session_env(ctx: &QuicContext, draining: bool) -> SessionEnv<'_> {
    SessionEnv { wt_path: &ctx.config.wt_path, allowed_origins: &ctx.config.allowed_origins, metrics: &ctx.metrics, draining }
}
