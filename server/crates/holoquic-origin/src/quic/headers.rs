//! HTTP/3 field sections: decoding a request's HEADERS into the few fields the origin looks at,
//! and encoding the responses it gives (200 to a session's CONNECT, a status and a short text
//! body to anything refused, the header fields of a GET or HEAD answer). QPACK with the static
//! table only: our SETTINGS give the peer no dynamic table, so no QPACK stream is needed either
//! way.

use holoquic_proto::h3::{frame_type, Frame};
use quiche::h3::qpack;
use quiche::h3::{Header, NameValue};

/// Bytes of a HEADERS frame we accept (the frame still being collected, or its decoded field
/// section).
pub const MAX_HEADERS: usize = 16 * 1024;

/// The fields of a request the origin decides on; a field the request lacks is empty.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RequestHead {
    pub method: String,
    /// The extended CONNECT protocol (`webtransport` for a session).
    pub protocol: String,
    pub path: String,
    /// The page that opens the session (`origin` header), checked against `--allow-origin`.
    pub origin: String,
    /// `:authority` (`/config.json` names the host the client used).
    pub authority: String,
    /// The `range` header of a GET.
    pub range: String,
    /// The `priority` header (RFC 9218), e.g. `u=1, i`.
    pub priority: String,
    /// The `if-none-match` header of a conditional GET.
    pub if_none_match: String,
}

/// Decodes a HEADERS frame's payload; None when it is not a valid field section.
pub fn decode_request(block: &[u8]) -> Option<RequestHead> {
    let headers = qpack::Decoder::new().decode(block, MAX_HEADERS as u64).ok()?;
    let get = |name: &str| headers.iter().find(|h| h.name() == name.as_bytes()).map(|h| String::from_utf8_lossy(h.value()).into_owned());
    Some(RequestHead {
        method: get(":method").unwrap_or_default(),
        protocol: get(":protocol").unwrap_or_default(),
        path: get(":path").unwrap_or_default(),
        origin: get("origin").unwrap_or_default(),
        authority: get(":authority").unwrap_or_default(),
        range: get("range").unwrap_or_default(),
        priority: get("priority").unwrap_or_default(),
        if_none_match: get("if-none-match").unwrap_or_default(),
    })
}

/// The HEADERS frame that accepts a session: `:status 200` alone (the stream stays open).
pub fn session_accepted() -> Vec<u8> {
    let mut out = Vec::new();
    encode(&[Header::new(b":status", b"200")], &mut out);
    out
}

/// A refusal: `:status` with a text/plain content type, then `body` as one DATA frame unless
/// it is empty (the caller finishes the stream).
pub fn refusal(status: &str, body: &str) -> Vec<u8> {
    let mut out = Vec::new();
    encode(&[Header::new(b":status", status.as_bytes()), Header::new(b"content-type", b"text/plain")], &mut out);
    if !body.is_empty() {
        Frame::encode(frame_type::DATA, body.as_bytes(), &mut out);
    }
    out
}

/// The HEADERS frame of a response: `:status`, then `fields` (lower-case names) in order.
pub fn response(status: u16, fields: &[(&str, String)]) -> Vec<u8> {
    let status = status.to_string();
    let mut headers = vec![Header::new(b":status", status.as_bytes())];
    headers.extend(fields.iter().map(|(name, value)| Header::new(name.as_bytes(), value.as_bytes())));
    let mut out = Vec::new();
    encode(&headers, &mut out);
    out
}

fn encode(headers: &[Header], out: &mut Vec<u8>) {
    // QPACK never makes a field longer than its literal form plus a few prefix bytes.
    let room = headers.iter().map(|h| h.name().len() + h.value().len() + 16).sum::<usize>() + 16;
    let mut block = vec![0u8; room];
    let n = qpack::Encoder::new().encode(headers, &mut block).expect("the block has room for every field as a literal");
    Frame::encode(frame_type::HEADERS, &block[..n], out);
}

/// The QPACK fuzzing entry point (the `qpack` target of `server/fuzz` and the stable replay of
/// its corpus, `tests/fuzz_corpus_qpack.rs`): any bytes as a request's field section, decoded as
/// the origin decodes one. Whatever decodes must stay within the section limit (a decoded value
/// may grow up to 3× where invalid UTF-8 becomes U+FFFD) and, encoded again, decode to itself.
/// A broken invariant panics.
pub fn fuzz_request_block(block: &[u8]) {
    let Some(head) = decode_request(block) else { return };
    let fields = [
        (":method", &head.method),
        (":protocol", &head.protocol),
        (":path", &head.path),
        ("origin", &head.origin),
        (":authority", &head.authority),
        ("range", &head.range),
        ("priority", &head.priority),
        ("if-none-match", &head.if_none_match),
    ];
    assert!(fields.iter().all(|(_, value)| value.len() <= 3 * MAX_HEADERS), "a decoded field beyond the section limit");
    let present: Vec<Header> =
        fields.iter().filter(|(_, value)| !value.is_empty()).map(|(name, value)| Header::new(name.as_bytes(), value.as_bytes())).collect();
    let mut frame = Vec::new();
    encode(&present, &mut frame);
    let (encoded, _) = Frame::decode(&frame).expect("an encoded HEADERS frame decodes");
    // The decoder's limit counts each field as name + value + 32 bytes (RFC 9114 §4.2.2).
    let list_size: usize = present.iter().map(|h| h.name().len() + h.value().len() + 32).sum();
    if list_size <= MAX_HEADERS {
        assert_eq!(decode_request(encoded.payload).as_ref(), Some(&head), "field section round trip");
    }
}
