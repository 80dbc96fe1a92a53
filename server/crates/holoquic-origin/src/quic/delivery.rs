//! Object delivery on one request stream (docs/protocol.md §3), without I/O: bytes read from the
//! stream go in, and out come bytes to write on the stream, object datagrams to send, and how the
//! stream ends (FIN or reset). The QUIC loop moves them between this and quiche.
//!
//! A request is `reliable` (RESPONSE, the object bytes, FIN) or `datagram`: the object is
//! RaptorQ-encoded, its source symbols and the planned repair symbols are queued as datagrams,
//! SENT reports each finished batch, REPAIR asks for fresh repair symbols, and the client's FIN or
//! CANCEL (or the deadline) purges whatever is still queued and ends the stream with END.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use bytes::Bytes;
use holoquic_proto::fec::{plan_repair, LossReport};
use holoquic_proto::h3::webtransport_error_to_h3;
use holoquic_proto::object::{EndReason, MAX_MESSAGE_BODY, MAX_REQUEST_LEN};
use holoquic_proto::{DecodeError, Delivery, FecMode, Message, ObjectDatagram, Request, Response, ResponseBody};

use super::symbols::{ObjectSymbols, SymbolRef};
use crate::content::{ContentError, ContentStore};

/// WebTransport application error code of a reliable response cut at its deadline.
pub const WT_DEADLINE: u32 = 0x10;
/// WebTransport application error code for a malformed request stream.
pub const WT_BAD_REQUEST: u32 = 0x01;

/// Most repair symbols one request may cost per source block of K source symbols, planned and
/// on demand together: 2K, at least 32. Without a bound a client could make the origin queue
/// symbols without end (a REPAIR is a few bytes and may ask for 65 535 per block, again and
/// again, on a request without deadline); with it, repair ESIs also stay far below RaptorQ's 2^24.
/// No real loss needs more: at 50 % loss, 2K repair symbols still leave a K-symbol margin.
pub fn repair_budget(source_symbols: u32) -> u32 {
    (2 * source_symbols).max(32)
}

/// What a request needs from its connection and session.
pub struct RequestEnv<'a> {
    pub content: &'a ContentStore,
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
}

enum State {
    AwaitRequest,
    Reliable { body: Bytes, offset: usize },
    Datagram(Box<DatagramSend>),
    Ended,
}

struct DatagramSend {
    symbols: ObjectSymbols,
    /// Next repair symbol index per source block (indices ≥ K are repair symbols).
    next_esi: Vec<u32>,
    /// Symbols still to send, in order; their datagrams are built when they are sent.
    queue: VecDeque<SymbolRef>,
    /// The datagram of the queue's front, once built by `peek_datagram`.
    front: Vec<u8>,
    symbols_sent: u64,
    purged: u64,
    /// A SENT is owed once every queued datagram has left the connection.
    sent_owed: bool,
    /// Connection-wide hand-off number of the last datagram given to QUIC (see `datagram_sent`).
    last_handed: u64,
    /// Prefix of every datagram of this request (quarter stream id + request id), to find them in
    /// QUIC's own queue.
    header: Vec<u8>,
}

pub struct RequestStream {
    pub stream_id: u64,
    pub session_id: u64,
    received_at: Instant,
    deadline: Option<Instant>,
    /// Path, RESPONSE status and object size, for the metrics and the access log (`end_report`).
    log: (String, u16, u64),
    pub urgency: u8,
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
}

/// An END encoded but not yet written, and its length in `out`.
#[derive(Debug, Clone, Copy)]
struct EndMessage {
    reason: EndReason,
    symbols_sent: u64,
    purged: u64,
    len: usize,
}

impl RequestStream {
    pub fn new(stream_id: u64, session_id: u64, now: Instant) -> Self {
        Self {
            stream_id,
            session_id,
            received_at: now,
            deadline: None,
            log: (String::new(), 0, 0),
            urgency: 3,
            cancel_reported: false,
            request_id: None,
            inbuf: Vec::new(),
            out: Vec::new(),
            ending: Ending::Open,
            state: State::AwaitRequest,
            outcome: Outcome::default(),
            purge: None,
            end_message: None,
        }
    }

    pub fn request_id(&self) -> Option<u64> {
        self.request_id
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
        crate::metrics::RequestEnd { path, delivery, status, object_bytes, received_at, deadline, ended_at: now, cancelled, deadline_missed, peer }
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
            (State::Reliable { .. }, Message::Cancel) => {
                self.outcome.cancelled = true;
                self.state = State::Ended;
                self.out.clear();
                self.ending = Ending::Reset(webtransport_error_to_h3(0));
            }
            // Anything else from a client on a running request is a protocol error.
            (_, _) => self.fail(400, "unexpected message"),
        }
    }

    /// REPAIR: `symbols` fresh repair symbols per source block, within the request's
    /// `repair_budget`, then a new SENT (which shows how many came).
    fn repair(&mut self, symbols: u64, now: Instant) {
        if self.deadline.is_some_and(|d| now >= d) {
            return; // after the deadline REPAIR is ignored
        }
        let State::Datagram(send) = &mut self.state else { return };
        let wanted = symbols.clamp(1, 65_535) as u32;
        let mut added = 0u64;
        for block in 0..send.symbols.block_count() {
            let k = send.symbols.source_symbols(block);
            let first = send.next_esi[block];
            let n = wanted.min(repair_budget(k).saturating_sub(first - k));
            send.queue.extend((first..first + n).map(|index| SymbolRef { block: block as u8, index }));
            send.next_esi[block] += n;
            added += u64::from(n);
        }
        send.sent_owed = true;
        self.outcome.repair_requests += 1;
        self.outcome.repair_symbols += added;
    }

    fn start(&mut self, request: Request, now: Instant, env: &RequestEnv<'_>) {
        if (env.id_in_use)(request.request_id) {
            return self.fail(400, "request id already in use in this session");
        }
        self.request_id = Some(request.request_id);
        self.urgency = request.urgency.min(7);
        self.received_at = now;
        self.deadline = (request.deadline_ms > 0).then(|| now + Duration::from_millis(request.deadline_ms));
        self.log.0.clone_from(&request.path);
        if !env.may_start {
            return self.fail(429, "too many concurrent requests in this session");
        }
        let object = match env.content.get(&request.path) {
            Ok(bytes) => bytes,
            Err(ContentError::NotFound) => return self.fail(404, "no such object"),
            Err(ContentError::BadPath) => return self.fail(400, "invalid object path"),
            Err(e @ ContentError::TooLarge { .. }) => return self.fail(413, &e.to_string()),
            Err(ContentError::Io(_)) => return self.fail(500, "could not read the object"),
        };
        (self.log.1, self.log.2) = (200, object.len() as u64);
        match request.delivery {
            Delivery::Reliable => {
                Message::Response(Response { status: 200, body: ResponseBody::Reliable { object_length: object.len() as u64 } }).encode(&mut self.out);
                self.outcome.reliable = true;
                self.state = State::Reliable { body: object, offset: 0 };
            }
            Delivery::Datagram => self.start_datagram(&request, object, env),
        }
    }

    fn start_datagram(&mut self, request: &Request, object: Bytes, env: &RequestEnv<'_>) {
        if object.is_empty() {
            return self.fail(400, "empty objects cannot be sent as datagrams");
        }
        let Some(symbol_size) = env.symbol_size else {
            return self.fail(400, "this connection carries no datagrams (not negotiated, or too small for a symbol)");
        };
        let mut symbols = ObjectSymbols::new(object, symbol_size);
        let oti = symbols.oti();
        let prefix = self.datagram_header(env);
        let mut queue = VecDeque::new();
        let mut next_esi = Vec::with_capacity(symbols.block_count());
        let mut total_source = 0u64;
        let mut planned = 0u64;
        for block in 0..symbols.block_count() {
            let k = u64::from(symbols.source_symbols(block));
            total_source += k;
            let repair = match request.fec_mode {
                FecMode::None => 0,
                FecMode::Planned => plan_repair(k, LossReport::from_wire(request.loss_ppm, request.burst_milli)),
                FecMode::Fixed => ((k * u64::from(request.overhead_permille)).div_ceil(1000)).min(2 * k),
            };
            planned = planned.max(repair);
            queue.extend((0..(k + repair) as u32).map(|index| SymbolRef { block: block as u8, index }));
            next_esi.push((k + repair) as u32);
        }
        let object_length = oti.transfer_length();
        if planned > 0 {
            symbols.prepare_repair();
        }
        Message::Response(Response {
            status: 200,
            body: ResponseBody::Datagram {
                object_length,
                oti: oti.serialize(),
                source_symbols: total_source,
                planned_repair: planned,
                first_repair_esi: u64::from(symbols.first_repair_esi(0)),
            },
        })
        .encode(&mut self.out);
        self.outcome.datagram = true;
        self.outcome.source_symbols = total_source;
        self.state = State::Datagram(Box::new(DatagramSend {
            symbols,
            next_esi,
            queue,
            front: Vec::new(),
            symbols_sent: 0,
            purged: 0,
            sent_owed: true,
            last_handed: 0,
            header: prefix,
        }));
    }

    fn datagram_header(&self, env: &RequestEnv<'_>) -> Vec<u8> {
        let mut header = env.datagram_prefix.to_vec();
        ObjectDatagram::encode_header(self.request_id.unwrap_or(0), &mut header);
        header
    }

    /// Answers with an error status and ends the stream.
    fn fail(&mut self, status: u16, message: &str) {
        if matches!(self.state, State::AwaitRequest) {
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

    fn end_datagram(&mut self, reason: EndReason) {
        if let State::Datagram(send) = &mut self.state {
            send.purged += send.queue.len() as u64;
            self.outcome.purged += send.queue.len() as u64;
            send.queue.clear();
            send.front.clear();
            self.purge = Some(std::mem::take(&mut send.header));
            let end = EndMessage { reason, symbols_sent: send.symbols_sent, purged: send.purged, len: 0 };
            self.push_end(end);
            self.ending = Ending::Fin;
            self.state = State::Ended;
        }
    }

    fn push_end(&mut self, mut end: EndMessage) {
        let before = self.out.len();
        Message::End { reason: end.reason, symbols_sent: end.symbols_sent, purged: end.purged }.encode(&mut self.out);
        end.len = self.out.len() - before;
        self.end_message = Some(end);
    }

    /// `n` of the datagrams this request handed to QUIC were dropped from its queue unsent when
    /// the request ended (see `take_purge`): the END, if not yet written, counts them as purged
    /// instead of sent, so the client learns what really went out.
    pub fn purged_in_quic(&mut self, n: u64) {
        let Some(end) = self.end_message else { return };
        // END is the last message; once its first byte is written it can no longer change.
        if n == 0 || self.out.len() < end.len {
            return;
        }
        self.out.truncate(self.out.len() - end.len);
        self.push_end(EndMessage { symbols_sent: end.symbols_sent.saturating_sub(n), purged: end.purged + n, ..end });
    }

    /// Applies the deadline: queued datagrams are purged and END sent; a reliable response still
    /// being written is reset with WT_DEADLINE.
    pub fn on_time(&mut self, now: Instant) {
        let Some(deadline) = self.deadline else { return };
        if now < deadline {
            return;
        }
        match &self.state {
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

    /// Whether datagrams are queued.
    pub fn has_datagrams(&self) -> bool {
        matches!(&self.state, State::Datagram(s) if !s.queue.is_empty())
    }

    /// The next datagram to send (already prefixed); call `datagram_sent` once QUIC took it.
    pub fn peek_datagram(&mut self) -> Option<&[u8]> {
        let State::Datagram(send) = &mut self.state else { return None };
        let symbol = *send.queue.front()?;
        if send.front.is_empty() {
            send.front.extend_from_slice(&send.header);
            send.symbols.write_packet(symbol, &mut send.front);
        }
        Some(&send.front)
    }

    /// The datagram from `peek_datagram` was handed to QUIC as the connection's `handed`-th.
    pub fn datagram_sent(&mut self, handed: u64) {
        if let State::Datagram(send) = &mut self.state {
            send.queue.pop_front();
            send.front.clear();
            send.symbols_sent += 1;
            send.last_handed = handed;
        }
    }

    /// QUIC has put `departed` of the connection's handed-off datagrams on the wire (or dropped
    /// them): once all of this request's have gone, SENT reports the batch. Waiting for the wire,
    /// not for the hand-off, keeps the client's repair timer (about one RTT after SENT) from firing
    /// while symbols still wait in QUIC's queue.
    pub fn on_departed(&mut self, departed: u64) {
        if let State::Datagram(send) = &mut self.state {
            if send.queue.is_empty() && send.sent_owed && departed >= send.last_handed {
                send.sent_owed = false;
                let next_esi = send.next_esi.iter().copied().max().unwrap_or(0);
                Message::Sent { symbols_sent: send.symbols_sent, next_esi: u64::from(next_esi) }.encode(&mut self.out);
            }
        }
    }

    /// Moves the next symbol of the datagram queue to the stream as a SYMBOL message (see
    /// `Connection::fill_window`). Returns whether there was one to move.
    pub fn symbol_to_stream(&mut self) -> bool {
        let State::Datagram(send) = &mut self.state else { return false };
        if self.ending != Ending::Open {
            return false;
        }
        let Some(symbol) = send.queue.pop_front() else { return false };
        let packet = if send.front.is_empty() {
            let mut packet = Vec::new();
            send.symbols.write_packet(symbol, &mut packet);
            packet
        } else {
            let packet = send.front[send.header.len()..].to_vec();
            send.front.clear();
            packet
        };
        send.symbols_sent += 1;
        Message::Symbol { packet }.encode(&mut self.out);
        true
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

#[cfg(test)]
mod tests {
    use super::*;
    use raptorq::{Decoder, EncodingPacket, ObjectTransmissionInformation};

    struct Fixture {
        dir: std::path::PathBuf,
        store: ContentStore,
    }

    impl Fixture {
        fn new(object: &[u8]) -> Self {
            let dir = std::env::temp_dir().join(format!("holoquic-delivery-{}-{}", std::process::id(), rand::random::<u64>()));
            std::fs::create_dir_all(dir.join("d")).unwrap();
            std::fs::write(dir.join("d/obj"), object).unwrap();
            let store = ContentStore::open(&dir, 1 << 24).unwrap();
            Self { dir, store }
        }
        fn env(&self) -> RequestEnv<'_> {
            RequestEnv { content: &self.store, symbol_size: Some(1200), datagram_prefix: &[0x00], may_start: true, id_in_use: &|_| false }
        }
    }

    impl Drop for Fixture {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.dir);
        }
    }

    fn request(delivery: Delivery, fec: FecMode, path: &str) -> Vec<u8> {
        let mut out = Vec::new();
        Message::Request(Request {
            request_id: 9,
            delivery,
            urgency: 2,
            deadline_ms: 0,
            fec_mode: fec,
            loss_ppm: 50_000,
            burst_milli: 2000,
            overhead_permille: 100,
            path: path.into(),
        })
        .encode(&mut out);
        out
    }

    fn messages(bytes: &[u8]) -> Vec<Message> {
        let mut rest = bytes;
        let mut out = Vec::new();
        while let Ok((m, used)) = Message::decode(rest) {
            out.push(m);
            rest = &rest[used..];
        }
        out
    }

    fn drain(stream: &mut RequestStream) -> Vec<u8> {
        let mut all = Vec::new();
        loop {
            let chunk = stream.pending().to_vec();
            if chunk.is_empty() {
                return all;
            }
            all.extend_from_slice(&chunk);
            stream.wrote(chunk.len());
        }
    }

    #[test]
    fn reliable_sends_response_then_bytes_then_fin() {
        let object: Vec<u8> = (0..5000u32).map(|i| i as u8).collect();
        let f = Fixture::new(&object);
        let mut s = RequestStream::new(4, 0, Instant::now());
        s.on_data(&request(Delivery::Reliable, FecMode::None, "/content/d/obj"), false, Instant::now(), &f.env());
        let bytes = drain(&mut s);
        let (m, used) = Message::decode(&bytes).unwrap();
        assert_eq!(m, Message::Response(Response { status: 200, body: ResponseBody::Reliable { object_length: 5000 } }));
        assert_eq!(&bytes[used..], &object[..]);
        assert_eq!(s.ending, Ending::Fin);
        assert!(s.is_done());
    }

    #[test]
    fn datagram_symbols_decode_with_losses_and_repair_on_demand() {
        let object: Vec<u8> = (0..100_000u32).map(|i| (i * 7) as u8).collect();
        let f = Fixture::new(&object);
        let mut s = RequestStream::new(4, 0, Instant::now());
        s.on_data(&request(Delivery::Datagram, FecMode::None, "/content/d/obj"), false, Instant::now(), &f.env());
        let head = drain(&mut s);
        let Message::Response(Response { status: 200, body: ResponseBody::Datagram { oti, source_symbols, planned_repair, .. } }) = messages(&head)[0].clone()
        else {
            panic!()
        };
        assert_eq!(planned_repair, 0);
        assert_eq!(s.outcome().source_symbols, source_symbols);
        let mut decoder = Decoder::new(ObjectTransmissionInformation::deserialize(&oti));
        // Lose every 10th datagram: without FEC the object cannot be decoded …
        let mut n = 0;
        let mut result = None;
        while let Some(d) = s.peek_datagram() {
            let dg = ObjectDatagram::decode(&d[1..]).unwrap();
            assert_eq!(dg.request_id, 9);
            if n % 10 != 3 {
                result = result.or(decoder.decode(EncodingPacket::deserialize(dg.packet)));
            }
            n += 1;
            s.datagram_sent(0);
            s.on_departed(0);
        }
        assert_eq!(n, source_symbols);
        assert!(result.is_none());
        assert!(matches!(messages(&drain(&mut s))[..], [Message::Sent { .. }]));
        // … until repair symbols are asked for.
        let mut repair = Vec::new();
        Message::Repair { symbols: 12 }.encode(&mut repair);
        s.on_data(&repair, false, Instant::now(), &f.env());
        while let Some(d) = s.peek_datagram() {
            result = result.or(decoder.decode(EncodingPacket::deserialize(ObjectDatagram::decode(&d[1..]).unwrap().packet)));
            s.datagram_sent(0);
            s.on_departed(0);
        }
        assert_eq!(result.as_deref(), Some(&object[..]));
        assert_eq!(s.outcome().repair_requests, 1);
        // Client FIN: END(completed) and FIN.
        s.on_data(&[], true, Instant::now(), &f.env());
        let end = messages(&drain(&mut s));
        assert!(matches!(end[..], [Message::Sent { .. }, Message::End { reason: EndReason::Completed, .. }]), "{end:?}");
        assert!(s.is_done());
    }

    #[test]
    fn symbols_moved_to_the_stream_decode_with_the_datagrams_and_count_as_sent() {
        let object: Vec<u8> = (0..30_000u32).map(|i| (i * 13) as u8).collect();
        let f = Fixture::new(&object);
        let mut s = RequestStream::new(4, 0, Instant::now());
        s.on_data(&request(Delivery::Datagram, FecMode::None, "/content/d/obj"), false, Instant::now(), &f.env());
        let Message::Response(Response { body: ResponseBody::Datagram { oti, source_symbols, .. }, .. }) = messages(&drain(&mut s))[0].clone() else {
            panic!()
        };
        let mut decoder = Decoder::new(ObjectTransmissionInformation::deserialize(&oti));
        let mut result = None;
        let (mut by_datagram, mut by_stream) = (0, 0);
        // Every third symbol goes on the stream, one of them after its datagram was built.
        for n in 0.. {
            if n == 4 {
                assert!(s.peek_datagram().is_some());
            }
            if n % 3 == 1 {
                if !s.symbol_to_stream() {
                    break;
                }
                by_stream += 1;
                let [Message::Symbol { packet }] = &messages(&drain(&mut s))[..] else { panic!("one SYMBOL") };
                result = result.or(decoder.decode(EncodingPacket::deserialize(packet)));
                continue;
            }
            let Some(d) = s.peek_datagram() else { break };
            result = result.or(decoder.decode(EncodingPacket::deserialize(ObjectDatagram::decode(&d[1..]).unwrap().packet)));
            by_datagram += 1;
            s.datagram_sent(0);
        }
        assert_eq!(by_datagram + by_stream, source_symbols);
        assert!(by_stream > 0);
        assert_eq!(result.as_deref(), Some(&object[..]));
        s.on_departed(0);
        let [Message::Sent { symbols_sent, .. }] = messages(&drain(&mut s))[..] else { panic!("SENT") };
        assert_eq!(symbols_sent, source_symbols);
        // Nothing left to move, and nothing moves once the request has ended.
        assert!(!s.symbol_to_stream());
        s.on_data(&[], true, Instant::now(), &f.env());
        assert!(!s.symbol_to_stream());
    }

    #[test]
    fn sent_waits_until_the_datagrams_left_the_connection() {
        let f = Fixture::new(&vec![3u8; 5000]);
        let mut s = RequestStream::new(4, 0, Instant::now());
        s.on_data(&request(Delivery::Datagram, FecMode::None, "/content/d/obj"), false, Instant::now(), &f.env());
        drain(&mut s);
        let mut handed = 100;
        while s.peek_datagram().is_some() {
            handed += 1;
            s.datagram_sent(handed);
        }
        s.on_departed(handed - 1);
        assert!(drain(&mut s).is_empty(), "the last datagram is still queued in QUIC");
        s.on_departed(handed);
        assert!(matches!(messages(&drain(&mut s))[..], [Message::Sent { .. }]));
        // The end of the request asks for its leftovers in QUIC's queue to be dropped.
        s.on_data(&[], true, Instant::now(), &f.env());
        let header = s.take_purge().expect("purge after END");
        assert_eq!(header, vec![0x00, 9]);
        assert!(s.take_purge().is_none());
    }

    #[test]
    fn repair_on_demand_stops_at_the_budget() {
        let object = vec![3u8; 60_000];
        let f = Fixture::new(&object);
        let mut s = RequestStream::new(4, 0, Instant::now());
        // No deadline and no FEC: nothing else would ever bound what REPAIR queues.
        s.on_data(&request(Delivery::Datagram, FecMode::None, "/content/d/obj"), false, Instant::now(), &f.env());
        let Message::Response(Response { body: ResponseBody::Datagram { source_symbols, .. }, .. }) = messages(&drain(&mut s))[0].clone() else { panic!() };
        let k = source_symbols as u32;
        let mut flood = Vec::new();
        for _ in 0..1000 {
            Message::Repair { symbols: 65_535 }.encode(&mut flood);
        }
        s.on_data(&flood, false, Instant::now(), &f.env());
        let mut sent = 0u32;
        while s.peek_datagram().is_some() {
            s.datagram_sent(0);
            sent += 1;
        }
        assert_eq!(sent, k + repair_budget(k), "source symbols plus the repair budget, however much was asked");
        s.on_departed(0);
        let msgs = messages(&drain(&mut s));
        assert!(matches!(msgs.last(), Some(Message::Sent { symbols_sent, .. }) if *symbols_sent == u64::from(sent)), "{msgs:?}");
        assert_eq!(s.outcome().repair_requests, 1000);
        assert_eq!(s.outcome().repair_symbols, u64::from(repair_budget(k)));
        // Asking again adds nothing, and SENT says so.
        let mut again = Vec::new();
        Message::Repair { symbols: 5 }.encode(&mut again);
        s.on_data(&again, false, Instant::now(), &f.env());
        assert!(s.peek_datagram().is_none());
        s.on_departed(0);
        assert!(matches!(messages(&drain(&mut s))[..], [Message::Sent { symbols_sent, .. }] if symbols_sent == u64::from(sent)));
    }

    #[test]
    fn a_stopped_request_is_done_at_once_and_counted_as_cancelled() {
        let f = Fixture::new(&vec![1u8; 60_000]);
        for delivery in [Delivery::Datagram, Delivery::Reliable] {
            let mut s = RequestStream::new(4, 0, Instant::now());
            s.on_data(&request(delivery, FecMode::Planned, "/content/d/obj"), false, Instant::now(), &f.env());
            s.on_stopped();
            assert!(s.is_done(), "{delivery:?}");
            assert!(s.outcome().cancelled, "{delivery:?}");
            assert!(s.peek_datagram().is_none());
        }
        // Stopped after it ended on its own: not a cancel.
        let mut s = RequestStream::new(4, 0, Instant::now());
        s.on_data(&request(Delivery::Reliable, FecMode::None, "/content/d/missing"), false, Instant::now(), &f.env());
        s.on_stopped();
        assert!(!s.outcome().cancelled);
    }

    #[test]
    fn planned_fec_queues_repair_up_front() {
        let object = vec![1u8; 60_000];
        let f = Fixture::new(&object);
        let mut s = RequestStream::new(4, 0, Instant::now());
        s.on_data(&request(Delivery::Datagram, FecMode::Planned, "/content/d/obj"), false, Instant::now(), &f.env());
        let Message::Response(Response { body: ResponseBody::Datagram { source_symbols, planned_repair, .. }, .. }) = messages(&drain(&mut s))[0].clone()
        else {
            panic!()
        };
        assert!(planned_repair >= 2, "5 % bursty loss needs repair");
        let mut count = 0;
        while s.peek_datagram().is_some() {
            s.datagram_sent(0);
            s.on_departed(0);
            count += 1;
        }
        assert_eq!(count, source_symbols + planned_repair);
    }

    #[test]
    fn errors_are_answered_with_a_status() {
        let f = Fixture::new(b"x");
        let status = |bytes: &[u8], env: &RequestEnv<'_>| {
            let mut s = RequestStream::new(4, 0, Instant::now());
            s.on_data(bytes, false, Instant::now(), env);
            match messages(&drain(&mut s)).first() {
                Some(Message::Response(r)) => r.status,
                other => panic!("{other:?}"),
            }
        };
        assert_eq!(status(&request(Delivery::Reliable, FecMode::None, "/content/d/missing"), &f.env()), 404);
        assert_eq!(status(&request(Delivery::Reliable, FecMode::None, "/content/../etc/passwd"), &f.env()), 400);
        assert_eq!(status(&[0x02, 0x01, 0x05], &f.env()), 400);
        assert_eq!(status(&[0x01, 0x02, 0xff, 0xff], &f.env()), 400);
        let busy = RequestEnv { may_start: false, ..f.env() };
        assert_eq!(status(&request(Delivery::Reliable, FecMode::None, "/content/d/obj"), &busy), 429);
        let dup = RequestEnv { id_in_use: &|id| id == 9, ..f.env() };
        assert_eq!(status(&request(Delivery::Reliable, FecMode::None, "/content/d/obj"), &dup), 400);
        let no_datagrams = RequestEnv { symbol_size: None, ..f.env() };
        assert_eq!(status(&request(Delivery::Datagram, FecMode::None, "/content/d/obj"), &no_datagrams), 400);
        assert_eq!(status(&request(Delivery::Reliable, FecMode::None, "/content/d/obj"), &no_datagrams), 200);
    }

    #[test]
    fn deadline_purges_queued_datagrams() {
        let object = vec![7u8; 50_000];
        let f = Fixture::new(&object);
        let mut s = RequestStream::new(4, 0, Instant::now());
        let mut req = Vec::new();
        Message::Request(Request {
            request_id: 1,
            delivery: Delivery::Datagram,
            urgency: 0,
            deadline_ms: 100,
            fec_mode: FecMode::None,
            loss_ppm: 0,
            burst_milli: 0,
            overhead_permille: 0,
            path: "/content/d/obj".into(),
        })
        .encode(&mut req);
        let t0 = Instant::now();
        s.on_data(&req, false, t0, &f.env());
        s.datagram_sent(0);
        s.on_departed(0);
        s.on_time(t0 + Duration::from_millis(50));
        assert!(s.has_datagrams());
        s.on_time(t0 + Duration::from_millis(150));
        assert!(!s.has_datagrams());
        let msgs = messages(&drain(&mut s));
        assert!(matches!(msgs.last(), Some(Message::End { reason: EndReason::DeadlinePassed, symbols_sent: 1, purged }) if *purged > 0), "{msgs:?}");
        assert!(s.outcome().deadline_missed);
    }

    #[test]
    fn oversized_garbage_is_refused_with_bounded_buffering() {
        let f = Fixture::new(b"x");
        let mut s = RequestStream::new(4, 0, Instant::now());
        // A REQUEST header announcing a huge body that never completes.
        let mut bytes = vec![0x01, 0x80, 0x10, 0x00, 0x00];
        bytes.extend(std::iter::repeat_n(0u8, 3000));
        s.on_data(&bytes, false, Instant::now(), &f.env());
        assert!(matches!(messages(&drain(&mut s))[..], [Message::Response(Response { status: 400, .. })]));
    }

    /// What a client may put on a request stream, in any order: messages of every type with any
    /// field values (including the origin's own), raw bytes, and the passing of time.
    #[derive(Debug, Clone)]
    enum ClientOp {
        Send(Message),
        Garbage(Vec<u8>),
        /// Let QUIC take up to this many datagrams (and report them on the wire).
        Drain(usize),
        AdvanceMs(u64),
    }

    fn client_op() -> impl proptest::strategy::Strategy<Value = ClientOp> {
        use proptest::prelude::*;
        let path = prop_oneof![Just("/content/d/obj".to_string()), Just("/content/d/none".to_string()), Just("/content/../x".to_string()), "\\PC{0,40}"];
        let delivery = prop_oneof![Just(Delivery::Reliable), Just(Delivery::Datagram)];
        let fec = prop_oneof![Just(FecMode::None), Just(FecMode::Planned), Just(FecMode::Fixed)];
        let request = (any::<u64>(), delivery, any::<u8>(), 0u64..3000, fec, any::<u32>(), any::<u32>(), any::<u32>(), path).prop_map(
            |(request_id, delivery, urgency, deadline_ms, fec_mode, loss_ppm, burst_milli, overhead_permille, path)| {
                Message::Request(Request {
                    request_id: request_id >> 2,
                    delivery,
                    urgency,
                    deadline_ms,
                    fec_mode,
                    loss_ppm,
                    burst_milli,
                    overhead_permille,
                    path,
                })
            },
        );
        let message = prop_oneof![
            3 => request,
            // Mostly counts the origin takes (1 … 65 535), sometimes ones it must refuse.
            3 => (1u64..=65_535).prop_map(|symbols| Message::Repair { symbols }),
            1 => any::<u64>().prop_map(|symbols| Message::Repair { symbols: symbols >> 2 }),
            1 => Just(Message::Cancel),
            1 => (any::<u32>(), any::<u32>()).prop_map(|(a, b)| Message::Sent { symbols_sent: a.into(), next_esi: b.into() }),
            1 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(|packet| Message::Symbol { packet }),
        ];
        prop_oneof![
            6 => message.prop_map(ClientOp::Send),
            1 => proptest::collection::vec(any::<u8>(), 0..24).prop_map(ClientOp::Garbage),
            3 => (0usize..200).prop_map(ClientOp::Drain),
            1 => (0u64..1500).prop_map(ClientOp::AdvanceMs),
        ]
    }

    proptest::proptest! {
        #![proptest_config(proptest::prelude::ProptestConfig::with_cases(500))]
        /// Whatever a client sends, in whatever pieces: no panic, the datagrams of a request never
        /// exceed its source symbols plus the repair budget, what waits to be written stays small
        /// (apart from a reliable object's own bytes), and the client's FIN ends the request.
        #[test]
        fn any_client_input_leaves_a_bounded_request(
            start in proptest::option::of((proptest::bool::ANY, 0u8..3)),
            ops in proptest::collection::vec(client_op(), 1..30),
            chunk in 1usize..300,
        ) {
            let object = vec![5u8; 30_000];
            let f = Fixture::new(&object);
            let t0 = Instant::now();
            let mut now = t0;
            let mut s = RequestStream::new(4, 0, t0);
            let mut datagrams = 0u64;
            let mut handed = 0u64;
            let mut bytes = Vec::new();
            let mut fed = 0;
            // Half the cases start with a request that is served, so what follows reaches the
            // running states and not only the refusal of a bad first message.
            if let Some((reliable, fec)) = start {
                let fec_mode = [FecMode::None, FecMode::Planned, FecMode::Fixed][usize::from(fec)];
                let delivery = if reliable { Delivery::Reliable } else { Delivery::Datagram };
                Message::Request(Request { request_id: 1, delivery, urgency: 3, deadline_ms: 0, fec_mode, loss_ppm: 50_000, burst_milli: 2000,
                    overhead_permille: 500, path: "/content/d/obj".into() }).encode(&mut bytes);
            }
            for op in ops {
                match op {
                    ClientOp::Send(m) => m.encode(&mut bytes),
                    ClientOp::Garbage(g) => bytes.extend(g),
                    ClientOp::AdvanceMs(ms) => {
                        now += Duration::from_millis(ms);
                        s.on_time(now);
                    }
                    ClientOp::Drain(n) => {
                        for _ in 0..n {
                            if s.peek_datagram().is_none() {
                                break;
                            }
                            handed += 1;
                            s.datagram_sent(handed);
                            datagrams += 1;
                        }
                        s.on_departed(handed);
                    }
                }
                while fed < bytes.len() {
                    let end = (fed + chunk).min(bytes.len());
                    s.on_data(&bytes[fed..end], false, now, &f.env());
                    fed = end;
                }
                if !s.has_reliable_body() {
                    proptest::prop_assert!(s.pending().len() <= 4096, "{} bytes waiting", s.pending().len());
                }
                let written = s.pending().len().min(chunk);
                s.wrote(written);
            }
            // K = 25 source symbols of 1200 bytes in one block, and a repair budget of 2K = 50.
            proptest::prop_assert!(datagrams <= 75, "{datagrams} datagrams");
            s.on_data(&[], true, now, &f.env());
            drain(&mut s);
            proptest::prop_assert!(s.is_done(), "the client's FIN left the request open");
        }
    }
}
