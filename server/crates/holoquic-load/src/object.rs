//! One object request as the load client receives it: the messages of its request stream
//! (RESPONSE, then the raw bytes of a reliable object, or SENT / SYMBOL / END around the
//! datagrams of a datagram object), when it counts as complete, and when to ask for repair.
//!
//! A datagram object is complete when RaptorQ could decode it, judged by counting rather than by
//! decoding: every source block has all its source symbols, or at least K + `DECODE_MARGIN`
//! distinct symbols (what the origin's FEC planning counts on, docs/protocol.md §3.3). A load
//! client measures the origin; spending its own core on RaptorQ decoding would measure itself.
//! Object bytes are counted, never kept (except for a fetch that asks for them, the manifest).

use std::time::{Duration, Instant};

use holoquic_proto::fec::DECODE_MARGIN;
use holoquic_proto::{DecodeError, Delivery, Message, ResponseBody};

/// How an object request ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// Complete at or before its deadline, after this long.
    OnTime(Duration),
    /// Complete after its deadline (reliable objects are sent on past it, as for the player).
    Late(Duration),
    /// Never complete: a datagram object short at its deadline, a reliable one still missing
    /// well after it, an error status, a malformed answer, the session lost, or a REQUEST that could
    /// not be sent.
    Lost(LostReason),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LostReason {
    Deadline,
    Status(u16),
    Protocol,
    Session,
    /// The REQUEST could not be written (no stream credit or flow-control window from the origin).
    Unsent,
}

/// Symbols received of one source block.
#[derive(Debug)]
struct Block {
    source_symbols: u32,
    /// One bit per source symbol (ESI < K).
    source_seen: Vec<u64>,
    source_count: u32,
    /// Repair symbols are never repeated by the origin (fresh ESIs), so a count suffices.
    repair_count: u32,
}

impl Block {
    fn decodable(&self) -> bool {
        self.source_count == self.source_symbols || u64::from(self.source_count + self.repair_count) >= u64::from(self.source_symbols) + DECODE_MARGIN
    }
    fn shortfall(&self) -> u64 {
        if self.decodable() {
            0
        } else {
            (u64::from(self.source_symbols) + DECODE_MARGIN).saturating_sub(u64::from(self.source_count + self.repair_count))
        }
    }
}

/// The datagram side of a request after its RESPONSE.
#[derive(Debug)]
struct Symbols {
    blocks: Vec<Block>,
    /// Datagrams the origin will send without being asked, then also what REPAIR asked for.
    expected: u64,
    sent: u64,
    repair_at: Option<Instant>,
}

#[derive(Debug)]
enum Phase {
    /// Datagrams that come before the RESPONSE are held, as (source block, ESI, symbol bytes).
    AwaitResponse(Vec<(u8, u32, u32)>),
    Body {
        remaining: u64,
    },
    Datagrams(Symbols),
    Ended,
}

/// One request in flight.
#[derive(Debug)]
pub struct ObjectRequest {
    pub request_id: u64,
    pub delivery: Delivery,
    pub requested_at: Instant,
    pub deadline: Instant,
    phase: Phase,
    /// Message bytes not yet decoded.
    inbuf: Vec<u8>,
    /// Payload bytes received: object bytes, or symbol bytes (repair included).
    pub received_bytes: u64,
    pub object_length: u64,
    pub repair_requests: u32,
    /// The object's bytes, when asked to keep them (at most this many).
    pub kept: Option<(Vec<u8>, usize)>,
}

/// What the request wants written on its stream.
#[derive(Debug, PartialEq, Eq)]
pub enum Reply {
    None,
    /// Our side is done (FIN): a datagram object decoded, the origin may purge the rest.
    Finish,
    /// REPAIR with this many symbols per block.
    Repair(u64),
    /// CANCEL, then FIN: the deadline passed.
    Cancel,
}

impl ObjectRequest {
    pub fn new(request_id: u64, delivery: Delivery, requested_at: Instant, deadline: Instant) -> Self {
        Self {
            request_id,
            delivery,
            requested_at,
            deadline,
            phase: Phase::AwaitResponse(Vec::new()),
            inbuf: Vec::new(),
            received_bytes: 0,
            object_length: 0,
            repair_requests: 0,
            kept: None,
        }
    }

    /// Keep up to `limit` object bytes (a reliable request whose bytes are wanted).
    pub fn keep_bytes(mut self, limit: usize) -> Self {
        self.kept = Some((Vec::new(), limit));
        self
    }

    pub fn is_ended(&self) -> bool {
        matches!(self.phase, Phase::Ended)
    }

    /// Bytes read from the request stream (`fin`: the origin finished it). Returns the outcome
    /// once there is one, and what to write.
    pub fn on_stream(&mut self, mut data: &[u8], fin: bool, now: Instant) -> (Option<Outcome>, Reply) {
        loop {
            match &mut self.phase {
                Phase::Ended => return (None, Reply::None),
                Phase::Body { remaining } => {
                    let take = (*remaining).min(data.len() as u64) as usize;
                    *remaining -= take as u64;
                    let left = *remaining;
                    self.received_bytes += take as u64;
                    if let Some((kept, limit)) = &mut self.kept {
                        if kept.len() + take > *limit {
                            return self.end(Outcome::Lost(LostReason::Protocol), Reply::None);
                        }
                        kept.extend_from_slice(&data[..take]);
                    }
                    // The body ends exactly with FIN: more bytes, or FIN before the last byte, is an error.
                    if take < data.len() || left > 0 && fin {
                        return self.end(Outcome::Lost(LostReason::Protocol), Reply::None);
                    }
                    if left == 0 && fin {
                        let outcome = self.completed(now);
                        return self.end(outcome, Reply::None);
                    }
                    return (None, Reply::None);
                }
                Phase::AwaitResponse(_) | Phase::Datagrams(_) => {}
            }
            self.inbuf.extend_from_slice(data);
            data = &[];
            let message = match Message::decode(&self.inbuf) {
                Ok((message, used)) => {
                    self.inbuf.drain(..used);
                    message
                }
                Err(DecodeError::Incomplete) if !fin => return (None, Reply::None),
                Err(_) => return self.end(Outcome::Lost(LostReason::Protocol), Reply::None),
            };
            if let Some(result) = self.on_message(message, now) {
                return result;
            }
            // A RESPONSE of a reliable object: what followed it in the buffer is body.
            if matches!(self.phase, Phase::Body { .. }) {
                let rest = std::mem::take(&mut self.inbuf);
                return self.on_stream(&rest, fin, now);
            }
            if self.inbuf.is_empty() && !fin {
                return (None, Reply::None);
            }
        }
    }

    /// One message; `Some` when it settles the request.
    fn on_message(&mut self, message: Message, now: Instant) -> Option<(Option<Outcome>, Reply)> {
        match (&mut self.phase, message) {
            (Phase::AwaitResponse(_), Message::Response(response)) => match response.body {
                _ if response.status != 200 => Some(self.end(Outcome::Lost(LostReason::Status(response.status)), Reply::None)),
                ResponseBody::Reliable { object_length } if self.delivery == Delivery::Reliable => {
                    self.object_length = object_length;
                    self.phase = Phase::Body { remaining: object_length };
                    None
                }
                ResponseBody::Datagram { object_length, oti, source_symbols, planned_repair, .. } if self.delivery == Delivery::Datagram => {
                    let blocks = source_blocks(&oti, source_symbols);
                    let Some(blocks) = blocks else { return Some(self.end(Outcome::Lost(LostReason::Protocol), Reply::None)) };
                    self.object_length = object_length;
                    let expected = source_symbols + planned_repair * blocks.len() as u64;
                    let early = match std::mem::replace(&mut self.phase, Phase::Datagrams(Symbols { blocks, expected, sent: 0, repair_at: None })) {
                        Phase::AwaitResponse(early) => early,
                        _ => Vec::new(),
                    };
                    let outcome = early.into_iter().find_map(|(sbn, esi, len)| self.count_symbol(sbn, esi, len, now));
                    outcome.map(|o| (Some(o), Reply::Finish))
                }
                _ => Some(self.end(Outcome::Lost(LostReason::Protocol), Reply::None)),
            },
            (Phase::Datagrams(symbols), Message::Sent { symbols_sent, .. }) => {
                symbols.sent = symbols_sent;
                // Symbols still in flight arrive within about a round trip: ask then (`on_time`).
                symbols.repair_at = (symbols_sent >= symbols.expected).then_some(now);
                None
            }
            (Phase::Datagrams(_), Message::Symbol { packet }) => self.on_symbol(&packet, now).map(|o| (Some(o), Reply::Finish)),
            (Phase::Datagrams(_), Message::End { .. }) => Some(self.end(Outcome::Lost(LostReason::Deadline), Reply::None)),
            _ => Some(self.end(Outcome::Lost(LostReason::Protocol), Reply::None)),
        }
    }

    /// A RaptorQ packet (`sbn u8 | esi u24 | symbol`) of this request, from a datagram or a
    /// SYMBOL message; the outcome when it completes the object.
    pub fn on_symbol(&mut self, packet: &[u8], now: Instant) -> Option<Outcome> {
        let (sbn, esi) = (packet[0], u32::from_be_bytes([0, packet[1], packet[2], packet[3]]));
        let len = packet.len().saturating_sub(4) as u32;
        if let Phase::AwaitResponse(early) = &mut self.phase {
            if self.delivery == Delivery::Datagram && early.len() < MAX_EARLY_SYMBOLS {
                early.push((sbn, esi, len));
            }
            return None;
        }
        self.count_symbol(sbn, esi, len, now)
    }

    fn count_symbol(&mut self, sbn: u8, esi: u32, len: u32, now: Instant) -> Option<Outcome> {
        let Phase::Datagrams(symbols) = &mut self.phase else { return None };
        self.received_bytes += u64::from(len);
        let block = symbols.blocks.get_mut(usize::from(sbn))?;
        if esi < block.source_symbols {
            let (word, bit) = ((esi / 64) as usize, esi % 64);
            if block.source_seen[word] & (1 << bit) == 0 {
                block.source_seen[word] |= 1 << bit;
                block.source_count += 1;
            }
        } else {
            block.repair_count += 1;
        }
        if symbols.blocks.iter().all(Block::decodable) {
            let outcome = self.completed(now);
            self.phase = Phase::Ended;
            return Some(outcome);
        }
        None
    }

    /// Timers: the deadline of a datagram object, the late limit of a reliable one, repair on
    /// demand. `rtt` is the connection's current estimate.
    pub fn on_time(&mut self, now: Instant, rtt: Duration, repair: bool) -> (Option<Outcome>, Reply) {
        if self.is_ended() {
            return (None, Reply::None);
        }
        let late_limit = self.deadline + (self.deadline - self.requested_at).max(MIN_LATE_LIMIT);
        if self.delivery == Delivery::Datagram && now >= self.deadline || now >= late_limit {
            return self.end(Outcome::Lost(LostReason::Deadline), Reply::Cancel);
        }
        let Phase::Datagrams(symbols) = &mut self.phase else { return (None, Reply::None) };
        match symbols.repair_at {
            Some(at) if repair && now >= at + repair_wait(rtt) => {
                symbols.repair_at = None;
                if self.deadline.saturating_duration_since(now) < rtt.mul_f32(1.5) {
                    return (None, Reply::None);
                }
                let per_block = symbols.blocks.iter().map(Block::shortfall).max().unwrap_or(0).clamp(1, 65_535 - DECODE_MARGIN) + DECODE_MARGIN;
                symbols.expected = symbols.sent + per_block * symbols.blocks.len() as u64;
                self.repair_requests += 1;
                (None, Reply::Repair(per_block))
            }
            _ => (None, Reply::None),
        }
    }

    /// The earliest time `on_time` has something to do, with the connection's `rtt`.
    pub fn next_timer(&self, rtt: Duration, repair: bool) -> Option<Instant> {
        if self.is_ended() {
            return None;
        }
        let end = if self.delivery == Delivery::Datagram { self.deadline } else { self.deadline + (self.deadline - self.requested_at).max(MIN_LATE_LIMIT) };
        match &self.phase {
            Phase::Datagrams(Symbols { repair_at: Some(at), .. }) if repair => Some(end.min(*at + repair_wait(rtt))),
            _ => Some(end),
        }
    }

    /// The session ended under this request.
    pub fn abandon(&mut self) -> Option<Outcome> {
        (!self.is_ended()).then(|| self.end(Outcome::Lost(LostReason::Session), Reply::None).0.expect("an outcome"))
    }

    fn completed(&self, now: Instant) -> Outcome {
        let took = now - self.requested_at;
        if now <= self.deadline {
            Outcome::OnTime(took)
        } else {
            Outcome::Late(took)
        }
    }

    fn end(&mut self, outcome: Outcome, reply: Reply) -> (Option<Outcome>, Reply) {
        self.phase = Phase::Ended;
        self.inbuf = Vec::new();
        (Some(outcome), reply)
    }
}

/// Datagrams held for a request whose RESPONSE has not come yet (a few bytes each).
const MAX_EARLY_SYMBOLS: usize = 65_536;

/// How long after the last planned symbol left the origin a short object asks for repair: what
/// is still in flight arrives within about a round trip; at least 30 ms, as the player waits.
fn repair_wait(rtt: Duration) -> Duration {
    rtt.mul_f32(1.5).max(Duration::from_millis(30))
}
/// A reliable object still missing this long after its deadline (or as long as its deadline was,
/// if longer) is counted lost and its stream given up.
const MIN_LATE_LIMIT: Duration = Duration::from_secs(5);

/// The source blocks of an object from its OTI (RFC 6330 §4.4.1.2 partitioning: the first ZL
/// blocks have ⌈Kt/Z⌉ symbols, the rest ⌊Kt/Z⌋), checked against the RESPONSE's K.
fn source_blocks(oti: &[u8; 12], source_symbols: u64) -> Option<Vec<Block>> {
    let info = raptorq::ObjectTransmissionInformation::deserialize(oti);
    let (length, symbol_size, z) = (info.transfer_length(), u64::from(info.symbol_size()), u64::from(info.source_blocks()));
    if symbol_size == 0 || z == 0 {
        return None;
    }
    let kt = length.div_ceil(symbol_size);
    if kt != source_symbols || z > kt.max(1) || kt > 56_403 * z {
        return None;
    }
    let (large, small) = (kt.div_ceil(z), kt / z);
    let large_blocks = kt - small * z;
    let block = |k: u64| Block { source_symbols: k as u32, source_seen: vec![0; (k as usize).div_ceil(64)], source_count: 0, repair_count: 0 };
    Some((0..z).map(|i| block(if i < large_blocks { large } else { small })).collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use holoquic_proto::Response;

    fn framed(message: Message) -> Vec<u8> {
        let mut out = Vec::new();
        message.encode(&mut out);
        out
    }

    fn datagram_response(length: u64, symbol_size: u16, planned: u64) -> Vec<u8> {
        let oti = raptorq::ObjectTransmissionInformation::with_defaults(length, symbol_size).serialize();
        let k = length.div_ceil(u64::from(symbol_size));
        framed(Message::Response(Response {
            status: 200,
            body: ResponseBody::Datagram { object_length: length, oti, source_symbols: k, planned_repair: planned, first_repair_esi: k },
        }))
    }

    fn packet(sbn: u8, esi: u32) -> Vec<u8> {
        let mut p = vec![sbn];
        p.extend_from_slice(&esi.to_be_bytes()[1..]);
        p.extend_from_slice(&[0; 100]);
        p
    }

    #[test]
    fn reliable_completes_with_its_last_byte_and_fin_and_is_late_after_the_deadline() {
        let t0 = Instant::now();
        let mut r = ObjectRequest::new(1, Delivery::Reliable, t0, t0 + Duration::from_millis(100));
        let mut bytes = framed(Message::Response(Response { status: 200, body: ResponseBody::Reliable { object_length: 10 } }));
        bytes.extend_from_slice(&[7; 4]);
        assert_eq!(r.on_stream(&bytes, false, t0), (None, Reply::None));
        let at = t0 + Duration::from_millis(150);
        assert_eq!(r.on_stream(&[7; 6], true, at), (Some(Outcome::Late(Duration::from_millis(150))), Reply::None));
        assert_eq!(r.received_bytes, 10);
        // A body longer than announced is a protocol error, not a success.
        let mut r = ObjectRequest::new(1, Delivery::Reliable, t0, t0 + Duration::from_secs(1));
        let mut bytes = framed(Message::Response(Response { status: 200, body: ResponseBody::Reliable { object_length: 2 } }));
        bytes.extend_from_slice(&[1, 2, 3]);
        assert_eq!(r.on_stream(&bytes, true, t0).0, Some(Outcome::Lost(LostReason::Protocol)));
    }

    #[test]
    fn datagram_object_completes_from_source_symbols_or_enough_repair() {
        let t0 = Instant::now();
        let mut r = ObjectRequest::new(2, Delivery::Datagram, t0, t0 + Duration::from_secs(1));
        // A symbol before the RESPONSE is held and counted once it comes.
        assert_eq!(r.on_symbol(&packet(0, 0), t0), None);
        assert_eq!(r.on_stream(&datagram_response(960, 96, 0), false, t0), (None, Reply::None));
        for esi in 1..9 {
            assert_eq!(r.on_symbol(&packet(0, esi), t0), None);
        }
        assert_eq!(r.on_symbol(&packet(0, 3), t0), None, "a repeated source symbol adds nothing");
        // One source symbol missing: two repair symbols are not enough (K + 2 needed), three are.
        assert_eq!(r.on_symbol(&packet(0, 20), t0), None);
        assert_eq!(r.on_symbol(&packet(0, 21), t0), None);
        let at = t0 + Duration::from_millis(5);
        assert_eq!(r.on_symbol(&packet(0, 22), at), Some(Outcome::OnTime(Duration::from_millis(5))));
    }

    #[test]
    fn short_datagram_object_asks_for_repair_then_is_lost_at_its_deadline() {
        let t0 = Instant::now();
        let rtt = Duration::from_millis(1);
        let mut r = ObjectRequest::new(3, Delivery::Datagram, t0, t0 + Duration::from_millis(500));
        r.on_stream(&datagram_response(960, 96, 0), false, t0);
        for esi in 0..7 {
            r.on_symbol(&packet(0, esi), t0);
        }
        r.on_stream(&framed(Message::Sent { symbols_sent: 10, next_esi: 10 }), false, t0);
        assert_eq!(r.on_time(t0 + Duration::from_millis(10), rtt, true), (None, Reply::None), "waits a round trip for what is in flight");
        assert_eq!(r.on_time(t0 + repair_wait(rtt), rtt, true), (None, Reply::Repair(5 + DECODE_MARGIN)));
        assert_eq!(r.on_time(t0 + Duration::from_millis(499), rtt, true), (None, Reply::None));
        assert_eq!(r.on_time(t0 + Duration::from_millis(500), rtt, true), (Some(Outcome::Lost(LostReason::Deadline)), Reply::Cancel));
        assert_eq!(r.repair_requests, 1);
    }

    #[test]
    fn error_status_and_partition() {
        let t0 = Instant::now();
        let mut r = ObjectRequest::new(4, Delivery::Datagram, t0, t0 + Duration::from_secs(1));
        let refused = framed(Message::Response(Response { status: 404, body: ResponseBody::Error { message: "no".into() } }));
        assert_eq!(r.on_stream(&refused, false, t0).0, Some(Outcome::Lost(LostReason::Status(404))));
        // 10 symbols in 3 blocks: 4 + 3 + 3.
        let mut oti = raptorq::ObjectTransmissionInformation::new(960, 96, 3, 1, 8).serialize();
        let sizes: Vec<u32> = source_blocks(&oti, 10).unwrap().iter().map(|b| b.source_symbols).collect();
        assert_eq!(sizes, [4, 3, 3]);
        oti[8] = 0;
        assert!(source_blocks(&oti, 10).is_none());
    }
}
