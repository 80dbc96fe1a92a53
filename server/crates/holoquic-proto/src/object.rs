//! The object delivery protocol (docs/protocol.md §3): messages on a request stream, framed as
//! `type varint | length varint | body`, and the object datagrams that carry RaptorQ symbols.

use crate::path::PathReport;
use crate::varint::{put, Reader};
use crate::DecodeError;

/// Longest object path a REQUEST may carry.
pub const MAX_PATH_LEN: usize = 1024;
/// Longest REQUEST message (header and body) the origin accepts.
pub const MAX_REQUEST_LEN: usize = 2048;
/// Longest message body of any other type: bounds what a peer can make us buffer.
pub const MAX_MESSAGE_BODY: usize = 4096;
/// Request ids must stay below this (they tag every datagram, so they are kept short).
pub const REQUEST_ID_LIMIT: u64 = 1 << 32;

mod kind {
    pub const REQUEST: u64 = 0x01;
    pub const REPAIR: u64 = 0x02;
    pub const CANCEL: u64 = 0x03;
    pub const RESPONSE: u64 = 0x10;
    pub const SENT: u64 = 0x11;
    pub const END: u64 = 0x12;
    pub const SYMBOL: u64 = 0x13;
    pub const PATH: u64 = 0x14;
}

/// How the object travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// Response header and bytes on the request stream.
    Reliable = 0,
    /// RaptorQ symbols as WebTransport datagrams.
    Datagram = 1,
}

/// How much repair the origin sends unprompted for a datagram request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FecMode {
    /// Source symbols only: any loss needs REPAIR on demand.
    None = 0,
    /// The origin plans repair from the reported loss rate and burst length.
    Planned = 1,
    /// Repair = `overhead_permille` / 1000 × source symbols.
    Fixed = 2,
}

/// REQUEST (0x01): the first message on a request stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Request {
    pub request_id: u64,
    pub delivery: Delivery,
    /// RFC 9218 urgency, 0 (most urgent) … 7.
    pub urgency: u8,
    /// 0 = no deadline; else milliseconds after the origin receives the request.
    pub deadline_ms: u64,
    pub fec_mode: FecMode,
    /// Client-measured datagram loss rate in parts per million.
    pub loss_ppm: u32,
    /// Mean loss-burst length × 1000; 0 = unknown.
    pub burst_milli: u32,
    pub overhead_permille: u32,
    pub path: String,
}

/// RESPONSE (0x10) body after the status.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResponseBody {
    /// 200 for a reliable request: `object_length` raw bytes follow on the stream.
    Reliable { object_length: u64 },
    /// 200 for a datagram request: how to build the RaptorQ decoder.
    Datagram {
        object_length: u64,
        /// RFC 6330 object transmission information, 12 bytes.
        oti: [u8; 12],
        source_symbols: u64,
        planned_repair: u64,
        /// The ESI the first repair symbol of source block 0 carries. Repair symbol n of a block
        /// carries ESI K' + n, K' being the block's extended source block size (RFC 6330 §5.3.1;
        /// raptorq puts that internal symbol id on the wire), so repair ESIs do not continue from
        /// K: a client that counts losses from ESI gaps needs this to place repair symbols.
        first_repair_esi: u64,
    },
    /// Any other status, with a human-readable reason.
    Error { message: String },
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    pub status: u16,
    pub body: ResponseBody,
}

/// Every message of the request stream.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Message {
    Request(Request),
    /// Additional repair symbols wanted per source block.
    Repair {
        symbols: u64,
    },
    Cancel,
    Response(Response),
    Sent {
        symbols_sent: u64,
        next_esi: u64,
    },
    End {
        reason: EndReason,
        symbols_sent: u64,
        purged: u64,
    },
    /// A RaptorQ encoding packet (`sbn u8 | esi u24 | symbol`) of the request, carried on its
    /// stream instead of in a datagram (docs/protocol.md → SYMBOL): the origin fills the tail of
    /// the congestion window with it when the next datagram does not fit.
    Symbol {
        packet: Vec<u8>,
    },
    /// The origin's view of the network path, on the session's path stream (path.rs).
    Path(PathReport),
}

/// Why the origin ended a datagram request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndReason {
    Completed = 0,
    DeadlinePassed = 1,
    Cancelled = 2,
    SessionClosing = 3,
}

impl Message {
    /// Appends the framed message.
    pub fn encode(&self, out: &mut Vec<u8>) {
        let mut body = Vec::new();
        let kind = match self {
            Message::Request(r) => {
                put(&mut body, r.request_id);
                body.push(r.delivery as u8);
                body.push(r.urgency);
                put(&mut body, r.deadline_ms);
                body.push(r.fec_mode as u8);
                put(&mut body, r.loss_ppm.into());
                put(&mut body, r.burst_milli.into());
                put(&mut body, r.overhead_permille.into());
                put(&mut body, r.path.len() as u64);
                body.extend_from_slice(r.path.as_bytes());
                kind::REQUEST
            }
            Message::Repair { symbols } => {
                put(&mut body, *symbols);
                kind::REPAIR
            }
            Message::Cancel => kind::CANCEL,
            Message::Response(r) => {
                put(&mut body, r.status.into());
                match &r.body {
                    ResponseBody::Reliable { object_length } => put(&mut body, *object_length),
                    ResponseBody::Datagram { object_length, oti, source_symbols, planned_repair, first_repair_esi } => {
                        put(&mut body, *object_length);
                        body.extend_from_slice(oti);
                        put(&mut body, *source_symbols);
                        put(&mut body, *planned_repair);
                        put(&mut body, *first_repair_esi);
                    }
                    ResponseBody::Error { message } => {
                        put(&mut body, 0);
                        body.extend_from_slice(message.as_bytes());
                    }
                }
                kind::RESPONSE
            }
            Message::Sent { symbols_sent, next_esi } => {
                put(&mut body, *symbols_sent);
                put(&mut body, *next_esi);
                kind::SENT
            }
            Message::End { reason, symbols_sent, purged } => {
                body.push(*reason as u8);
                put(&mut body, *symbols_sent);
                put(&mut body, *purged);
                kind::END
            }
            Message::Symbol { packet } => {
                body.extend_from_slice(packet);
                kind::SYMBOL
            }
            Message::Path(report) => {
                report.encode_body(&mut body);
                kind::PATH
            }
        };
        put(out, kind);
        put(out, body.len() as u64);
        out.extend_from_slice(&body);
    }

    /// Decodes one framed message from the start of `input`; returns it and the bytes consumed.
    /// `Incomplete` means: wait for more stream data (the frame header already bounds how much).
    pub fn decode(input: &[u8]) -> Result<(Self, usize), DecodeError> {
        let mut r = Reader::new(input);
        let kind = r.varint()?;
        let len = r.varint()?;
        let limit = if kind == kind::REQUEST { MAX_REQUEST_LEN } else { MAX_MESSAGE_BODY };
        if len > limit as u64 {
            return Err(DecodeError::OverLimit("message body too long"));
        }
        let body = r.bytes(len as usize)?;
        let message = decode_body(kind, body)?;
        Ok((message, r.position()))
    }
}

fn decode_body(kind: u64, body: &[u8]) -> Result<Message, DecodeError> {
    // The frame is complete, so running out of body bytes is malformed, not incomplete.
    let short = |e: DecodeError| match e {
        DecodeError::Incomplete => DecodeError::Malformed("message body shorter than its fields"),
        other => other,
    };
    let mut r = Reader::new(body);
    let message = match kind {
        kind::REQUEST => Message::Request(decode_request(&mut r).map_err(short)?),
        kind::REPAIR => {
            let symbols = r.varint().map_err(short)?;
            if !(1..=65_535).contains(&symbols) {
                return Err(DecodeError::Malformed("repair symbol count outside 1..=65535"));
            }
            Message::Repair { symbols }
        }
        kind::CANCEL => Message::Cancel,
        kind::RESPONSE => Message::Response(decode_response(&mut r).map_err(short)?),
        kind::SENT => Message::Sent { symbols_sent: r.varint().map_err(short)?, next_esi: r.varint().map_err(short)? },
        kind::END => {
            let reason = match r.u8().map_err(short)? {
                0 => EndReason::Completed,
                1 => EndReason::DeadlinePassed,
                2 => EndReason::Cancelled,
                3 => EndReason::SessionClosing,
                _ => return Err(DecodeError::Malformed("unknown END reason")),
            };
            Message::End { reason, symbols_sent: r.varint().map_err(short)?, purged: r.varint().map_err(short)? }
        }
        kind::SYMBOL => {
            if body.len() < 5 {
                return Err(DecodeError::Malformed("SYMBOL shorter than payload id + 1 byte"));
            }
            return Ok(Message::Symbol { packet: body.to_vec() });
        }
        kind::PATH => Message::Path(PathReport::decode_body(&mut r).map_err(short)?),
        _ => return Err(DecodeError::Malformed("unknown message type")),
    };
    if !r.remaining().is_empty() && kind != kind::RESPONSE {
        return Err(DecodeError::Malformed("trailing bytes in message body"));
    }
    Ok(message)
}

fn decode_request(r: &mut Reader<'_>) -> Result<Request, DecodeError> {
    let request_id = r.varint()?;
    if request_id >= REQUEST_ID_LIMIT {
        return Err(DecodeError::Malformed("request id ≥ 2^32"));
    }
    let delivery = match r.u8()? {
        0 => Delivery::Reliable,
        1 => Delivery::Datagram,
        _ => return Err(DecodeError::Malformed("unknown delivery")),
    };
    let urgency = r.u8()?;
    if urgency > 7 {
        return Err(DecodeError::Malformed("urgency above 7"));
    }
    let deadline_ms = r.varint()?;
    let fec_mode = match r.u8()? {
        0 => FecMode::None,
        1 => FecMode::Planned,
        2 => FecMode::Fixed,
        _ => return Err(DecodeError::Malformed("unknown fec mode")),
    };
    let loss_ppm = r.varint()?;
    if loss_ppm > 1_000_000 {
        return Err(DecodeError::Malformed("loss above 1 000 000 ppm"));
    }
    let burst_milli = u32::try_from(r.varint()?).map_err(|_| DecodeError::Malformed("burst length too large"))?;
    let overhead_permille = u32::try_from(r.varint()?).map_err(|_| DecodeError::Malformed("overhead too large"))?;
    let path_len = r.varint()?;
    if path_len > MAX_PATH_LEN as u64 {
        return Err(DecodeError::OverLimit("path longer than 1024 bytes"));
    }
    let path = std::str::from_utf8(r.bytes(path_len as usize)?).map_err(|_| DecodeError::Malformed("path is not UTF-8"))?.to_owned();
    Ok(Request { request_id, delivery, urgency, deadline_ms, fec_mode, loss_ppm: loss_ppm as u32, burst_milli, overhead_permille, path })
}

fn decode_response(r: &mut Reader<'_>) -> Result<Response, DecodeError> {
    let status = u16::try_from(r.varint()?).map_err(|_| DecodeError::Malformed("status too large"))?;
    let object_length = r.varint()?;
    let rest = r.remaining();
    let body = if status != 200 {
        // Strict, as for paths: a lossy decode would turn each invalid byte into a 3-byte
        // U+FFFD, so the message would no longer re-encode within the body limit it came in.
        let message = std::str::from_utf8(r.bytes(rest.len())?).map_err(|_| DecodeError::Malformed("error message is not UTF-8"))?.to_owned();
        ResponseBody::Error { message }
    } else if rest.is_empty() {
        // A reliable 200 carries no further fields: the body length tells the two forms apart.
        ResponseBody::Reliable { object_length }
    } else {
        let oti: [u8; 12] = r.bytes(12)?.try_into().expect("12 bytes");
        let source_symbols = r.varint()?;
        let planned_repair = r.varint()?;
        let first_repair_esi = r.varint()?;
        if !r.remaining().is_empty() {
            return Err(DecodeError::Malformed("trailing bytes in RESPONSE"));
        }
        ResponseBody::Datagram { object_length, oti, source_symbols, planned_repair, first_repair_esi }
    };
    Ok(Response { status, body })
}

/// The payload of an object datagram after the WebTransport quarter-stream-id prefix:
/// `request_id varint | RaptorQ EncodingPacket (sbn u8 | esi u24 | symbol)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ObjectDatagram<'a> {
    pub request_id: u64,
    /// Serialized `raptorq::EncodingPacket`, handed to the decoder unchanged.
    pub packet: &'a [u8],
}

impl<'a> ObjectDatagram<'a> {
    pub fn encode_header(request_id: u64, out: &mut Vec<u8>) {
        put(out, request_id);
    }

    pub fn decode(payload: &'a [u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(payload);
        let request_id = r.varint().map_err(|_| DecodeError::Malformed("datagram without request id"))?;
        let packet = r.remaining();
        if packet.len() < 5 {
            return Err(DecodeError::Malformed("datagram shorter than payload id + 1 byte"));
        }
        Ok(Self { request_id, packet })
    }

    pub fn source_block(&self) -> u8 {
        self.packet[0]
    }

    pub fn symbol_id(&self) -> u32 {
        u32::from_be_bytes([0, self.packet[1], self.packet[2], self.packet[3]])
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    // Byte examples, every message type and refused bytes: tests/protocol_vectors.rs, from
    // docs/vectors/protocol.json (shared with the player's codec tests).

    #[test]
    fn an_error_message_that_is_not_utf8_is_refused() {
        // RESPONSE, body: status 404, object length 0, then one byte that is no UTF-8.
        let bytes = [kind::RESPONSE as u8, 4, 0x41, 0x94, 0, 0xff];
        assert_eq!(Message::decode(&bytes), Err(DecodeError::Malformed("error message is not UTF-8")));
        let text = [kind::RESPONSE as u8, 5, 0x41, 0x94, 0, b'n', b'o'];
        let expected = Response { status: 404, body: ResponseBody::Error { message: "no".into() } };
        assert_eq!(Message::decode(&text), Ok((Message::Response(expected), text.len())));
    }

    proptest! {
        #[test]
        fn any_bytes_decode_or_error(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            if let Ok((_, n)) = Message::decode(&bytes) {
                prop_assert!(n <= bytes.len());
            }
            let _ = ObjectDatagram::decode(&bytes);
        }

        #[test]
        fn requests_round_trip(
            request_id in 0..REQUEST_ID_LIMIT, urgency in 0u8..=7, deadline_ms in 0u64..1 << 30,
            loss_ppm in 0u32..=1_000_000, burst_milli in any::<u32>(), overhead_permille in any::<u32>(),
            path in "/content/[a-z0-9/._-]{0,200}", datagram in any::<bool>(), fec in 0u8..3,
        ) {
            let message = Message::Request(Request {
                request_id, urgency, deadline_ms, loss_ppm, burst_milli, overhead_permille, path,
                delivery: if datagram { Delivery::Datagram } else { Delivery::Reliable },
                fec_mode: [FecMode::None, FecMode::Planned, FecMode::Fixed][fec as usize],
            });
            let mut out = Vec::new();
            message.encode(&mut out);
            prop_assert_eq!(Message::decode(&out), Ok((message, out.len())));
        }
    }
}
