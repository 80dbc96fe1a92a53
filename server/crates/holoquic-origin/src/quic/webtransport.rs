//! The HTTP/3 subset WebTransport needs, on one QUIC connection (docs/protocol.md §2), and the
//! sessions living on it. quiche's own `h3` module cannot carry WebTransport streams (findings
//! §1), so this drives the raw `quiche::Connection`: our control stream with SETTINGS, the
//! peer's control stream, extended CONNECT, capsules on the session stream, WebTransport bidi
//! streams (each an object request, `delivery.rs`) and datagrams.

use std::collections::{BTreeMap, HashMap};
use std::time::Instant;

use holoquic_proto::h3::{
    capsule_type, datagram_prefix, error_code, frame_type, split_datagram, stream_type, CloseSession, Frame, Settings, WEBTRANSPORT_BIDI_SIGNAL,
};
use holoquic_proto::varint::Reader;
use holoquic_proto::DecodeError;
use quiche::h3::qpack;
use quiche::h3::{Header, NameValue};

use super::delivery::{Ending, RequestEnv, RequestStream};
use super::QuicContext;
use crate::metrics::Metrics;

/// Server-initiated unidirectional stream id of our control stream (the first one).
const OUR_CONTROL_STREAM: u64 = 3;
/// Bytes of a HEADERS frame we accept.
const MAX_HEADERS: usize = 16 * 1024;

/// Datagram bytes kept queued inside quiche, at least. The queue is topped up to the congestion
/// window when that is larger: quiche treats a sender whose queued bytes are below the window's
/// free room as application-limited, and BBR2 then ignores its bandwidth samples (measured: with
/// a fixed 48-datagram queue BBR2 was "app-limited" all along at 14–16 of 20 Mbit/s).
/// Order and purging stay ours: at most one window waits in quiche, and an ended request's
/// leftovers are purged from it.
const QUICHE_DATAGRAM_QUEUE_MIN_BYTES: usize = 64 * 1024;

/// What a client bidi stream turned out to be.
enum Bidi {
    /// Not enough bytes yet to tell.
    Unknown(Vec<u8>),
    /// An HTTP/3 request; HEADERS being collected.
    Headers(Vec<u8>),
    /// A WebTransport session stream (after our 200): HTTP/3 frames whose DATA payloads are
    /// capsules.
    Session(SessionStream),
    /// A WebTransport object request.
    Request(Box<RequestStream>),
    /// Answered and finished on our side; further bytes are read and dropped.
    Done,
}

/// What a session stream has brought that is not used up yet. RFC 9297 §3.2: on HTTP/3 the
/// capsule protocol's data stream is the payload of the stream's DATA frames (browsers write each
/// capsule as a DATA frame; a capsule may also span several), so frames are taken apart first.
#[derive(Default)]
struct SessionStream {
    frames: Vec<u8>,
    capsules: Vec<u8>,
}

impl SessionStream {
    /// Takes the complete frames and capsules apart. `Some(code)` when the session ends: the
    /// peer's CLOSE_WEBTRANSPORT_SESSION code, or 0 for a malformed or oversized (> 64 KiB) frame
    /// or capsule, which are never buffered.
    fn take_capsules(&mut self) -> Result<Option<u32>, ()> {
        let Self { frames, capsules } = self;
        loop {
            match Frame::decode(frames) {
                Ok((frame, used)) => {
                    // HEADERS (trailers) and unknown or reserved frame types carry no capsules.
                    if frame.kind == frame_type::DATA {
                        capsules.extend_from_slice(frame.payload);
                    }
                    frames.drain(..used);
                }
                Err(DecodeError::Incomplete) => break,
                Err(_) => return Err(()),
            }
        }
        loop {
            match Frame::decode(capsules) {
                Ok((capsule, used)) => {
                    if capsule.kind == capsule_type::CLOSE_WEBTRANSPORT_SESSION {
                        return Ok(Some(CloseSession::decode(capsule.payload).map(|c| c.code).unwrap_or(0)));
                    }
                    // DRAIN and unknown capsules need nothing from us.
                    capsules.drain(..used);
                }
                Err(DecodeError::Incomplete) => return Ok(None),
                Err(_) => return Err(()),
            }
        }
    }
}

enum Uni {
    Unknown(Vec<u8>),
    /// The peer's control stream; SETTINGS seen or not.
    Control {
        buf: Vec<u8>,
        settings: bool,
    },
    /// QPACK streams (nothing we need: our dynamic table capacity is 0): read and dropped.
    Ignored,
    /// WT uni streams (not part of our protocol) and unknown types: refused with STOP_SENDING and
    /// forgotten at once (quiche reports no more data on them).
    Refused,
}

struct Session {
    prefix: Vec<u8>,
    origin: String,
}

/// The WebTransport side of one QUIC connection.
pub struct Connection {
    control_opened: bool,
    peer_control: Option<u64>,
    bidi: BTreeMap<u64, Bidi>,
    uni: HashMap<u64, Uni>,
    sessions: HashMap<u64, Session>,
    /// Datagrams handed to quiche so far, and those of them purged from its queue before sending:
    /// with quiche's own sent count they tell which hand-offs have left (its queue is FIFO).
    datagrams_handed: u64,
    datagrams_dropped: u64,
    /// quiche's count of datagrams sent, as far as it is in `symbols_sent_total`.
    datagrams_counted: u64,
    /// quiche's count of datagrams sent when the window's tail was last filled (`fill_window`).
    filled_at: Option<usize>,
    /// Set when the connection must close (error code, reason).
    pub close: Option<(u64, &'static str)>,
}

impl Default for Connection {
    fn default() -> Self {
        Self::new()
    }
}

impl Connection {
    pub fn new() -> Self {
        Self {
            control_opened: false,
            peer_control: None,
            bidi: BTreeMap::new(),
            uni: HashMap::new(),
            sessions: HashMap::new(),
            datagrams_handed: 0,
            datagrams_dropped: 0,
            datagrams_counted: 0,
            filled_at: None,
            close: None,
        }
    }

    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// Unidirectional streams of the peer we hold state for.
    pub fn uni_stream_count(&self) -> usize {
        self.uni.len()
    }

    /// One round of work after packets arrived or a timer fired: read every readable stream and
    /// datagram, apply deadlines, write what is pending. Returns the metric deltas to apply.
    pub fn process(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, now: Instant) {
        if !conn.is_established() || self.close.is_some() {
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
            if self.close.is_some() {
                return;
            }
        }
        self.read_datagrams(conn, ctx);
        for stream in self.bidi.values_mut() {
            if let Bidi::Request(request) = stream {
                request.on_time(now);
            }
        }
        self.purge_ended(conn, ctx);
        self.write_streams(conn, ctx);
        self.send_datagrams(conn, ctx);
        self.report_departed(conn);
        self.count_sent_datagrams(conn, ctx);
        self.write_streams(conn, ctx);
        self.collect(conn, ctx);
    }

    fn read_stream(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, id: u64, now: Instant) {
        let mut buf = [0u8; 16 * 1024];
        loop {
            let (n, fin) = match conn.stream_recv(id, &mut buf) {
                Ok(v) => v,
                Err(quiche::Error::Done) => return,
                Err(_) => {
                    // Reset by the peer: a session stream ends its session, a request its request.
                    self.on_stream_reset(conn, ctx, id);
                    return;
                }
            };
            // The stream ID's two low bits: client-initiated bidirectional (0) or unidirectional (2).
            match id % 4 {
                0 => self.on_bidi(conn, ctx, id, &buf[..n], fin, now),
                2 => self.on_uni(conn, id, &buf[..n], fin),
                _ => {}
            }
            if self.close.is_some() || fin {
                return;
            }
        }
    }

    fn on_uni(&mut self, conn: &mut quiche::Connection, id: u64, data: &[u8], fin: bool) {
        self.on_uni_data(conn, id, data);
        if Some(id) == self.peer_control {
            if fin && self.close.is_none() {
                self.close = Some((error_code::H3_CLOSED_CRITICAL_STREAM, "control stream finished"));
            }
        } else if fin || matches!(self.uni.get(&id), Some(Uni::Refused)) {
            // Nothing more comes on it: the peer may open streams for the life of the connection
            // (quiche renews the credit), so their state must not outlive them.
            self.uni.remove(&id);
        }
    }

    fn on_uni_data(&mut self, conn: &mut quiche::Connection, id: u64, data: &[u8]) {
        let state = self.uni.entry(id).or_insert_with(|| Uni::Unknown(Vec::new()));
        if let Uni::Unknown(buf) = state {
            buf.extend_from_slice(data);
            let mut r = Reader::new(buf);
            let kind = match r.varint() {
                Ok(k) => k,
                Err(_) => return,
            };
            let rest = r.remaining().to_vec();
            *state = match kind {
                stream_type::CONTROL => {
                    if self.peer_control.is_some() {
                        self.close = Some((error_code::H3_STREAM_CREATION_ERROR, "second control stream"));
                        return;
                    }
                    self.peer_control = Some(id);
                    Uni::Control { buf: rest, settings: false }
                }
                stream_type::QPACK_ENCODER | stream_type::QPACK_DECODER => Uni::Ignored,
                _ => {
                    // Unknown types (and WT uni streams, unused by our protocol) are refused politely.
                    let _ = conn.stream_shutdown(id, quiche::Shutdown::Read, error_code::H3_STREAM_CREATION_ERROR);
                    Uni::Refused
                }
            };
        } else if let Uni::Control { buf, .. } = state {
            buf.extend_from_slice(data);
        }
        if let Some(Uni::Control { buf, settings }) = self.uni.get_mut(&id) {
            loop {
                match Frame::decode(buf) {
                    Ok((frame, used)) => {
                        if !*settings && frame.kind != frame_type::SETTINGS {
                            self.close = Some((error_code::H3_MISSING_SETTINGS, "control stream must start with SETTINGS"));
                            return;
                        }
                        if frame.kind == frame_type::SETTINGS {
                            if *settings {
                                self.close = Some((error_code::H3_FRAME_UNEXPECTED, "second SETTINGS"));
                                return;
                            }
                            if Settings::decode(frame.payload).is_err() {
                                self.close = Some((error_code::H3_SETTINGS_ERROR, "malformed SETTINGS"));
                                return;
                            }
                            *settings = true;
                        }
                        buf.drain(..used);
                    }
                    // Incomplete frames stay bounded: `Frame::decode` refuses payloads over 64 KiB.
                    Err(DecodeError::Incomplete) => return,
                    Err(_) => {
                        self.close = Some((error_code::H3_FRAME_ERROR, "malformed frame on the control stream"));
                        return;
                    }
                }
            }
        }
    }

    fn on_bidi(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, id: u64, data: &[u8], fin: bool, now: Instant) {
        let state = self.bidi.entry(id).or_insert_with(|| Bidi::Unknown(Vec::new()));
        if let Bidi::Unknown(buf) = state {
            buf.extend_from_slice(data);
            let mut r = Reader::new(buf);
            let Ok(first) = r.varint() else { return };
            if first == WEBTRANSPORT_BIDI_SIGNAL {
                let Ok(session_id) = r.varint() else { return };
                let rest = r.remaining().to_vec();
                if !self.sessions.contains_key(&session_id) {
                    Metrics::inc(&ctx.metrics.protocol_errors_total);
                    let _ = conn.stream_shutdown(id, quiche::Shutdown::Read, error_code::WEBTRANSPORT_BUFFERED_STREAM_REJECTED);
                    let _ = conn.stream_shutdown(id, quiche::Shutdown::Write, error_code::WEBTRANSPORT_BUFFERED_STREAM_REJECTED);
                    *state = Bidi::Done;
                    return;
                }
                *state = Bidi::Request(Box::new(RequestStream::new(id, session_id, now)));
                self.feed_request(conn, ctx, id, &rest, fin, now);
                return;
            }
            let rest = std::mem::take(buf);
            *state = Bidi::Headers(rest);
        } else if let Bidi::Request(_) = state {
            self.feed_request(conn, ctx, id, data, fin, now);
            return;
        } else if let Bidi::Headers(buf) = state {
            buf.extend_from_slice(data);
        } else if let Bidi::Session(session) = state {
            session.frames.extend_from_slice(data);
        }
        while let Some(Bidi::Headers(buf)) = self.bidi.get_mut(&id) {
            match Frame::decode(buf) {
                Ok((frame, used)) if frame.kind == frame_type::HEADERS => {
                    let payload = frame.payload.to_vec();
                    // What came after the HEADERS is the session's first frames.
                    let rest = buf[used..].to_vec();
                    self.on_headers(conn, ctx, id, &payload);
                    if let Some(Bidi::Session(session)) = self.bidi.get_mut(&id) {
                        session.frames = rest;
                    }
                }
                // RFC 9114 §9: frame types we do not know (GREASE among them) are skipped.
                Ok((frame, used)) if !frame_type::is_defined(frame.kind) => {
                    buf.drain(..used);
                    continue;
                }
                Ok(_) => self.refuse(conn, ctx, id, "400", "expected HEADERS"),
                Err(DecodeError::Incomplete) if buf.len() <= MAX_HEADERS => {}
                Err(_) => self.refuse(conn, ctx, id, "400", "malformed request"),
            }
            break;
        }
        if let Some(Bidi::Session(session)) = self.bidi.get_mut(&id) {
            let closing = session.take_capsules().unwrap_or_else(|()| {
                Metrics::inc(&ctx.metrics.protocol_errors_total);
                Some(0)
            });
            if closing.is_some() || fin {
                self.end_session(conn, ctx, id, true);
            }
        }
    }

    fn feed_request(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, id: u64, data: &[u8], fin: bool, now: Instant) {
        let Some(Bidi::Request(request)) = self.bidi.get(&id) else { return };
        let session_id = request.session_id;
        let in_flight: Vec<u64> = self
            .bidi
            .iter()
            .filter_map(|(sid, b)| match b {
                Bidi::Request(r) if *sid != id && r.session_id == session_id && !r.is_done() => r.request_id(),
                _ => None,
            })
            .collect();
        let prefix = self.sessions.get(&session_id).map(|s| s.prefix.clone()).unwrap_or_default();
        let env = RequestEnv {
            content: &ctx.content,
            symbol_size: symbol_size(conn, prefix.len()),
            datagram_prefix: &prefix,
            may_start: in_flight.len() < ctx.config.limits.max_requests_per_session,
            id_in_use: &|rid| in_flight.contains(&rid),
        };
        if let Some(Bidi::Request(request)) = self.bidi.get_mut(&id) {
            let was_started = request.request_id().is_some();
            request.on_data(data, fin, now, &env);
            if !was_started && request.request_id().is_some() {
                let _ = conn.stream_priority(id, request.urgency, false);
                let outcome = request.outcome();
                if outcome.reliable {
                    Metrics::inc(&ctx.metrics.requests_reliable_total);
                } else if outcome.datagram {
                    Metrics::inc(&ctx.metrics.requests_datagram_total);
                    Metrics::add(&ctx.metrics.source_symbols_total, outcome.source_symbols);
                }
            }
        }
    }

    fn on_headers(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, id: u64, block: &[u8]) {
        let headers = match qpack::Decoder::new().decode(block, MAX_HEADERS as u64) {
            Ok(h) => h,
            Err(_) => return self.refuse(conn, ctx, id, "400", "undecodable field section"),
        };
        let get = |name: &str| headers.iter().find(|h| h.name() == name.as_bytes()).map(|h| String::from_utf8_lossy(h.value()).into_owned());
        let method = get(":method").unwrap_or_default();
        let protocol = get(":protocol").unwrap_or_default();
        let path = get(":path").unwrap_or_default();
        let origin = get("origin").unwrap_or_default();
        if method != "CONNECT" {
            return self.refuse(conn, ctx, id, "405", "this origin speaks WebTransport over HTTP/3; use HTTPS over TCP for other requests\n");
        }
        if protocol != "webtransport" || path != ctx.config.wt_path {
            return self.refuse(conn, ctx, id, "404", "no WebTransport endpoint at this path\n");
        }
        if !ctx.config.allowed_origins.is_empty() && !ctx.config.allowed_origins.contains(&origin) {
            return self.refuse(conn, ctx, id, "403", "origin not allowed\n");
        }
        // SETTINGS promised one session at a time (WT_MAX_SESSIONS = 1); the per-session request
        // limit is only a limit if a connection cannot open sessions without end.
        if !self.sessions.is_empty() {
            return self.refuse(conn, ctx, id, "429", "one WebTransport session per connection at a time\n");
        }
        let mut out = Vec::new();
        encode_headers(&[Header::new(b":status", b"200")], &mut out);
        if conn.stream_send(id, &out, false).is_err() {
            return self.refuse(conn, ctx, id, "500", "");
        }
        let mut prefix = Vec::new();
        datagram_prefix(id, &mut prefix);
        self.sessions.insert(id, Session { prefix, origin });
        self.bidi.insert(id, Bidi::Session(SessionStream::default()));
        Metrics::inc(&ctx.metrics.sessions_total);
        Metrics::inc(&ctx.metrics.sessions_active);
        tracing::debug!(session = id, origin = %self.sessions[&id].origin, "WebTransport session open");
    }

    /// Answers a request we do not serve with a status and a short body, then FIN.
    fn refuse(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, id: u64, status: &str, body: &str) {
        if status != "500" {
            Metrics::inc(&ctx.metrics.sessions_refused_total);
        }
        let mut out = Vec::new();
        encode_headers(&[Header::new(b":status", status.as_bytes()), Header::new(b"content-type", b"text/plain")], &mut out);
        if !body.is_empty() {
            Frame::encode(frame_type::DATA, body.as_bytes(), &mut out);
        }
        let _ = conn.stream_send(id, &out, true);
        self.bidi.insert(id, Bidi::Done);
    }

    fn on_stream_reset(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, id: u64) {
        match self.bidi.get(&id) {
            Some(Bidi::Session(_)) => self.end_session(conn, ctx, id, false),
            Some(Bidi::Request(_)) => {
                if let Some(Bidi::Request(r)) = self.bidi.get_mut(&id) {
                    r.on_stopped();
                    Self::count_outcome(ctx, r);
                    if let Some(header) = r.take_purge() {
                        self.datagrams_dropped += purge_queued(conn, ctx, &header);
                    }
                }
                let _ = conn.stream_shutdown(id, quiche::Shutdown::Write, 0);
                self.bidi.insert(id, Bidi::Done);
            }
            _ => {}
        }
        if Some(id) == self.peer_control {
            self.close = Some((error_code::H3_CLOSED_CRITICAL_STREAM, "control stream closed"));
        }
    }

    /// Ends a session: its requests stop, its streams are reset, and (when the peer asked) our
    /// close capsule and FIN answer it.
    fn end_session(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext, session_id: u64, reply: bool) {
        if self.sessions.remove(&session_id).is_none() {
            return;
        }
        Metrics::dec(&ctx.metrics.sessions_active);
        for (id, stream) in self.bidi.iter_mut() {
            if let Bidi::Request(r) = stream {
                if r.session_id == session_id {
                    r.on_session_closing();
                    if let Some(header) = r.take_purge() {
                        self.datagrams_dropped += purge_queued(conn, ctx, &header);
                    }
                    let _ = conn.stream_shutdown(*id, quiche::Shutdown::Write, error_code::WEBTRANSPORT_SESSION_GONE);
                    let _ = conn.stream_shutdown(*id, quiche::Shutdown::Read, error_code::WEBTRANSPORT_SESSION_GONE);
                    *stream = Bidi::Done;
                }
            }
        }
        if reply {
            let mut capsule = Vec::new();
            CloseSession { code: 0, reason: String::new() }.encode_capsule(&mut capsule);
            let mut out = Vec::new();
            Frame::encode(frame_type::DATA, &capsule, &mut out);
            let _ = conn.stream_send(session_id, &out, true);
        }
        self.bidi.insert(session_id, Bidi::Done);
    }

    /// Client datagrams are not part of our protocol: counted and dropped (never buffered).
    fn read_datagrams(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext) {
        let mut buf = [0u8; 2048];
        while let Ok(n) = conn.dgram_recv(&mut buf) {
            let _ = split_datagram(&buf[..n]);
            Metrics::inc(&ctx.metrics.client_datagrams_dropped_total);
        }
    }

    /// The most urgent (lowest) urgency among requests with queued datagrams, and among reliable
    /// requests with object bytes still to hand to QUIC.
    ///
    /// quiche alternates packets between DATAGRAM and STREAM frames whenever both are waiting, so
    /// it cannot rank one kind against the other; the origin does, by handing QUIC only the kind
    /// whose most urgent request is at least as urgent as the other kind's (equal urgencies
    /// share). Without it, the datagrams of objects nobody looks at took half the link from the
    /// reliable objects in view (qpr-fec).
    fn most_urgent(&self) -> (Option<u8>, Option<u8>) {
        let (mut datagram, mut reliable) = (None::<u8>, None::<u8>);
        for b in self.bidi.values() {
            if let Bidi::Request(r) = b {
                if r.has_datagrams() {
                    datagram = Some(datagram.map_or(r.urgency, |u| u.min(r.urgency)));
                }
                if r.has_reliable_body() {
                    reliable = Some(reliable.map_or(r.urgency, |u| u.min(r.urgency)));
                }
            }
        }
        (datagram, reliable)
    }

    /// Writes pending stream bytes of every request, most urgent first; the object bytes of a
    /// reliable request wait while datagrams of a more urgent request are queued.
    fn write_streams(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext) {
        let (datagram_urgency, _) = self.most_urgent();
        let mut order: Vec<(u8, u64)> = self
            .bidi
            .iter()
            .filter_map(|(id, b)| match b {
                Bidi::Request(r) => Some((r.urgency, *id)),
                _ => None,
            })
            .collect();
        order.sort();
        for (_, id) in order {
            let Some(Bidi::Request(r)) = self.bidi.get_mut(&id) else { continue };
            let yield_to_datagrams = datagram_urgency.is_some_and(|u| u < r.urgency);
            loop {
                // The response message goes; the object bytes wait for the datagrams.
                if yield_to_datagrams && r.has_reliable_body() && r.pending_is_body() {
                    break;
                }
                if let Ending::Reset(code) = r.ending {
                    if r.pending().is_empty() {
                        let _ = conn.stream_shutdown(id, quiche::Shutdown::Write, code);
                        break;
                    }
                }
                let fin = r.fin_with_pending();
                let pending_len = r.pending().len();
                if pending_len == 0 && !fin {
                    break;
                }
                match conn.stream_send(id, r.pending(), fin) {
                    Ok(n) => {
                        let body = r.wrote(n);
                        Metrics::add(&ctx.metrics.bytes_reliable_total, body);
                        if n == 0 || (pending_len == n && fin) {
                            break;
                        }
                    }
                    Err(quiche::Error::Done) => break,
                    Err(_) => {
                        // The client reset or stopped the stream: nothing more to write.
                        r.on_stopped();
                        break;
                    }
                }
            }
        }
    }

    /// The request whose symbols go next, in (urgency, deadline, request id) order: its urgency and
    /// stream id.
    fn next_datagram_request(&self) -> Option<(u8, u64)> {
        self.bidi
            .iter()
            .filter_map(|(id, b)| match b {
                Bidi::Request(r) if r.has_datagrams() => Some((r.urgency, r.deadline(), r.request_id(), *id)),
                _ => None,
            })
            .min_by(|a, b| (a.0, a.1.is_none(), a.1, a.2).cmp(&(b.0, b.1.is_none(), b.1, b.2)))
            .map(|(urgency, _, _, id)| (urgency, id))
    }

    /// Hands queued datagrams to quiche in (urgency, deadline, request id) order until its queue
    /// holds a congestion window (or `QUICHE_DATAGRAM_QUEUE_MIN_BYTES`), and none of a request
    /// less urgent than a reliable response still being written.
    fn send_datagrams(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext) {
        let (_, reliable_urgency) = self.most_urgent();
        let cwnd = conn.path_stats().find(|p| p.active).map_or(0, |p| p.cwnd);
        let target = cwnd.max(QUICHE_DATAGRAM_QUEUE_MIN_BYTES);
        while conn.dgram_send_queue_byte_size() < target && !conn.is_dgram_send_queue_full() {
            let Some((urgency, id)) = self.next_datagram_request() else { return };
            if reliable_urgency.is_some_and(|u| u < urgency) {
                return;
            }
            let Some(Bidi::Request(r)) = self.bidi.get_mut(&id) else { return };
            let Some(datagram) = r.peek_datagram() else { return };
            let len = datagram.len() as u64;
            match conn.dgram_send(datagram) {
                Ok(()) => {
                    self.datagrams_handed += 1;
                    r.datagram_sent(self.datagrams_handed);
                    Metrics::add(&ctx.metrics.bytes_datagram_total, len);
                }
                // Too big for the path (it shrank) or the queue is full: try again later.
                Err(_) => return,
            }
        }
    }

    /// Fills the tail of the congestion window when datagrams wait that do not fit it; returns
    /// whether there is something new for quiche to send.
    ///
    /// Why: quiche sends a DATAGRAM frame whole or not at all, so a datagram-only sender stops
    /// with up to one datagram of the window unused, and BBR2 reads that as (a) an
    /// application-limited sender (quiche calls `on_app_limited` when a send leaves room) and
    /// (b) a window not fully used, the one condition under which PROBE_UP raises `inflight_hi`.
    /// After a lossy round has cut `inflight_hi`, a datagram-only connection could then never
    /// raise it again: measured on the 5G walking trace with 1 % loss, its window sat at the
    /// 13.5 kB minimum and its rate at 1.7 Mbit/s while the link offered 40–60 (reliable streams,
    /// whose frames quiche splits to fill the window exactly, were unaffected). So the next
    /// symbol of the most urgent datagram request goes on its request stream instead (a SYMBOL
    /// message): stream data, which quiche splits to fill the tail exactly, and bytes the client
    /// needs anyway. At most one per window tail (until quiche has sent another datagram).
    pub fn fill_window(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext) -> bool {
        if conn.dgram_send_queue_len() == 0 {
            return false;
        }
        let sent = conn.stats().dgram_sent;
        if self.filled_at == Some(sent) {
            return false;
        }
        let Some((_, id)) = self.next_datagram_request() else { return false };
        let Some(Bidi::Request(r)) = self.bidi.get_mut(&id) else { return false };
        if !r.symbol_to_stream() {
            return false;
        }
        self.filled_at = Some(sent);
        Metrics::inc(&ctx.metrics.symbols_on_stream_total);
        Metrics::inc(&ctx.metrics.symbols_sent_total);
        self.write_streams(conn, ctx);
        true
    }

    /// Adds the datagrams quiche has sent since the last call to `symbols_sent_total` (every
    /// datagram the origin sends is a symbol). Counted as they leave, not as they are handed to
    /// quiche: some handed are purged from its queue at a deadline or cancel and never sent.
    /// Called as the connection is served and once more when it is reaped.
    pub fn count_sent_datagrams(&mut self, conn: &quiche::Connection, ctx: &QuicContext) {
        let sent = conn.stats().dgram_sent as u64;
        Metrics::add(&ctx.metrics.symbols_sent_total, sent - self.datagrams_counted);
        self.datagrams_counted = sent;
    }

    /// Tells datagram requests how many hand-offs have left quiche (sent or purged), so SENT
    /// goes out when a batch is really on the wire.
    fn report_departed(&mut self, conn: &quiche::Connection) {
        let departed = conn.stats().dgram_sent as u64 + self.datagrams_dropped;
        for stream in self.bidi.values_mut() {
            if let Bidi::Request(r) = stream {
                r.on_departed(departed);
            }
        }
    }

    /// Drops from quiche's queue the datagrams of requests that ended (deadline, cancel, FIN), and
    /// counts the cancels as they come.
    fn purge_ended(&mut self, conn: &mut quiche::Connection, ctx: &QuicContext) {
        for stream in self.bidi.values_mut() {
            if let Bidi::Request(r) = stream {
                if let Some(header) = r.take_purge() {
                    let purged = purge_queued(conn, ctx, &header);
                    self.datagrams_dropped += purged;
                    r.purged_in_quic(purged);
                }
                if r.take_cancel() {
                    Metrics::inc(&ctx.metrics.requests_cancelled_total);
                }
            }
        }
    }

    /// Forgets finished requests, applying their outcome to the metrics.
    fn collect(&mut self, _conn: &mut quiche::Connection, ctx: &QuicContext) {
        let done: Vec<u64> = self.bidi.iter().filter(|(_, b)| matches!(b, Bidi::Request(r) if r.is_done())).map(|(id, _)| *id).collect();
        for id in done {
            if let Some(Bidi::Request(mut r)) = self.bidi.insert(id, Bidi::Done) {
                Self::count_outcome(ctx, &mut r);
            }
        }
        // Bound the bookkeeping of finished streams: quiche has collected them too.
        if self.bidi.len() > 4096 {
            self.bidi.retain(|_, b| !matches!(b, Bidi::Done));
        }
    }

    /// Applies a finished request's outcome to the metrics (once: the request is dropped after).
    fn count_outcome(ctx: &QuicContext, r: &mut RequestStream) {
        let m = &ctx.metrics;
        if r.take_cancel() {
            Metrics::inc(&m.requests_cancelled_total);
        }
        let o = r.outcome();
        if o.failed {
            Metrics::inc(&m.requests_failed_total);
        }
        Metrics::add(&m.repair_requests_total, o.repair_requests);
        Metrics::add(&m.repair_symbols_total, o.repair_symbols);
        Metrics::add(&m.datagrams_purged_total, o.purged);
        if o.deadline_missed {
            Metrics::inc(&m.deadline_misses_total);
        }
    }

    /// Called when the connection closes: sessions end.
    pub fn on_close(&mut self, ctx: &QuicContext) {
        for _ in self.sessions.drain() {
            Metrics::dec(&ctx.metrics.sessions_active);
        }
    }
}

/// Removes the queued datagrams starting with `header` (one request's) from quiche's queue;
/// returns how many went.
fn purge_queued(conn: &mut quiche::Connection, ctx: &QuicContext, header: &[u8]) -> u64 {
    let purged = std::cell::Cell::new(0u64);
    conn.dgram_purge_outgoing(|d: &[u8]| {
        let hit = d.starts_with(header);
        purged.set(purged.get() + u64::from(hit));
        hit
    });
    Metrics::add(&ctx.metrics.datagrams_purged_total, purged.get());
    purged.get()
}

/// Largest symbol (multiple of 8, RaptorQ's alignment) that fits one datagram after the quarter
/// stream id, the request id (≤ 8 bytes) and the 4-byte payload id; None without datagrams or
/// with room for less than 64 bytes (a symbol that small would cost more in headers than it carries).
fn symbol_size(conn: &quiche::Connection, prefix_len: usize) -> Option<u16> {
    let room = conn.dgram_max_writable_len()?.saturating_sub(prefix_len + 8 + 4);
    (room >= 64).then(|| ((room / 8) * 8).min(1400) as u16)
}

fn encode_headers(headers: &[Header], out: &mut Vec<u8>) {
    let mut block = vec![0u8; 1024];
    let n = qpack::Encoder::new().encode(headers, &mut block).expect("a small field section fits 1 KiB");
    Frame::encode(frame_type::HEADERS, &block[..n], out);
}
