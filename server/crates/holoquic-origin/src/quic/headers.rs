//! HTTP/3 field sections for the WebTransport layer: decoding a request's HEADERS into the few
//! fields the origin looks at, and encoding the responses it gives (200 to a session's CONNECT,
//! a status and a short text body to anything refused). QPACK with the static table only: our
//! SETTINGS give the peer no dynamic table, so no QPACK stream is needed either way.

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

fn encode(headers: &[Header], out: &mut Vec<u8>) {
    let mut block = vec![0u8; 1024];
    let n = qpack::Encoder::new().encode(headers, &mut block).expect("a small field section fits 1 KiB");
    Frame::encode(frame_type::HEADERS, &block[..n], out);
}
