//! Entry points for fuzzing the wire parsers: one function per parser family, taking any bytes
//! as a peer could send them and checking what must hold for every input — decoding never
//! panics, never claims more bytes than it was given, and whatever decodes encodes back to bytes
//! that decode to the same value. A broken invariant panics, which the fuzzer reports.
//!
//! The cargo-fuzz targets (`server/fuzz/fuzz_targets/`) call these, and so does the stable
//! corpus replay (`tests/fuzz_corpus.rs`), so the committed corpora and every crash reproducer
//! are checked in CI without a nightly toolchain.

use crate::h3::{capsule_type, frame_type, split_datagram, CloseSession, Frame, Settings, WebTransportStreamHeader};
use crate::h3::{stream_type, WEBTRANSPORT_BIDI_SIGNAL};
use crate::object::{Message, ObjectDatagram};

/// `data` as the bytes of an HTTP/3 control or request stream: frames one after another until
/// one is incomplete or refused; SETTINGS payloads decoded; and the whole input also as a
/// WebTransport stream header (both signals) and as an HTTP/3 datagram.
pub fn h3_frames(data: &[u8]) {
    for_each_frame(data, |frame| {
        if frame.kind == frame_type::SETTINGS {
            if let Ok(settings) = Settings::decode(frame.payload) {
                let mut out = Vec::new();
                settings.encode_frame(&mut out);
                let (again, used) = Frame::decode(&out).expect("an encoded SETTINGS frame decodes");
                assert_eq!(used, out.len());
                assert_eq!(Settings::decode(again.payload).as_ref(), Ok(&settings), "SETTINGS round trip");
            }
        }
    });
    for signal in [WEBTRANSPORT_BIDI_SIGNAL, stream_type::WEBTRANSPORT_UNI] {
        if let Ok((header, used)) = WebTransportStreamHeader::decode(data, signal) {
            assert!(used <= data.len());
            let mut out = Vec::new();
            header.encode(signal, &mut out);
            assert_eq!(WebTransportStreamHeader::decode(&out, signal), Ok((header, out.len())));
        }
    }
    if let Ok((session_id, payload)) = split_datagram(data) {
        assert_eq!(session_id % 4, 0);
        assert!(payload.len() < data.len());
    }
}

/// `data` as the capsules of a WebTransport session's CONNECT stream (after its DATA framing):
/// CLOSE_WEBTRANSPORT_SESSION decoded and round-tripped, the others skipped as the origin does.
pub fn capsules(data: &[u8]) {
    for_each_frame(data, |capsule| {
        if capsule.kind == capsule_type::CLOSE_WEBTRANSPORT_SESSION {
            if let Ok(close) = CloseSession::decode(capsule.payload) {
                let mut out = Vec::new();
                close.encode_capsule(&mut out);
                let (again, used) = Frame::decode(&out).expect("an encoded capsule decodes");
                assert_eq!(used, out.len());
                assert_eq!(CloseSession::decode(again.payload), Ok(close), "close capsule round trip");
            }
        }
    });
}

/// `data` as a request stream of the object protocol: messages one after another, each
/// round-tripped; and the whole input as an object datagram's payload.
pub fn object_messages(data: &[u8]) {
    let mut rest = data;
    while let Ok((message, used)) = Message::decode(rest) {
        assert!(used > 0 && used <= rest.len(), "a message consumes some of its input");
        let mut out = Vec::new();
        message.encode(&mut out);
        assert_eq!(Message::decode(&out), Ok((message, out.len())), "message round trip");
        rest = &rest[used..];
    }
    if let Ok(datagram) = ObjectDatagram::decode(data) {
        assert!(datagram.packet.len() >= 5 && datagram.packet.len() < data.len());
        let _ = (datagram.source_block(), datagram.symbol_id());
    }
}

/// Decodes frames from the start of `data` until one is incomplete or refused, checking each
/// consumed within bounds and re-encoding to itself.
fn for_each_frame(data: &[u8], mut each: impl FnMut(&Frame<'_>)) {
    let mut rest = data;
    while let Ok((frame, used)) = Frame::decode(rest) {
        assert!(used > 0 && used <= rest.len(), "a frame consumes some of its input");
        assert!(frame.payload.len() as u64 <= crate::h3::MAX_FRAME_PAYLOAD);
        let mut out = Vec::new();
        Frame::encode(frame.kind, frame.payload, &mut out);
        assert_eq!(Frame::decode(&out), Ok((frame.clone(), out.len())), "frame round trip");
        each(&frame);
        rest = &rest[used..];
    }
}
