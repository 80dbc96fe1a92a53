//! The HTTP/3 subset WebTransport needs (docs/protocol.md §2): stream types, frames, SETTINGS,
//! capsules, error codes, and the WebTransport stream and datagram prefixes. Field sections
//! (QPACK, static table and literals only) are coded by the origin with quiche's `h3::qpack`.

use crate::varint::{put, Reader};
use crate::DecodeError;

/// The first varint of a unidirectional stream.
pub mod stream_type {
    pub const CONTROL: u64 = 0x00;
    pub const QPACK_ENCODER: u64 = 0x02;
    pub const QPACK_DECODER: u64 = 0x03;
    /// WebTransport uni stream: followed by the session id.
    pub const WEBTRANSPORT_UNI: u64 = 0x54;
}

/// The first varint of a client bidi stream that belongs to a WebTransport session.
pub const WEBTRANSPORT_BIDI_SIGNAL: u64 = 0x41;

/// HTTP/3 frame types we act on; others are skipped.
pub mod frame_type {
    pub const DATA: u64 = 0x00;
    pub const HEADERS: u64 = 0x01;
    pub const SETTINGS: u64 = 0x04;
    pub const GOAWAY: u64 = 0x07;

    /// Whether RFC 9114 defines `kind` (DATA, HEADERS, CANCEL_PUSH, SETTINGS, PUSH_PROMISE,
    /// GOAWAY, MAX_PUSH_ID, or the HTTP/2 types it reserves); any other type is skipped on receipt.
    pub fn is_defined(kind: u64) -> bool {
        kind <= 0x09 || kind == 0x0d
    }
}

/// SETTINGS identifiers the origin sends (all with value 1).
pub mod setting {
    pub const ENABLE_CONNECT_PROTOCOL: u64 = 0x08;
    pub const H3_DATAGRAM: u64 = 0x33;
    pub const ENABLE_WEBTRANSPORT_DRAFT02: u64 = 0x2b60_3742;
    pub const WEBTRANSPORT_MAX_SESSIONS: u64 = 0xc671_706a;
}

/// Capsule types on the session stream.
pub mod capsule_type {
    pub const CLOSE_WEBTRANSPORT_SESSION: u64 = 0x2843;
    pub const DRAIN_WEBTRANSPORT_SESSION: u64 = 0x78ae;
}

/// HTTP/3 (RFC 9114 §8.1) and WebTransport error codes the origin sends.
pub mod error_code {
    pub const H3_NO_ERROR: u64 = 0x100;
    pub const H3_GENERAL_PROTOCOL_ERROR: u64 = 0x101;
    pub const H3_INTERNAL_ERROR: u64 = 0x102;
    pub const H3_STREAM_CREATION_ERROR: u64 = 0x103;
    pub const H3_CLOSED_CRITICAL_STREAM: u64 = 0x104;
    pub const H3_FRAME_UNEXPECTED: u64 = 0x105;
    pub const H3_FRAME_ERROR: u64 = 0x106;
    pub const H3_EXCESSIVE_LOAD: u64 = 0x107;
    pub const H3_ID_ERROR: u64 = 0x108;
    pub const H3_SETTINGS_ERROR: u64 = 0x109;
    pub const H3_MISSING_SETTINGS: u64 = 0x10a;
    pub const H3_REQUEST_REJECTED: u64 = 0x10b;
    pub const H3_MESSAGE_ERROR: u64 = 0x10e;
    pub const H3_DATAGRAM_ERROR: u64 = 0x33;
    /// A WebTransport stream for a session that does not exist (any more).
    pub const WEBTRANSPORT_BUFFERED_STREAM_REJECTED: u64 = 0x3994_bd84;
    /// Streams of a session that ended.
    pub const WEBTRANSPORT_SESSION_GONE: u64 = 0x170d_7b68;
}

/// The HTTP/3 error code that carries WebTransport application error `code` on a stream reset
/// (draft-ietf-webtrans-http3 §4.3): codes are spread over a reserved range, skipping the
/// GREASE code points (one every 0x1f).
pub fn webtransport_error_to_h3(code: u32) -> u64 {
    const FIRST: u64 = 0x52e4_a40f_a8db;
    FIRST + u64::from(code) + u64::from(code) / 0x1e
}

/// Longest frame payload accepted on a control or request stream.
pub const MAX_FRAME_PAYLOAD: u64 = 64 * 1024;
/// Longest reason in a CLOSE_WEBTRANSPORT_SESSION capsule.
pub const MAX_CLOSE_REASON: usize = 1024;

/// One HTTP/3 frame (or capsule: the framing is the same, `type | length | payload`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Frame<'a> {
    pub kind: u64,
    pub payload: &'a [u8],
}

impl<'a> Frame<'a> {
    /// Decodes a frame at the start of `input`; returns it and the bytes consumed.
    /// Payloads over [`MAX_FRAME_PAYLOAD`] are refused before they are buffered.
    pub fn decode(input: &'a [u8]) -> Result<(Self, usize), DecodeError> {
        let mut r = Reader::new(input);
        let kind = r.varint()?;
        let len = r.varint()?;
        if len > MAX_FRAME_PAYLOAD {
            return Err(DecodeError::OverLimit("frame payload over 64 KiB"));
        }
        let payload = r.bytes(len as usize)?;
        Ok((Self { kind, payload }, r.position()))
    }

    pub fn encode(kind: u64, payload: &[u8], out: &mut Vec<u8>) {
        put(out, kind);
        put(out, payload.len() as u64);
        out.extend_from_slice(payload);
    }
}

/// A SETTINGS frame's identifier/value pairs.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Settings(pub Vec<(u64, u64)>);

impl Settings {
    /// What the origin advertises so Chromium accepts WebTransport (findings §1).
    pub fn webtransport_origin() -> Self {
        Self(vec![
            (setting::ENABLE_CONNECT_PROTOCOL, 1),
            (setting::H3_DATAGRAM, 1),
            (setting::ENABLE_WEBTRANSPORT_DRAFT02, 1),
            (setting::WEBTRANSPORT_MAX_SESSIONS, 1),
        ])
    }

    pub fn get(&self, id: u64) -> Option<u64> {
        self.0.iter().find(|(k, _)| *k == id).map(|(_, v)| *v)
    }

    /// Decodes a SETTINGS payload; a repeated identifier is an error (RFC 9114 §7.2.4).
    pub fn decode(payload: &[u8]) -> Result<Self, DecodeError> {
        let mut r = Reader::new(payload);
        let mut pairs: Vec<(u64, u64)> = Vec::new();
        while !r.remaining().is_empty() {
            let id = r.varint().map_err(|_| DecodeError::Malformed("truncated setting"))?;
            let value = r.varint().map_err(|_| DecodeError::Malformed("truncated setting"))?;
            if pairs.iter().any(|(k, _)| *k == id) {
                return Err(DecodeError::Malformed("repeated setting"));
            }
            if pairs.len() >= 64 {
                return Err(DecodeError::OverLimit("more than 64 settings"));
            }
            pairs.push((id, value));
        }
        Ok(Self(pairs))
    }

    /// Appends the whole SETTINGS frame.
    pub fn encode_frame(&self, out: &mut Vec<u8>) {
        let mut payload = Vec::new();
        for (id, value) in &self.0 {
            put(&mut payload, *id);
            put(&mut payload, *value);
        }
        Frame::encode(frame_type::SETTINGS, &payload, out);
    }
}

/// CLOSE_WEBTRANSPORT_SESSION: application error code and reason.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CloseSession {
    pub code: u32,
    pub reason: String,
}

impl CloseSession {
    pub fn decode(payload: &[u8]) -> Result<Self, DecodeError> {
        if payload.len() < 4 {
            return Err(DecodeError::Malformed("close capsule shorter than its error code"));
        }
        let reason = &payload[4..];
        if reason.len() > MAX_CLOSE_REASON {
            return Err(DecodeError::OverLimit("close reason over 1024 bytes"));
        }
        Ok(Self {
            code: u32::from_be_bytes(payload[..4].try_into().expect("4 bytes")),
            reason: std::str::from_utf8(reason).map_err(|_| DecodeError::Malformed("close reason is not UTF-8"))?.to_owned(),
        })
    }

    /// Appends the whole capsule; the reason is cut at a character boundary within 1024 bytes.
    pub fn encode_capsule(&self, out: &mut Vec<u8>) {
        let mut end = self.reason.len().min(MAX_CLOSE_REASON);
        while !self.reason.is_char_boundary(end) {
            end -= 1;
        }
        let mut payload = self.code.to_be_bytes().to_vec();
        payload.extend_from_slice(&self.reason.as_bytes()[..end]);
        Frame::encode(capsule_type::CLOSE_WEBTRANSPORT_SESSION, &payload, out);
    }
}

/// The header of a WebTransport stream: signal/type then session id.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WebTransportStreamHeader {
    pub session_id: u64,
}

impl WebTransportStreamHeader {
    /// Decodes `signal | session id` where `signal` is 0x41 (bidi) or 0x54 (uni).
    pub fn decode(input: &[u8], expected_signal: u64) -> Result<(Self, usize), DecodeError> {
        let mut r = Reader::new(input);
        if r.varint()? != expected_signal {
            return Err(DecodeError::Malformed("not a WebTransport stream"));
        }
        let session_id = r.varint()?;
        if session_id % 4 != 0 {
            return Err(DecodeError::Malformed("session id is not a client bidi stream id"));
        }
        Ok((Self { session_id }, r.position()))
    }

    pub fn encode(&self, signal: u64, out: &mut Vec<u8>) {
        put(out, signal);
        put(out, self.session_id);
    }
}

/// Splits an HTTP/3 datagram into (session id, WebTransport payload): RFC 9297 carries the
/// quarter stream id of the session stream first.
pub fn split_datagram(datagram: &[u8]) -> Result<(u64, &[u8]), DecodeError> {
    let mut r = Reader::new(datagram);
    let quarter = r.varint().map_err(|_| DecodeError::Malformed("datagram without quarter stream id"))?;
    let session_id = quarter.checked_mul(4).ok_or(DecodeError::Malformed("quarter stream id too large"))?;
    Ok((session_id, r.remaining()))
}

/// Appends the quarter-stream-id prefix of `session_id`.
pub fn datagram_prefix(session_id: u64, out: &mut Vec<u8>) {
    put(out, session_id / 4);
}

#[cfg(test)]
mod error_code_tests {
    use super::*;

    #[test]
    fn webtransport_codes_skip_grease() {
        assert_eq!(webtransport_error_to_h3(0), 0x52e4_a40f_a8db);
        assert_eq!(webtransport_error_to_h3(0x10), 0x52e4_a40f_a8eb);
        // 0x1e → skips the GREASE value 0x52e4a40fa8db + 0x1e = …a8f9.
        assert_eq!(webtransport_error_to_h3(0x1e), 0x52e4_a40f_a8fa);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn origin_settings_round_trip_as_a_frame() {
        let mut out = Vec::new();
        Settings::webtransport_origin().encode_frame(&mut out);
        let (frame, used) = Frame::decode(&out).unwrap();
        assert_eq!((frame.kind, used), (frame_type::SETTINGS, out.len()));
        let settings = Settings::decode(frame.payload).unwrap();
        assert_eq!(settings.get(setting::ENABLE_WEBTRANSPORT_DRAFT02), Some(1));
        assert_eq!(settings.get(setting::H3_DATAGRAM), Some(1));
    }

    #[test]
    fn chromium_settings_decode() {
        // 0x1=65536, 0x6=16384, 0x7=100, 0x33=1, 0xffd277=1, 0x2b603742=1 (findings §1)
        let mut p = Vec::new();
        for (k, v) in [(0x1, 65536), (0x6, 16384), (0x7, 100), (0x33, 1), (0xffd277, 1), (0x2b603742, 1)] {
            put(&mut p, k);
            put(&mut p, v);
        }
        let s = Settings::decode(&p).unwrap();
        assert_eq!(s.get(setting::ENABLE_WEBTRANSPORT_DRAFT02), Some(1));
        assert_eq!(s.get(0x1), Some(65536));
    }

    #[test]
    fn repeated_or_truncated_settings_are_malformed() {
        assert!(Settings::decode(&[0x33, 0x01, 0x33, 0x01]).is_err());
        assert!(Settings::decode(&[0x33]).is_err());
    }

    #[test]
    fn oversized_frames_are_refused_before_buffering() {
        // DATA frame claiming 1 MiB with no payload present yet
        assert_eq!(Frame::decode(&[0x00, 0x80, 0x10, 0x00, 0x00]), Err(DecodeError::OverLimit("frame payload over 64 KiB")));
    }

    #[test]
    fn close_capsule_round_trips_and_cuts_long_reasons() {
        let close = CloseSession { code: 7, reason: "é".repeat(600) };
        let mut out = Vec::new();
        close.encode_capsule(&mut out);
        let (frame, _) = Frame::decode(&out).unwrap();
        assert_eq!(frame.kind, capsule_type::CLOSE_WEBTRANSPORT_SESSION);
        let back = CloseSession::decode(frame.payload).unwrap();
        assert_eq!(back.code, 7);
        assert_eq!(back.reason.len(), 1024);
    }

    #[test]
    fn webtransport_headers_and_datagram_prefix() {
        let mut out = Vec::new();
        WebTransportStreamHeader { session_id: 8 }.encode(WEBTRANSPORT_BIDI_SIGNAL, &mut out);
        assert_eq!(out, [0x40, 0x41, 0x08]);
        assert_eq!(WebTransportStreamHeader::decode(&out, WEBTRANSPORT_BIDI_SIGNAL), Ok((WebTransportStreamHeader { session_id: 8 }, 3)));
        assert!(WebTransportStreamHeader::decode(&out, stream_type::WEBTRANSPORT_UNI).is_err());
        let mut d = Vec::new();
        datagram_prefix(8, &mut d);
        d.extend_from_slice(b"xy");
        assert_eq!(split_datagram(&d), Ok((8, &b"xy"[..])));
    }

    proptest! {
        #[test]
        fn any_bytes_decode_or_error(bytes in proptest::collection::vec(any::<u8>(), 0..64)) {
            let _ = Frame::decode(&bytes);
            let _ = Settings::decode(&bytes);
            let _ = CloseSession::decode(&bytes);
            let _ = WebTransportStreamHeader::decode(&bytes, WEBTRANSPORT_BIDI_SIGNAL);
            let _ = split_datagram(&bytes);
        }
    }
}
