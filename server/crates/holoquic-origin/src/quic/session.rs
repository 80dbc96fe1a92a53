//! The WebTransport session state machine of one QUIC connection, without I/O: it takes what the
//! peer sent (stream bytes, FIN, resets, datagrams) and says what to do about it as [`Action`]s
//! — accept a session, refuse a request, open an object request on a bidi stream, end a session
//! and its requests — or that the connection must close. It keeps the HTTP/3 side of the
//! connection (docs/protocol.md §2): the peer's control stream and SETTINGS, extended CONNECT,
//! the capsules on a session stream, and which bidi stream is what. `webtransport.rs` drives it
//! on a `quiche::Connection`; the unit tests (`session_tests.rs`) drive it with bytes alone.

use std::collections::{BTreeMap, HashMap};

use holoquic_proto::h3::{capsule_type, error_code, frame_type, split_datagram, CloseSession, Frame, WEBTRANSPORT_BIDI_SIGNAL};
use holoquic_proto::varint::Reader;
use holoquic_proto::DecodeError;

use super::action::Action;
use super::control::{ConnectionClose, UniStreams};
use super::headers::{self, RequestHead, MAX_HEADERS};
use crate::metrics::Metrics;

/// What the machine consults: where sessions may open, who may open them, and the counters it
/// keeps (sessions opened, refused and active, protocol errors, client datagrams dropped).
pub struct SessionEnv<'a> {
    /// The path of the WebTransport endpoint (`--wt-path`).
    pub wt_path: &'a str,
    /// Origins allowed to open sessions (`--allow-origin`); empty = any.
    pub allowed_origins: &'a [String],
    pub metrics: &'a Metrics,
    /// The origin is draining (shutting down): new sessions are refused with 503.
    pub draining: bool,
}

/// What a client bidi stream turned out to be.
enum Bidi {
    /// Not enough bytes yet to tell.
    Unknown(Vec<u8>),
    /// An HTTP/3 request; HEADERS being collected.
    Headers(Vec<u8>),
    /// An extended CONNECT we accept from `origin`, its 200 being written: what came after the
    /// HEADERS, and whether the stream finished, wait for [`SessionMachine::on_accept_sent`].
    Accepting { origin: String, rest: Vec<u8>, fin: bool },
    /// A WebTransport session stream (after our 200): HTTP/3 frames whose DATA payloads are
    /// capsules.
    Session(SessionStream),
    /// A WebTransport object request of the session on that stream (the driver holds it).
    Request { session: u64 },
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

struct Session {
    origin: String,
}

/// The sessions and streams of one connection, as far as the peer has opened them.
#[derive(Default)]
pub struct SessionMachine {
    bidi: BTreeMap<u64, Bidi>,
    uni: UniStreams,
    sessions: HashMap<u64, Session>,
    /// Set when the connection must close (error code, reason); the driver takes it.
    close: Option<ConnectionClose>,
    /// The actions of the event being handled.
    actions: Vec<Action>,
    /// The size of `bidi` at which `forget_finished_streams` next looks for streams to forget.
    prune_at: usize,
}

/// How many entries `bidi` may gain between two passes of `forget_finished_streams`.
const PRUNE_SLACK: usize = 64;

impl SessionMachine {
    pub fn session_count(&self) -> usize {
        self.sessions.len()
    }

    /// Unidirectional streams of the peer we hold state for.
    pub fn uni_stream_count(&self) -> usize {
        self.uni.len()
    }

    /// The streams of the open sessions (their CONNECT streams), in order.
    pub fn session_streams(&self) -> Vec<u64> {
        let mut streams: Vec<u64> = self.sessions.keys().copied().collect();
        streams.sort_unstable();
        streams
    }

    /// Whether the connection must close: the peer broke HTTP/3 on a stream that matters.
    pub fn must_close(&self) -> bool {
        self.close.is_some()
    }

    /// The error code and reason to close the connection with, once.
    pub fn take_close(&mut self) -> Option<ConnectionClose> {
        self.close.take()
    }

    /// Bytes read from a peer's stream; `fin` when the peer finished it.
    pub fn on_stream_data(&mut self, env: &SessionEnv, stream: u64, data: &[u8], fin: bool) -> Vec<Action> {
        // The stream ID's two low bits: client-initiated bidirectional (0) or unidirectional (2).
        match stream % 4 {
            0 => self.on_bidi(env, stream, data, fin),
            2 => self.uni.on_data(stream, data, fin, &mut self.close, &mut self.actions),
            _ => {}
        }
        std::mem::take(&mut self.actions)
    }

    /// The peer reset its side of `stream`: a session stream ends its session, a request its
    /// request, the control stream the connection.
    pub fn on_stream_reset(&mut self, env: &SessionEnv, stream: u64) -> Vec<Action> {
        match self.bidi.get(&stream) {
            Some(Bidi::Session(_)) => self.end_session(env, stream, false),
            Some(Bidi::Request { .. }) => {
                self.actions.push(Action::RequestReset { stream });
                self.bidi.insert(stream, Bidi::Done);
            }
            _ => {}
        }
        if self.uni.is_control(stream) {
            self.close = Some((error_code::H3_CLOSED_CRITICAL_STREAM, "control stream closed"));
        }
        std::mem::take(&mut self.actions)
    }

    /// Client datagrams are not part of our protocol: counted and dropped (never buffered).
    pub fn on_datagram(&mut self, env: &SessionEnv, datagram: &[u8]) {
        let _ = split_datagram(datagram);
        Metrics::inc(&env.metrics.client_datagrams_dropped_total);
    }

    /// Whether the 200 of an [`Action::Accept`] was written: if so the session is open (and
    /// what followed its CONNECT is read), if not the request is refused with 500.
    pub fn on_accept_sent(&mut self, env: &SessionEnv, stream: u64, sent: bool) -> Vec<Action> {
        let Some(Bidi::Accepting { .. }) = self.bidi.get(&stream) else { return Vec::new() };
        let Some(Bidi::Accepting { origin, rest, fin }) = self.bidi.remove(&stream) else { unreachable!("just matched") };
        if !sent {
            self.refuse(env, stream, "500", "");
            return std::mem::take(&mut self.actions);
        }
        self.sessions.insert(stream, Session { origin });
        self.bidi.insert(stream, Bidi::Session(SessionStream { frames: rest, capsules: Vec::new() }));
        Metrics::inc(&env.metrics.sessions_total);
        Metrics::inc(&env.metrics.sessions_active);
        tracing::debug!(session = stream, origin = %self.sessions[&stream].origin, "WebTransport session open");
        self.read_session(env, stream, fin);
        std::mem::take(&mut self.actions)
    }

    /// Requests the driver has finished with (ended and fully written): their streams are done.
    pub fn requests_finished(&mut self, streams: impl IntoIterator<Item = u64>) {
        for stream in streams {
            self.bidi.insert(stream, Bidi::Done);
        }
    }

    /// Bidirectional streams of the peer we hold state for (open ones, and finished ones whose
    /// peer may still send bytes).
    pub fn bidi_stream_count(&self) -> usize {
        self.bidi.len()
    }

    /// Forgets the done streams on which the peer can send nothing more (`peer_finished`: its
    /// FIN or reset has been read, or quiche has collected the stream). A done stream is kept
    /// until then so that late bytes on it are dropped rather than read as a new request; after
    /// that quiche delivers nothing more on it. Each finished request used to stay in the table
    /// for good (pruned only past 4096 per connection): ~130 bytes of heap per object request
    /// served, the origin's memory creeping up for as long as a session played.
    ///
    /// Runs once the table has grown by `PRUNE_SLACK` entries since the last pass, so its cost
    /// per request stays constant. What it keeps is bounded by quiche's limit on the peer's open
    /// streams.
    pub fn forget_finished_streams(&mut self, peer_finished: impl Fn(u64) -> bool) {
        if self.bidi.len() < self.prune_at {
            return;
        }
        self.bidi.retain(|&id, b| !(matches!(b, Bidi::Done) && peer_finished(id)));
        self.prune_at = self.bidi.len() + PRUNE_SLACK;
    }

    /// The origin closes every open session (it is draining): each session's requests stop and
    /// the driver writes our close capsule and FIN on its stream.
    pub fn close_all(&mut self, env: &SessionEnv) -> Vec<Action> {
        let open: Vec<u64> = self.sessions.keys().copied().collect();
        for session in open {
            self.end_session(env, session, true);
        }
        std::mem::take(&mut self.actions)
    }

    /// Called when the connection closes: sessions end.
    pub fn on_connection_closed(&mut self, env: &SessionEnv) {
        for _ in self.sessions.drain() {
            Metrics::dec(&env.metrics.sessions_active);
        }
    }
}

impl SessionMachine {
    fn on_bidi(&mut self, env: &SessionEnv, id: u64, data: &[u8], fin: bool) {
        let state = self.bidi.entry(id).or_insert_with(|| Bidi::Unknown(Vec::new()));
        match state {
            Bidi::Unknown(buf) => {
                buf.extend_from_slice(data);
                let mut r = Reader::new(buf);
                let Ok(first) = r.varint() else { return };
                if first == WEBTRANSPORT_BIDI_SIGNAL {
                    let Ok(session) = r.varint() else { return };
                    let rest = r.remaining().to_vec();
                    if !self.sessions.contains_key(&session) {
                        Metrics::inc(&env.metrics.protocol_errors_total);
                        self.actions.push(Action::RejectStream { stream: id, code: error_code::WEBTRANSPORT_BUFFERED_STREAM_REJECTED });
                        *state = Bidi::Done;
                        return;
                    }
                    *state = Bidi::Request { session };
                    self.actions.push(Action::OpenRequest { stream: id, session });
                    self.actions.push(Action::RequestData { stream: id, data: rest, fin });
                    return;
                }
                let rest = std::mem::take(buf);
                *state = Bidi::Headers(rest);
            }
            Bidi::Request { .. } => {
                self.actions.push(Action::RequestData { stream: id, data: data.to_vec(), fin });
                return;
            }
            Bidi::Headers(buf) => buf.extend_from_slice(data),
            Bidi::Session(session) => session.frames.extend_from_slice(data),
            // The driver answers an Accept before it reads on; kept in order all the same.
            Bidi::Accepting { rest, fin: finished, .. } => {
                rest.extend_from_slice(data);
                *finished |= fin;
                return;
            }
            Bidi::Done => {}
        }
        self.read_headers(env, id, fin);
        self.read_session(env, id, fin);
    }

    /// Takes a request's HEADERS frame apart once it is complete, skipping unknown frame types
    /// before it, and refuses what cannot be a request.
    fn read_headers(&mut self, env: &SessionEnv, id: u64, fin: bool) {
        while let Some(Bidi::Headers(buf)) = self.bidi.get_mut(&id) {
            match Frame::decode(buf) {
                Ok((frame, used)) if frame.kind == frame_type::HEADERS => {
                    let payload = frame.payload.to_vec();
                    // What came after the HEADERS is the session's first frames.
                    let rest = buf[used..].to_vec();
                    match headers::decode_request(&payload) {
                        Some(head) => self.on_request(env, id, head, rest, fin),
                        None => self.refuse(env, id, "400", "undecodable field section"),
                    }
                }
                // RFC 9114 §9: frame types we do not know (GREASE among them) are skipped.
                Ok((frame, used)) if !frame_type::is_defined(frame.kind) => {
                    buf.drain(..used);
                    continue;
                }
                Ok(_) => self.refuse(env, id, "400", "expected HEADERS"),
                Err(DecodeError::Incomplete) if buf.len() <= MAX_HEADERS => {}
                Err(_) => self.refuse(env, id, "400", "malformed request"),
            }
            break;
        }
    }

    /// Where an HTTP/3 request goes by its method: extended CONNECT may open a session; any other
    /// request is answered as HTTPS answers it (GET and HEAD served, the rest 405), and whatever
    /// the peer sends after its HEADERS (a body nobody reads) is dropped.
    fn on_request(&mut self, env: &SessionEnv, id: u64, head: RequestHead, rest: Vec<u8>, fin: bool) {
        match head.method.as_str() {
            "CONNECT" => self.on_connect(env, id, head, rest, fin),
            _ => {
                self.actions.push(Action::Serve { stream: id, head });
                self.bidi.insert(id, Bidi::Done);
            }
        }
    }

    /// An extended CONNECT: a session opens if it asks for our endpoint, from an allowed origin,
    /// and none is open yet.
    fn on_connect(&mut self, env: &SessionEnv, id: u64, head: RequestHead, rest: Vec<u8>, fin: bool) {
        if head.protocol != "webtransport" || head.path != env.wt_path {
            return self.refuse(env, id, "404", "no WebTransport endpoint at this path\n");
        }
        if !env.allowed_origins.is_empty() && !env.allowed_origins.contains(&head.origin) {
            return self.refuse(env, id, "403", "origin not allowed\n");
        }
        if env.draining {
            return self.refuse(env, id, "503", "the origin is shutting down\n");
        }
        // SETTINGS promised one session at a time (WT_MAX_SESSIONS = 1); the per-session request
        // limit is only a limit if a connection cannot open sessions without end.
        if !self.sessions.is_empty() {
            return self.refuse(env, id, "429", "one WebTransport session per connection at a time\n");
        }
        self.bidi.insert(id, Bidi::Accepting { origin: head.origin, rest, fin });
        self.actions.push(Action::Accept { stream: id });
    }

    /// Answers a request we do not serve with a status and a short body, then FIN.
    fn refuse(&mut self, env: &SessionEnv, id: u64, status: &'static str, body: &'static str) {
        if status != "500" {
            Metrics::inc(&env.metrics.sessions_refused_total);
        }
        self.actions.push(Action::Refuse { stream: id, status, body });
        self.bidi.insert(id, Bidi::Done);
    }

    /// Reads a session stream's capsules: the session ends on the peer's close capsule, on a
    /// malformed one (a protocol error) and on FIN.
    fn read_session(&mut self, env: &SessionEnv, id: u64, fin: bool) {
        if let Some(Bidi::Session(session)) = self.bidi.get_mut(&id) {
            let closing = session.take_capsules().unwrap_or_else(|()| {
                Metrics::inc(&env.metrics.protocol_errors_total);
                Some(0)
            });
            if closing.is_some() || fin {
                self.end_session(env, id, true);
            }
        }
    }

    /// Ends a session: its requests stop and their streams are reset, then (when the peer asked)
    /// our close capsule and FIN answer it.
    fn end_session(&mut self, env: &SessionEnv, session_id: u64, reply: bool) {
        if self.sessions.remove(&session_id).is_none() {
            return;
        }
        Metrics::dec(&env.metrics.sessions_active);
        for (id, stream) in self.bidi.iter_mut() {
            if matches!(stream, Bidi::Request { session } if *session == session_id) {
                self.actions.push(Action::RequestSessionGone { stream: *id });
                *stream = Bidi::Done;
            }
        }
        self.actions.push(Action::SessionClosed { stream: session_id, reply });
        self.bidi.insert(session_id, Bidi::Done);
    }
}
