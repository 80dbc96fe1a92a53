//! One load session: a quiche client connection, the WebTransport session on it (control stream,
//! extended CONNECT, as a browser opens it), and its object requests — issued once per segment
//! interval from the pattern, received through `object.rs`, their outcomes tallied.
//!
//! No I/O here: the event loop hands in packets and takes out what to send.

use std::collections::HashMap;
use std::net::SocketAddr;
use std::time::{Duration, Instant};

use holoquic_proto::h3::{error_code, frame_type, setting, split_datagram, stream_type, Frame, Settings, WEBTRANSPORT_BIDI_SIGNAL};
use holoquic_proto::varint::put;
use holoquic_proto::{Delivery, Message, ObjectDatagram, Request};
use quiche::h3::{qpack, Header, NameValue};

use crate::object::{ObjectRequest, Outcome, Reply};
use crate::pattern::Pattern;
use crate::report::Tally;

/// The CONNECT stream (the session id) and the client's control stream.
const SESSION_STREAM: u64 = 0;
const CONTROL_STREAM: u64 = 2;
/// Longest CONNECT answer read (HEADERS of a few fields).
const MAX_CONNECT_REPLY: usize = 16 * 1024;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    Handshake,
    AwaitConnect,
    Open,
    /// Ended, with the reason when it was not ours.
    Closed(Option<String>),
}

/// Where a session is and what it has measured.
pub struct Session {
    pub index: usize,
    pub conn: quiche::Connection,
    pub state: State,
    authority: String,
    wt_path: String,
    connect_reply: Vec<u8>,
    /// Requests in flight, by stream id.
    requests: HashMap<u64, ObjectRequest>,
    /// Stream id of each request id, for datagrams.
    streams_of: HashMap<u64, u64>,
    next_stream: u64,
    next_request_id: u64,
    /// Bytes of ended fetches that asked to keep them, by stream id.
    kept: HashMap<u64, Vec<u8>>,
    /// Message bytes quiche did not take yet, by stream, and whether FIN follows them: its send
    /// capacity is bounded by the congestion window, so under loss a write can be cut short. The
    /// rest goes before anything else on that stream (`write`, `flush_unsent`): a message cut
    /// and followed by another would reach the origin as one malformed message.
    unsent: HashMap<u64, (Vec<u8>, bool)>,
    /// When the session opened (segment 0 is requested then) and the next segment to request.
    pub opened_at: Option<Instant>,
    next_segment: u64,
    pub tally: Tally,
}

impl Session {
    pub fn new(index: usize, config: &mut quiche::Config, local: SocketAddr, origin: SocketAddr, server_name: &str, wt_path: &str) -> anyhow::Result<Self> {
        let scid = quiche::ConnectionId::from_vec(rand::random::<[u8; CID_LEN]>().to_vec());
        let conn = quiche::connect(Some(server_name), &scid, local, origin, config)?;
        let authority = if origin.port() == 443 { server_name.to_owned() } else { format!("{server_name}:{}", origin.port()) };
        Ok(Self {
            index,
            conn,
            state: State::Handshake,
            authority,
            wt_path: wt_path.to_owned(),
            connect_reply: Vec::new(),
            requests: HashMap::new(),
            streams_of: HashMap::new(),
            next_stream: 4,
            next_request_id: 1,
            kept: HashMap::new(),
            unsent: HashMap::new(),
            opened_at: None,
            next_segment: 0,
            tally: Tally::default(),
        })
    }

    pub fn is_closed(&self) -> bool {
        matches!(self.state, State::Closed(_))
    }

    /// Whether the session has requested every segment and nothing is in flight.
    pub fn is_finished(&self, pattern: Option<&Pattern>) -> bool {
        self.is_closed() || self.opened_at.is_some() && pattern.is_none_or(|p| self.next_segment >= p.segments) && self.requests.is_empty()
    }

    fn rtt(&self) -> Duration {
        self.conn.path_stats().next().map_or(Duration::from_millis(1), |p| p.rtt)
    }

    /// Everything due by `now`: handshake progress, stream and datagram reads, timers, and the
    /// segments whose time has come.
    /// `scratch` is the loop's read buffer (reused: a fresh one per call cost more than the reads).
    pub fn advance(&mut self, now: Instant, pattern: Option<&Pattern>, scratch: &mut [u8]) {
        if self.is_closed() {
            return;
        }
        if self.conn.timeout_instant().is_some_and(|t| t <= now) {
            self.conn.on_timeout();
        }
        if self.conn.is_closed() {
            let why = self.conn.peer_error().map(|e| format!("closed by the origin: code {:#x} {}", e.error_code, String::from_utf8_lossy(&e.reason)));
            let why = why.or_else(|| self.conn.is_timed_out().then(|| "idle timeout".to_owned()));
            return self.close_with(why.or(Some("connection closed".into())));
        }
        match self.state {
            State::Handshake if self.conn.is_established() => self.send_connect(),
            State::AwaitConnect => self.read_connect_reply(now),
            _ => {}
        }
        if self.state != State::Open {
            return;
        }
        self.flush_unsent();
        self.read_streams(now, scratch);
        self.read_datagrams(now, scratch);
        let (rtt, repair) = (self.rtt(), pattern.is_none_or(|p| p.repair));
        let timers: Vec<u64> = self.requests.iter().filter(|(_, r)| r.next_timer(rtt, repair).is_some_and(|t| t <= now)).map(|(s, _)| *s).collect();
        for stream in timers {
            let (outcome, reply) = self.requests.get_mut(&stream).map(|r| r.on_time(now, rtt, repair)).unwrap_or((None, Reply::None));
            self.settle(stream, outcome, reply);
        }
        if let (Some(pattern), Some(opened)) = (pattern, self.opened_at) {
            while self.next_segment < pattern.segments && opened + pattern.segment_interval.mul_f64(self.next_segment as f64) <= now {
                for request in pattern.segment_requests(self.index, self.next_segment) {
                    self.request(request, now, pattern.deadline);
                }
                self.next_segment += 1;
            }
        }
    }

    /// The next time `advance` has something to do without a packet arriving.
    pub fn next_wake(&self, pattern: Option<&Pattern>) -> Option<Instant> {
        if self.is_closed() {
            return None;
        }
        let (rtt, repair) = (self.rtt(), pattern.is_none_or(|p| p.repair));
        let mut wake = self.conn.timeout_instant();
        let mut earliest = |t: Option<Instant>| {
            wake = match (wake, t) {
                (Some(a), Some(b)) => Some(a.min(b)),
                (a, b) => a.or(b),
            }
        };
        if self.state == State::Open {
            for r in self.requests.values() {
                earliest(r.next_timer(rtt, repair));
            }
            if let (Some(p), Some(opened)) = (pattern, self.opened_at) {
                if self.next_segment < p.segments {
                    earliest(Some(opened + p.segment_interval.mul_f64(self.next_segment as f64)));
                }
            }
        }
        wake
    }

    /// Opens a request stream with `request` (its id set here); its outcome is tallied later.
    /// Returns the stream id, or None when the request could not be sent (tallied as lost).
    pub fn request(&mut self, mut request: Request, now: Instant, deadline: Duration) -> Option<u64> {
        self.fetch(&mut request, now, deadline, None)
    }

    /// `request`, keeping up to `keep` bytes of a reliable object (`take_kept` returns them).
    pub fn fetch(&mut self, request: &mut Request, now: Instant, deadline: Duration, keep: Option<usize>) -> Option<u64> {
        request.request_id = self.next_request_id;
        self.next_request_id += 1;
        let mut bytes = Vec::new();
        put(&mut bytes, WEBTRANSPORT_BIDI_SIGNAL);
        put(&mut bytes, SESSION_STREAM);
        Message::Request(request.clone()).encode(&mut bytes);
        let stream = self.next_stream;
        self.tally.requested += 1;
        // A reliable request has nothing more to say: its FIN goes with the REQUEST.
        let fin = request.delivery == Delivery::Reliable;
        let mut object = ObjectRequest::new(request.request_id, request.delivery, now, now + deadline);
        if let Some(limit) = keep {
            object = object.keep_bytes(limit);
        }
        match self.conn.stream_send(stream, &bytes, fin) {
            Ok(n) if n == bytes.len() => {}
            // Cut short: the stream is this request's now, the rest follows when quiche has room.
            Ok(n) if n > 0 => {
                self.unsent.insert(stream, (bytes[n..].to_vec(), fin));
            }
            // Nothing went out: the next request may take the stream id.
            _ => {
                self.tally.record(Outcome::Lost(crate::object::LostReason::Unsent), &object);
                return None;
            }
        }
        self.next_stream += 4;
        self.streams_of.insert(request.request_id, stream);
        self.requests.insert(stream, object);
        Some(stream)
    }

    /// The bytes a `fetch` kept, once its request has ended.
    pub fn take_kept(&mut self, stream: u64) -> Option<Vec<u8>> {
        self.kept.remove(&stream)
    }

    fn send_connect(&mut self) {
        let mut control = Vec::new();
        put(&mut control, stream_type::CONTROL);
        Settings(vec![(setting::H3_DATAGRAM, 1), (setting::ENABLE_WEBTRANSPORT_DRAFT02, 1)]).encode_frame(&mut control);
        let origin = format!("https://{}", self.authority);
        let headers = [
            Header::new(b":method", b"CONNECT"),
            Header::new(b":protocol", b"webtransport"),
            Header::new(b":scheme", b"https"),
            Header::new(b":authority", self.authority.as_bytes()),
            Header::new(b":path", self.wt_path.as_bytes()),
            Header::new(b"origin", origin.as_bytes()),
        ];
        let mut block = vec![0u8; 2048];
        let sent = qpack::Encoder::new().encode(&headers, &mut block).ok().and_then(|n| {
            let mut connect = Vec::new();
            Frame::encode(frame_type::HEADERS, &block[..n], &mut connect);
            let control_sent = self.conn.stream_send(CONTROL_STREAM, &control, false).ok()?;
            let connect_sent = self.conn.stream_send(SESSION_STREAM, &connect, false).ok()?;
            (control_sent == control.len() && connect_sent == connect.len()).then_some(())
        });
        match sent {
            Some(()) => self.state = State::AwaitConnect,
            None => self.close_with(Some("could not send CONNECT".into())),
        }
    }

    fn read_connect_reply(&mut self, now: Instant) {
        let mut buf = [0u8; 4096];
        while let Ok((n, _)) = self.conn.stream_recv(SESSION_STREAM, &mut buf) {
            self.connect_reply.extend_from_slice(&buf[..n]);
        }
        let status = match Frame::decode(&self.connect_reply) {
            Ok((frame, _)) if frame.kind == frame_type::HEADERS => {
                let headers = qpack::Decoder::new().decode(frame.payload, MAX_CONNECT_REPLY as u64).unwrap_or_default();
                headers.iter().find(|h| h.name() == b":status").map(|h| String::from_utf8_lossy(h.value()).into_owned()).unwrap_or_default()
            }
            Ok(_) => String::from("a frame other than HEADERS"),
            Err(holoquic_proto::DecodeError::Incomplete) if self.connect_reply.len() < MAX_CONNECT_REPLY => return,
            Err(e) => e.to_string(),
        };
        if status == "200" {
            self.state = State::Open;
            self.opened_at = Some(now);
            self.connect_reply = Vec::new();
        } else {
            self.close_with(Some(format!("CONNECT refused: {status}")));
        }
    }

    fn read_streams(&mut self, now: Instant, buf: &mut [u8]) {
        let readable: Vec<u64> = self.conn.readable().collect();
        for stream in readable {
            while let Ok((n, fin)) = self.conn.stream_recv(stream, buf) {
                if stream == SESSION_STREAM {
                    // Anything on the session stream now is a capsule or its end: the origin is closing.
                    if fin || n > 0 {
                        self.close_with(Some("the origin closed the WebTransport session".into()));
                        return;
                    }
                    continue;
                }
                let Some(request) = self.requests.get_mut(&stream) else { continue };
                let (outcome, reply) = request.on_stream(&buf[..n], fin, now);
                self.settle(stream, outcome, reply);
            }
        }
    }

    fn read_datagrams(&mut self, now: Instant, buf: &mut [u8]) {
        while let Ok(n) = self.conn.dgram_recv(buf) {
            let Ok((SESSION_STREAM, payload)) = split_datagram(&buf[..n]) else { continue };
            let Ok(datagram) = ObjectDatagram::decode(payload) else { continue };
            let Some(&stream) = self.streams_of.get(&datagram.request_id) else { continue };
            let Some(request) = self.requests.get_mut(&stream) else { continue };
            if let Some(outcome) = request.on_symbol(datagram.packet, now) {
                self.settle(stream, Some(outcome), Reply::Finish);
            }
        }
    }

    /// Writes what a request asked for and tallies its outcome.
    fn settle(&mut self, stream: u64, outcome: Option<Outcome>, reply: Reply) {
        let mut out = Vec::new();
        let fin = match reply {
            Reply::None => None,
            Reply::Finish => Some(true),
            Reply::Repair(symbols) => {
                Message::Repair { symbols }.encode(&mut out);
                Some(false)
            }
            Reply::Cancel => {
                Message::Cancel.encode(&mut out);
                Some(true)
            }
        };
        if let Some(fin) = fin {
            if self.requests.get(&stream).is_some_and(|r| r.delivery == Delivery::Reliable) {
                // Our side is finished already: give the stream up both ways.
                let _ = self.conn.stream_shutdown(stream, quiche::Shutdown::Read, 0);
            } else {
                self.write(stream, out, fin);
            }
        }
        if let Some(outcome) = outcome {
            if let Some(mut request) = self.requests.remove(&stream) {
                self.streams_of.remove(&request.request_id);
                self.tally.record(outcome, &request);
                if let Some((bytes, _)) = request.kept.take() {
                    self.kept.insert(stream, bytes);
                }
            }
        }
    }

    /// Writes `bytes` (and FIN) on `stream` after whatever of it is still unsent, keeping what
    /// quiche does not take now.
    fn write(&mut self, stream: u64, bytes: Vec<u8>, fin: bool) {
        let (mut pending, fin) = match self.unsent.remove(&stream) {
            Some((mut earlier, earlier_fin)) => {
                earlier.extend_from_slice(&bytes);
                (earlier, earlier_fin || fin)
            }
            None => (bytes, fin),
        };
        match self.conn.stream_send(stream, &pending, fin) {
            Ok(n) if n == pending.len() => {}
            Ok(n) => {
                pending.drain(..n);
                self.unsent.insert(stream, (pending, fin));
            }
            Err(quiche::Error::Done) => {
                self.unsent.insert(stream, (pending, fin));
            }
            // The stream is gone (stopped or reset by the origin): nothing more to say on it.
            Err(_) => {}
        }
    }

    /// Retries the writes quiche cut short (see `unsent`).
    fn flush_unsent(&mut self) {
        let streams: Vec<u64> = self.unsent.keys().copied().collect();
        for stream in streams {
            self.write(stream, Vec::new(), false);
        }
    }

    fn close_with(&mut self, why: Option<String>) {
        let requests: Vec<ObjectRequest> = self.requests.drain().map(|(_, r)| r).collect();
        for mut request in requests {
            if let Some(outcome) = request.abandon() {
                self.tally.record(outcome, &request);
            }
        }
        self.streams_of.clear();
        let _ = self.conn.close(true, error_code::H3_NO_ERROR, b"");
        self.state = State::Closed(why);
    }

    /// Ends the session on our side (the run is over).
    pub fn finish(&mut self) {
        if !self.is_closed() {
            self.close_with(None);
        }
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;

/// Length of our connection ids: the event loop reads it back from short-header packets.
pub const CID_LEN: usize = 16;

/// The client's QUIC configuration: h3 with datagrams, windows large enough that reading, not
/// flow control, paces the origin, and no certificate check (the origin's own certificates).
pub fn client_config() -> anyhow::Result<quiche::Config> {
    let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION)?;
    config.verify_peer(false);
    config.set_application_protos(&[b"h3"])?;
    config.set_initial_max_data(64 << 20);
    config.set_initial_max_stream_data_bidi_local(16 << 20);
    config.set_initial_max_stream_data_bidi_remote(1 << 20);
    config.set_initial_max_stream_data_uni(1 << 20);
    config.set_initial_max_streams_bidi(100);
    config.set_initial_max_streams_uni(100);
    config.set_max_idle_timeout(30_000);
    config.set_max_recv_udp_payload_size(1500);
    config.enable_dgram(true, 4096, 64);
    Ok(config)
}
