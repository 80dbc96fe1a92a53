//! The object protocol as bytes (docs/protocol.md §3–4), checked against the shared vectors of
//! `docs/vectors/protocol.json`, which `src/transport/codec.test.ts` checks the player's codec
//! against too. Every message is built from its listed fields and must encode to the listed bytes,
//! and the bytes must decode back to it; datagrams and varints likewise; the listed bad bytes must
//! be refused for the listed reason.

mod common;

use common::{bytes, read_vector};
use holoquic_proto::object::EndReason;
use holoquic_proto::{DecodeError, Delivery, FecMode, Message, ObjectDatagram, PathReport, Request, Response, ResponseBody, VarInt};
use serde_json::Value;

/// One list of `protocol.json`.
fn entries(list: &str) -> Vec<Value> {
    let entries = read_vector("protocol.json")[list].as_array().unwrap_or_else(|| panic!("protocol.json has no list {list:?}")).clone();
    assert!(!entries.is_empty(), "protocol.json's {list} is empty");
    entries
}

fn name(entry: &Value) -> &str {
    entry["name"].as_str().expect("every vector has a name")
}

fn hex_bytes(entry: &Value) -> Vec<u8> {
    bytes(entry["hex"].as_str().unwrap_or_else(|| panic!("{}: no hex", name(entry))))
}

/// A vector's fields, read by their docs/protocol.md names.
struct Fields<'a>(&'a Value);

impl Fields<'_> {
    fn number(&self, field: &str) -> u64 {
        self.0[field].as_u64().unwrap_or_else(|| panic!("field {field} is not a whole number in {}", self.0))
    }

    fn narrow<T: TryFrom<u64>>(&self, field: &str) -> T {
        T::try_from(self.number(field)).unwrap_or_else(|_| panic!("field {field} out of range in {}", self.0))
    }

    fn text(&self, field: &str) -> &str {
        self.0[field].as_str().unwrap_or_else(|| panic!("field {field} is not a string in {}", self.0))
    }

    fn bytes(&self, field: &str) -> Vec<u8> {
        bytes(self.text(field))
    }
}

/// The message a `messages` entry describes.
fn message(entry: &Value) -> Message {
    let f = Fields(&entry["fields"]);
    match entry["type"].as_str().unwrap_or_default() {
        "request" => Message::Request(Request {
            request_id: f.number("request_id"),
            delivery: match f.text("delivery") {
                "reliable" => Delivery::Reliable,
                "datagram" => Delivery::Datagram,
                other => panic!("unknown delivery {other}"),
            },
            urgency: f.narrow("urgency"),
            deadline_ms: f.number("deadline_ms"),
            fec_mode: match f.text("fec_mode") {
                "none" => FecMode::None,
                "planned" => FecMode::Planned,
                "fixed" => FecMode::Fixed,
                other => panic!("unknown fec_mode {other}"),
            },
            loss_ppm: f.narrow("loss_ppm"),
            burst_milli: f.narrow("burst_milli"),
            overhead_permille: f.narrow("overhead_permille"),
            path: f.text("path").into(),
        }),
        "repair" => Message::Repair { symbols: f.number("symbols") },
        "cancel" => Message::Cancel,
        "response" => Message::Response(Response {
            status: f.narrow("status"),
            body: match f.text("delivery") {
                "reliable" => ResponseBody::Reliable { object_length: f.number("object_length") },
                "datagram" => ResponseBody::Datagram {
                    object_length: f.number("object_length"),
                    oti: f.bytes("oti").try_into().expect("an OTI is 12 bytes"),
                    source_symbols: f.number("source_symbols"),
                    planned_repair: f.number("planned_repair"),
                    first_repair_esi: f.number("first_repair_esi"),
                },
                "error" => ResponseBody::Error { message: f.text("message").into() },
                other => panic!("unknown response delivery {other}"),
            },
        }),
        "sent" => Message::Sent { symbols_sent: f.number("symbols_sent"), next_esi: f.number("next_esi") },
        "end" => Message::End {
            reason: match f.text("reason") {
                "completed" => EndReason::Completed,
                "deadline-passed" => EndReason::DeadlinePassed,
                "cancelled" => EndReason::Cancelled,
                "session-closing" => EndReason::SessionClosing,
                other => panic!("unknown END reason {other}"),
            },
            symbols_sent: f.number("symbols_sent"),
            purged: f.number("purged"),
        },
        "symbol" => Message::Symbol { packet: f.bytes("packet") },
        "path" => Message::Path(PathReport {
            smoothed_rtt_us: f.number("smoothed_rtt_us"),
            min_rtt_us: f.number("min_rtt_us"),
            rtt_var_us: f.number("rtt_var_us"),
            cwnd_bytes: f.number("cwnd_bytes"),
            delivery_rate_bytes_per_s: f.number("delivery_rate_bytes_per_s"),
        }),
        other => panic!("{}: unknown message type {other:?}", name(entry)),
    }
}

#[test]
fn messages_encode_to_their_bytes_and_decode_back() {
    for entry in entries("messages") {
        let (name, message, expected) = (name(&entry), message(&entry), hex_bytes(&entry));
        let mut encoded = Vec::new();
        message.encode(&mut encoded);
        assert_eq!(encoded, expected, "{name}: encoding");
        assert_eq!(Message::decode(&expected), Ok((message, expected.len())), "{name}: decoding");
        // Every cut of a frame asks for more bytes rather than failing.
        for cut in 0..expected.len() {
            assert_eq!(Message::decode(&expected[..cut]), Err(DecodeError::Incomplete), "{name}: cut at {cut}");
        }
    }
}

#[test]
fn datagrams_decode_to_their_fields_and_encode_back() {
    for entry in entries("datagrams") {
        let (name, expected, f) = (name(&entry), hex_bytes(&entry), Fields(&entry["fields"]));
        let datagram = ObjectDatagram::decode(&expected).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(datagram.request_id, f.number("request_id"), "{name}: request id");
        assert_eq!(u64::from(datagram.source_block()), f.number("source_block"), "{name}: source block");
        assert_eq!(u64::from(datagram.symbol_id()), f.number("symbol_id"), "{name}: symbol id");
        assert_eq!(datagram.packet, f.bytes("packet"), "{name}: packet");
        let mut encoded = Vec::new();
        ObjectDatagram::encode_header(datagram.request_id, &mut encoded);
        encoded.extend_from_slice(datagram.packet);
        assert_eq!(encoded, expected, "{name}: encoding");
    }
}

#[test]
fn varints_encode_to_their_bytes_and_decode_back() {
    for entry in entries("varints") {
        let (name, expected) = (name(&entry), hex_bytes(&entry));
        let value: u64 = entry["value"].as_str().and_then(|v| v.parse().ok()).unwrap_or_else(|| panic!("{name}: value is a decimal string"));
        let varint = VarInt::new(value).unwrap_or_else(|| panic!("{name}: {value} is beyond 2^62"));
        assert_eq!(VarInt::decode(&expected), Ok((varint, expected.len())), "{name}: decoding");
        if entry["decodeOnly"] != Value::Bool(true) {
            let mut encoded = Vec::new();
            varint.encode(&mut encoded);
            assert_eq!(encoded, expected, "{name}: encoding");
        }
    }
}

/// Whether `error` is the kind of refusal a vector names.
fn is_refusal(error: &DecodeError, expected: &str) -> bool {
    match expected {
        "malformed" => matches!(error, DecodeError::Malformed(_)),
        "over-limit" => matches!(error, DecodeError::OverLimit(_)),
        other => panic!("unknown refusal {other:?}"),
    }
}

#[test]
fn invalid_messages_and_datagrams_are_refused_for_the_listed_reason() {
    for (list, decode) in [
        ("invalidMessages", (|b| Message::decode(b).map(drop)) as fn(&[u8]) -> Result<(), DecodeError>),
        ("invalidDatagrams", |b| ObjectDatagram::decode(b).map(drop)),
    ] {
        for entry in entries(list) {
            let expected = entry["error"].as_str().expect("every invalid vector names its error");
            match decode(&hex_bytes(&entry)) {
                Err(error) => assert!(is_refusal(&error, expected), "{}: {error}, not {expected}", name(&entry)),
                Ok(()) => panic!("{}: accepted, should be {expected}", name(&entry)),
            }
        }
    }
}
