//! Object delivery on one request stream (docs/protocol.md §3), without I/O: bytes read from the
//! stream go in, and out come bytes to write on the stream, object datagrams to send, and how the
//! stream ends (FIN or reset). The QUIC loop moves them between this and quiche.
//!
//! A request is `reliable` (RESPONSE, the object bytes, FIN) or `datagram`: the object is
//! RaptorQ-encoded, its source symbols and the planned repair symbols are queued as datagrams,
//! SENT reports each finished batch, REPAIR asks for fresh repair symbols, and the client's FIN or
//! CANCEL (or the deadline) purges whatever is still queued and ends the stream with END.
//!
//! The object is never read on the QUIC thread: after the REQUEST the request waits
//! (`delivery/load.rs`) while the loader's workers read it (and build its encoders when repair is
//! planned); nothing is on the stream until then, and the loop serves every other request.
//!
//! Here: the request's life (REQUEST, response, endings, what to write on the stream);
//! `delivery/load.rs`: waiting for the object; `delivery/datagram.rs`: the datagram side;
//! `delivery/tests.rs`: the tests.

use std::sync::Arc;
use std::time::{Duration, Instant};

use bytes::Bytes;
use holoquic_proto::h3::webtransport_error_to_h3;
use holoquic_proto::object::{EndReason, MAX_MESSAGE_BODY, MAX_REQUEST_LEN};
use holoquic_proto::{DecodeError, Delivery, Message, Request, Response, ResponseBody};

use super::budget::{ByteBudget, Reservation};
use super::loader::{Loader, Poll};
use crate::content::ContentError;

mod datagram;
mod load;
#[cfg(test)]
mod tests;

use datagram::{DatagramSend, EndMessage};
use load::{LoadError, Loaded, Loading};
#[cfg(test)]
pub use load::{PANIC_PATH, SLOW_PREFIX, SLOW_READ};

/// WebTransport application error code of a reliable response cut at its deadline.
pub const WT_DEADLINE: u32 = 0x10;
/// WebTransport application error code for a malformed request stream.
pub const WT_BAD_REQUEST: u32 = 0x01;
/// WebTransport application error code of a request stream that sent no REQUEST in time.
pub const WT_REQUEST_TIMEOUT: u32 = 0x11;

/// How long a new request stream may take to deliver its REQUEST before it is reset: a real
/// client writes it with the stream's first bytes, and a stream left empty holds state and a
/// stream credit of the connection.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(10);

pub use datagram::repair_budget;

/// What a request needs from its connection and session.
pub struct RequestEnv<'a> {
    /// Reads objects and builds encoders off the QUIC thread; holds the origin's byte budget.
    pub loader: &'a Arc<Loader>,
    /// Object bytes the requests of this connection may hold (`--max-held-bytes-per-connection`).
    pub connection_budget: &'a Arc<ByteBudget>,
    /// Loader jobs this connection may have queued or running (`--max-queued-loads-per-connection`).
    pub connection_loads: &'a Arc<ByteBudget>,
    /// The origin is draining (shutting down): new requests are refused with 503.
    pub draining: bool,
    /// Largest symbol that fits a datagram after all prefixes (multiple of 8); None when the
    /// connection cannot carry datagrams of a useful size (the peer did not negotiate them).
    pub symbol_size: Option<u16>,
    /// `quarter stream id` prefix of the session, prepended to every datagram.
    pub datagram_prefix: &'a [u8],
    /// Whether another request may start now (concurrency limit of the session).
    pub may_start: bool,
    /// Whether this request id is already in use in the session.
    pub id_in_use: &'a dyn Fn(u64) -> bool,
}

/// How the stream must end once `out` is written.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    Open,
    /// FIN after the pending bytes.
    Fin,
    /// Reset the sending side with this HTTP/3 error code (pending bytes are dropped).
    Reset(u64),
}

/// Counters a request reports to the origin's metrics.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Outcome {
    pub reliable: bool,
    pub datagram: bool,
    /// Source symbols of a datagram object (K summed over its blocks).
    pub source_symbols: u64,
    pub failed: bool,
    pub repair_requests: u64,
    pub repair_symbols: u64,
    pub purged: u64,
    pub deadline_missed: bool,
    /// The client cancelled, stopped or reset the request before it completed.
    pub cancelled: bool,
    /// Answered 503: the loader's queue or a byte budget was full.
    pub shed: bool,
}

enum State {
    AwaitRequest,
    /// The REQUEST is read, its object is being loaded; nothing to write yet.
    Loading(Box<Loading>),
    Reliable {
        body: Bytes,
        offset: usize,
    },
    Datagram(Box<DatagramSend>),
    Ended,
}

pub struct RequestStream {
    pub stream_id: u64,
    pub session_id: u64,
    received_at: Instant,
    deadline: Option<Instant>,
    /// Path, RESPONSE status and object size, for the metrics and the access log (`end_report`).
    log: (String, u16, u64),
    /// Why the request failed ("" while it has not), for the access log.
    reason: String,
    pub urgency: u8,
    /// The REQUEST asked for datagram delivery: the stream then carries only messages about the
    /// object (RESPONSE, SENT, END, now and then one SYMBOL), see `stream_urgency`.
    datagram: bool,
    /// The cancel has been counted in the metrics (see `take_cancel`).
    cancel_reported: bool,
    request_id: Option<u64>,
    inbuf: Vec<u8>,
    out: Vec<u8>,
    pub ending: Ending,
    state: State,
    outcome: Outcome,
    /// Header of datagrams still sitting in QUIC's queue that must be dropped (request ended).
    purge: Option<Vec<u8>>,
    /// The END at the tail of `out`, until written: what `purged_in_quic` may correct.
    end_message: Option<EndMessage>,
    /// The object bytes this request holds, in the connection's and the origin's budgets.
    held: Option<Reservation>,
    /// The start of the response has been counted in the metrics (see `take_started`).
    start_reported: bool,
}

impl RequestStream {
    pub fn new(stream_id: u64, session_id: u64, now: Instant) -> Self {
        Self {
            stream_id,
            session_id,
            received_at: now,
            deadline: None,
            log: (String::new(), 0, 0),
            reason: String::new(),
            urgency: 3,
            datagram: false,
            cancel_reported: false,
            request_id: None,
            inbuf: Vec::new(),
            out: Vec::new(),
            ending: Ending::Open,
            state: State::AwaitRequest,
            outcome: Outcome::default(),
            purge: None,
            end_message: None,
            held: None,
            start_reported: false,
        }
    }

    pub fn request_id(&self) -> Option<u64> {
        self.request_id
    }

    /// The urgency quiche gives this request's stream (quiche orders streams by this number, any
    /// u8, then by stream id). A datagram request's stream carries small messages the client
    /// needs as soon as they exist — RESPONSE (without it the client cannot decode symbols that
    /// already arrived), SENT (it starts the client's repair timer) and END — so it goes ahead of
    /// every object's bytes: 0, and a reliable request's stream, which carries its object, one
    /// below its request's urgency (1–8). The symbols themselves are ranked by the request's
    /// urgency in the scheduler, as before. At the request's own urgency these messages queued
    /// behind other streams' object bytes, a later segment's too: the symbols of an object out of
    /// view arrived while its RESPONSE waited, so the player saw the object complete up to a
    /// second late, its throughput samples read low and its repair on demand started late.
    pub fn stream_urgency(&self) -> u8 {
        if self.datagram {
            0
        } else {
            self.urgency + 1
        }
    }

    /// Deadline, for the scheduler's ordering (None = no deadline, sorts last).
    pub fn deadline(&self) -> Option<Instant> {
        self.deadline
    }

    pub fn outcome(&self) -> Outcome {
        self.outcome
    }

    /// What the metrics and the access log record of this request, ending at `now`.
    pub fn end_report(&self, peer: Option<std::net::SocketAddr>, now: Instant) -> crate::metrics::RequestEnd<'_> {
        use crate::metrics::RequestDelivery;
        let o = &self.outcome;
        let delivery = if o.reliable {
            Some(RequestDelivery::Reliable)
        } else if o.datagram {
            Some(RequestDelivery::Datagram)
        } else {
            None
        };
        let (path, status, object_bytes) = (&self.log.0, self.log.1, self.log.2);
        let (received_at, deadline, cancelled, deadline_missed) = (self.received_at, self.deadline, o.cancelled, o.deadline_missed);
        let reason = &self.reason;
        crate::metrics::RequestEnd { path, delivery, status, reason, object_bytes, received_at, deadline, ended_at: now, cancelled, deadline_missed, peer }
    }

    /// Whether the request no longer needs the connection (ended and fully written).
    pub fn is_done(&self) -> bool {
        matches!(self.state, State::Ended) && self.out.is_empty() && self.ending != Ending::Open
    }

    /// Bytes read from the request stream; `fin` when the client finished its side.
    pub fn on_data(&mut self, data: &[u8], fin: bool, now: Instant, env: &RequestEnv<'_>) {
        if matches!(self.state, State::Ended) {
            return;
        }
        self.inbuf.extend_from_slice(data);
        loop {
            match Message::decode(&self.inbuf) {
                Ok((message, used)) => {
                    self.inbuf.drain(..used);
                    self.on_message(message, now, env);
                    if matches!(self.state, State::Ended) {
                        return;
                    }
                }
                Err(DecodeError::Incomplete) => {
                    let limit = if matches!(self.state, State::AwaitRequest) { MAX_REQUEST_LEN } else { MAX_MESSAGE_BODY + 16 };
                    if self.inbuf.len() > limit {
                        self.fail(400, "request message too long");
                    }
                    break;
                }
                Err(e) => {
                    self.fail(400, &format!("malformed message: {e}"));
                    return;
                }
            }
        }
        if fin {
            match &mut self.state {
                // The client gave up before asking: nothing to answer.
                State::AwaitRequest => self.end_silently(),
                // Reliable responses finish on their own; the client's FIN only ends its half.
                State::Reliable { .. } => {}
                State::Datagram(_) => self.end_datagram(EndReason::Completed),
                // Applied once the object is there (a datagram request then ends at once).
                State::Loading(loading) => loading.client_fin = true,
                State::Ended => {}
            }
        }
    }

    fn on_message(&mut self, message: Message, now: Instant, env: &RequestEnv<'_>) {
        match (&mut self.state, message) {
            (State::AwaitRequest, Message::Request(request)) => self.start(request, now, env),
            (State::AwaitRequest, _) => self.fail(400, "the first message must be REQUEST"),
            (State::Datagram(_), Message::Repair { symbols }) => self.repair(symbols, now),
            (State::Datagram(_), Message::Cancel) => {
                self.outcome.cancelled = true;
                self.end_datagram(EndReason::Cancelled);
            }
            (State::Loading(loading), Message::Repair { symbols }) => {
                loading.repair = Some(loading.repair.unwrap_or(0).saturating_add(symbols));
            }
            (State::Reliable { .. } | State::Loading(_), Message::Cancel) => {
                self.outcome.cancelled = true;
                self.state = State::Ended;
                self.out.clear();
                self.ending = Ending::Reset(webtransport_error_to_h3(0));
            }
            // Anything else from a client on a running request is a protocol error.
            (_, _) => self.fail(400, "unexpected message"),
        }
    }

    fn start(&mut self, request: Request, now: Instant, env: &RequestEnv<'_>) {
        if (env.id_in_use)(request.request_id) {
            return self.fail(400, "request id already in use in this session");
        }
        self.request_id = Some(request.request_id);
        self.urgency = request.urgency.min(7);
        self.datagram = request.delivery == Delivery::Datagram;
        self.received_at = now;
        self.deadline = (request.deadline_ms > 0).then(|| now + Duration::from_millis(request.deadline_ms));
        self.log.0.clone_from(&request.path);
        if !env.may_start {
            return self.fail(429, "too many concurrent requests in this session");
        }
        if env.draining {
            self.outcome.shed = true;
            return self.fail(503, "the origin is shutting down: ask another");
        }
        #[cfg(test)]
        if request.path == PANIC_PATH {
            panic!("test hook: a panic in one connection's handling");
        }
        if request.delivery == Delivery::Datagram && env.symbol_size.is_none() {
            return self.fail(400, "this connection carries no datagrams (not negotiated, or too small for a symbol)");
        }
        let datagram_header = self.datagram_header(env);
        match Loading::queue(request, env, datagram_header) {
            Some(loading) => self.state = State::Loading(Box::new(loading)),
            None => {
                self.outcome.shed = true;
                self.fail(503, "the origin is busy (too many objects being read): try again");
            }
        }
    }

    /// The object of a waiting request has been read (or could not be).
    fn loaded(&mut self, loading: Loading, result: Result<Loaded, LoadError>) {
        let Loaded { object, symbols, held } = match result {
            Ok(loaded) => loaded,
            Err(LoadError::Content(ContentError::NotFound)) => return self.fail(404, "no such object"),
            Err(LoadError::Content(ContentError::BadPath)) => return self.fail(400, "invalid object path"),
            Err(LoadError::Content(e @ ContentError::TooLarge { .. })) => return self.fail(413, &e.to_string()),
            Err(LoadError::Content(ContentError::Io(_))) => return self.fail(500, "could not read the object"),
            Err(LoadError::Content(e @ ContentError::Upstream { timed_out, .. })) => {
                tracing::warn!("content read failed: {e}");
                return self.fail(e.status(), ContentError::upstream_reason_for_client(timed_out));
            }
            Err(LoadError::OverBudget) => {
                self.outcome.shed = true;
                return self.fail(503, "the origin holds too many object bytes: try again");
            }
        };
        (self.log.1, self.log.2) = (200, object.len() as u64);
        self.held = Some(held);
        let Loading { request, loader, loads, client_fin, datagram_header, repair, .. } = loading;
        match (request.delivery, symbols) {
            (Delivery::Reliable, _) => {
                Message::Response(Response { status: 200, body: ResponseBody::Reliable { object_length: object.len() as u64 } }).encode(&mut self.out);
                self.outcome.reliable = true;
                self.state = State::Reliable { body: object, offset: 0 };
            }
            (Delivery::Datagram, None) => self.fail(400, "empty objects cannot be sent as datagrams"),
            (Delivery::Datagram, Some(symbols)) => {
                self.start_datagram(&request, symbols, datagram_header, loader, loads);
                if let Some(symbols) = repair {
                    self.repair(symbols, Instant::now());
                }
                if client_fin {
                    self.end_datagram(EndReason::Completed);
                }
            }
        }
    }

    /// Whether the request waits for its object (the loader's workers read it).
    pub fn is_loading(&self) -> bool {
        matches!(self.state, State::Loading(_))
    }

    /// True once, when the response has started (status 200): the request is counted then.
    pub fn take_started(&mut self) -> bool {
        let new = (self.outcome.reliable || self.outcome.datagram) && !self.start_reported;
        self.start_reported |= new;
        new
    }

    /// Answers with an error status and ends the stream.
    fn fail(&mut self, status: u16, message: &str) {
        message.clone_into(&mut self.reason);
        if matches!(self.state, State::AwaitRequest | State::Loading(_)) {
            self.log.1 = status;
            self.out.clear();
            Message::Response(Response { status, body: ResponseBody::Error { message: message.to_owned() } }).encode(&mut self.out);
            self.ending = Ending::Fin;
        } else {
            // A response is already under way: the stream can only be cut.
            self.ending = Ending::Reset(webtransport_error_to_h3(WT_BAD_REQUEST));
            self.out.clear();
        }
        self.outcome.failed = true;
        self.state = State::Ended;
    }

    fn end_silently(&mut self) {
        self.state = State::Ended;
        self.ending = Ending::Fin;
    }

    /// Called every round of the loop: takes a loaded object or built encoders, resets a stream
    /// that sent no REQUEST within `REQUEST_TIMEOUT`, and applies the deadline — queued
    /// datagrams are purged and END sent; a reliable response still being written, or an object
    /// still being read, is reset with WT_DEADLINE.
    pub fn on_time(&mut self, now: Instant) {
        match &mut self.state {
            State::AwaitRequest if now.saturating_duration_since(self.received_at) >= REQUEST_TIMEOUT => {
                self.outcome.failed = true;
                self.state = State::Ended;
                self.ending = Ending::Reset(webtransport_error_to_h3(WT_REQUEST_TIMEOUT));
                return;
            }
            State::Loading(loading) => match loading.ticket.poll() {
                Poll::Pending => {}
                Poll::Ready(result) => {
                    let State::Loading(loading) = std::mem::replace(&mut self.state, State::AwaitRequest) else { unreachable!() };
                    self.loaded(*loading, result);
                }
                Poll::Lost => self.fail(500, "could not read the object"),
            },
            State::Datagram(send) => send.poll_encoders(),
            _ => {}
        }
        let Some(deadline) = self.deadline else { return };
        if now < deadline {
            return;
        }
        match &self.state {
            State::Loading(_) => {
                self.outcome.deadline_missed = true;
                self.state = State::Ended;
                self.ending = Ending::Reset(webtransport_error_to_h3(WT_DEADLINE));
            }
            State::Datagram(send) if !send.queue.is_empty() => {
                self.outcome.deadline_missed = true;
                self.end_datagram(EndReason::DeadlinePassed);
            }
            State::Reliable { body, offset } if *offset < body.len() => {
                self.outcome.deadline_missed = true;
                self.state = State::Ended;
                self.out.clear();
                self.ending = Ending::Reset(webtransport_error_to_h3(WT_DEADLINE));
            }
            _ => {}
        }
    }

    /// Ends the request because the client stopped or reset its stream before it completed.
    /// Nothing more can be written on it: what waited (an END, say) is dropped, so the request
    /// is done at once instead of waiting for a write that can never happen.
    pub fn on_stopped(&mut self) {
        if !matches!(self.state, State::Ended) {
            self.outcome.cancelled = true;
        }
        self.on_session_closing();
        self.out.clear();
        if self.ending == Ending::Open {
            self.ending = Ending::Fin;
        }
    }

    /// Ends the request because its session is closing.
    pub fn on_session_closing(&mut self) {
        match &self.state {
            State::Datagram(_) => self.end_datagram(EndReason::SessionClosing),
            State::Ended => {}
            _ => {
                self.state = State::Ended;
                self.out.clear();
                self.ending = Ending::Reset(holoquic_proto::h3::error_code::WEBTRANSPORT_SESSION_GONE);
            }
        }
    }

    /// Bytes to write on the stream now (message bytes first, then object bytes).
    pub fn pending(&self) -> &[u8] {
        if !self.out.is_empty() {
            return &self.out;
        }
        match &self.state {
            State::Reliable { body, offset } => &body[*offset..],
            _ => &[],
        }
    }

    /// Whether FIN goes with the end of `pending()`.
    pub fn fin_with_pending(&self) -> bool {
        match &self.state {
            State::Reliable { .. } => self.out.is_empty(),
            _ => self.ending == Ending::Fin,
        }
    }

    /// `n` bytes of `pending()` were accepted by QUIC.
    pub fn wrote(&mut self, n: usize) -> u64 {
        if !self.out.is_empty() {
            self.out.drain(..n.min(self.out.len()));
            return 0;
        }
        if let State::Reliable { body, offset } = &mut self.state {
            *offset += n;
            if *offset >= body.len() {
                self.state = State::Ended;
                self.ending = Ending::Fin;
            }
            return n as u64;
        }
        0
    }

    /// Whether object bytes of a reliable response are still to be handed to QUIC (response
    /// messages do not count: they are small and always go at once).
    pub fn has_reliable_body(&self) -> bool {
        matches!(&self.state, State::Reliable { body, offset } if *offset < body.len())
    }

    /// Whether `pending()` is object bytes (no response message waiting before them).
    pub fn pending_is_body(&self) -> bool {
        self.out.is_empty()
    }

    /// True once, when the client has cancelled (or stopped, or reset) the request: counted as it
    /// happens, since the request itself may linger until its END can be written.
    pub fn take_cancel(&mut self) -> bool {
        let new = self.outcome.cancelled && !self.cancel_reported;
        self.cancel_reported |= new;
        new
    }

    /// The datagram header whose queued copies in QUIC must be dropped now (the request ended).
    pub fn take_purge(&mut self) -> Option<Vec<u8>> {
        self.purge.take()
    }
}
