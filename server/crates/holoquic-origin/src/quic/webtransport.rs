//! The WebTransport layer of one QUIC connection (docs/protocol.md §2), driving the raw
//! `quiche::Connection`: quiche's own `h3` module cannot carry WebTransport streams (findings
//! §1). This driver opens our control stream with SETTINGS, feeds what the peer sends (stream
//! bytes, FIN, resets, datagrams) to the session machine (`session.rs`), performs the actions it
//! returns, and runs the scheduler (`scheduler.rs`) over the object requests (`delivery.rs`)
//! and the writer of plain HTTP/3 answers (`http3.rs`) over GET and HEAD requests. When the
//! origin drains, it tells the peer at once (DRAIN_WEBTRANSPORT_SESSION on each session, an
//! HTTP/3 GOAWAY), refuses new sessions and requests and, once asked, closes its sessions with
//! their close capsule.

use std::time::Instant;

use holoquic_proto::h3::{capsule_type, frame_type, stream_type, CloseSession, Frame, Settings};

use super::action::Action;
use super::budget::ConnectionBudgets;
use super::headers;
use super::http3::Responses;
use super::path_report::PathReports;
use super::scheduler::Scheduler;
use super::session::{SessionEnv, SessionMachine};
use super::QuicContext;

/// Server-initiated unidirectional stream id of our control stream (the first one).
const OUR_CONTROL_STREAM: u64 = 3;
/// quiche's default stream priority (RFC 9218's default urgency, incremental), which session
/// streams have but while a drain notice waits on them.
const DEFAULT_PRIORITY: (u8, bool) = (3, true);

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
    /// The highest client-initiated bidirectional stream read from (what a GOAWAY counts from).
    highest_bidi: Option<u64>,
    /// Bytes owed on a stream that quiche could not take at once (objects had used its send
    /// capacity up): the drain's notices, written ahead of object bytes each round until out.
    notices: Vec<(u64, Vec<u8>)>,
    /// Each session's path stream, with its quarter-second PATH reports (path_report.rs).
    path_reports: PathReports,
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

    /// Bidirectional streams of the peer we hold state for.
    pub fn bidi_stream_count(&self) -> usize {
        self.sessions.bidi_stream_count()
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

    /// Tells the peer of an established connection that the origin drains, so it can move to
    /// another origin before this one closes: DRAIN_WEBTRANSPORT_SESSION on every open session's
    /// stream (a browser resolves the session's `draining` promise) and an HTTP/3 GOAWAY on our
    /// control stream naming the first request stream that will not be served (the one after
    /// the last read; requests on it or later would get 503). Sessions and requests under way go
    /// on until the drain closes them.
    pub fn announce_drain(&mut self, conn: &mut quiche::Connection) {
        let mut capsule = Vec::new();
        Frame::encode(capsule_type::DRAIN_WEBTRANSPORT_SESSION, &[], &mut capsule);
        let mut data = Vec::new();
        Frame::encode(frame_type::DATA, &capsule, &mut data);
        for stream in self.sessions.session_streams() {
            // Ahead of the objects under way (their urgency is 0 and up): the notice is worth
            // most early. Back to the default before the close capsule, which must follow them.
            let _ = conn.stream_priority(stream, 0, false);
            self.notices.push((stream, data.clone()));
        }
        let mut id = Vec::new();
        holoquic_proto::varint::put(&mut id, self.highest_bidi.map_or(0, |s| s + 4));
        let mut goaway = Vec::new();
        Frame::encode(frame_type::GOAWAY, &id, &mut goaway);
        self.notices.push((OUR_CONTROL_STREAM, goaway));
        self.open_control(conn);
        self.write_notices(conn);
    }

    /// Writes what it can of the notices owed (the GOAWAY only after our SETTINGS).
    fn write_notices(&mut self, conn: &mut quiche::Connection) {
        let control_opened = self.control_opened;
        self.notices.retain_mut(|(stream, bytes)| {
            if *stream == OUR_CONTROL_STREAM && !control_opened {
                return true;
            }
            match conn.stream_send(*stream, bytes, false) {
                Ok(n) => {
                    bytes.drain(..n);
                    !bytes.is_empty()
                }
                Err(quiche::Error::Done) => true,
                // The stream is gone: nobody to tell.
                Err(_) => false,
            }
        });
    }

    /// Opens our control stream with SETTINGS, once.
    fn open_control(&mut self, conn: &mut quiche::Connection) {
        if self.control_opened {
            return;
        }
        let mut buf = Vec::new();
        holoquic_proto::varint::put(&mut buf, stream_type::CONTROL);
        Settings::webtransport_origin().encode_frame(&mut buf);
        if conn.stream_send(OUR_CONTROL_STREAM, &buf, false).is_ok() {
            let _ = conn.stream_priority(OUR_CONTROL_STREAM, 0, false);
            self.control_opened = true;
        }
    }

    /// Whether an object request or a plain HTTP/3 answer is still under way (a drain waits for
    /// them before it closes the sessions).
    pub fn has_work_in_flight(&self) -> bool {
        self.scheduler.has_objects_in_flight() || self.responses.len() > 0
    }

    /// Closes every open session: its requests stop, and our CLOSE_WEBTRANSPORT_SESSION capsule
    /// and FIN go on its stream. Returns the session streams closed.
    pub fn close_sessions(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, now: Instant) -> Vec<u64> {
        self.write_notices(conn);
        for stream in self.sessions.session_streams() {
            let _ = conn.stream_priority(stream, DEFAULT_PRIORITY.0, DEFAULT_PRIORITY.1);
        }
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
        self.open_control(conn);
        self.write_notices(conn);
        self.path_reports.write(conn, &self.sessions.session_streams(), now);
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
        self.scheduler.write_streams(conn, ctx, now);
        self.scheduler.send_datagrams(conn, ctx, now);
        self.scheduler.report_departed(conn);
        self.scheduler.count_sent_datagrams(conn, ctx);
        self.scheduler.write_streams(conn, ctx, now);
        let finished = self.scheduler.collect(conn, ctx);
        self.sessions.requests_finished(finished);
        self.sessions.forget_finished_streams(|id| conn.stream_finished(id));
    }

    /// Fills the tail of the congestion window when datagrams wait that do not fit it; returns
    /// whether there is something new for quiche to send (see `Scheduler::fill_window`).
    pub fn fill_window(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, now: Instant) -> bool {
        self.scheduler.fill_window(conn, ctx, now)
    }

    /// quiche made a packet of `len` bytes, and its datagram queue shrank meanwhile or not
    /// (`Scheduler::packet_sent`). Called for every packet the connection sends.
    pub fn packet_sent(&mut self, len: usize, carried_datagram: bool, now: Instant) {
        self.scheduler.packet_sent(len, carried_datagram, now);
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
        if id.is_multiple_of(4) {
            self.highest_bidi = self.highest_bidi.max(Some(id));
        }
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
