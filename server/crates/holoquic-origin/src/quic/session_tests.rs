//! The session state machine (`session.rs`) alone: bytes a client would send go in, the actions
//! and state it arrives at come out. No QUIC connection, no files: what happens on the wire
//! around it is `limits_tests.rs`'s business.

use holoquic_proto::h3::{capsule_type, error_code, frame_type, stream_type, CloseSession, Frame, Settings, WEBTRANSPORT_BIDI_SIGNAL};
use holoquic_proto::varint::put;
use quiche::h3::Header;
use std::sync::atomic::Ordering;

use super::action::Action;
use super::headers::{RequestHead, MAX_HEADERS};
use super::session::{SessionEnv, SessionMachine};
use super::test_support::{connect, control_stream, headers_frame};
use crate::metrics::Metrics;

/// The client's control stream and the session's CONNECT stream, as a browser opens them.
const CONTROL: u64 = 2;
const SESSION: u64 = 0;

#[derive(Default)]
struct Fixture {
    machine: SessionMachine,
    metrics: Metrics,
    allowed_origins: Vec<String>,
}

impl Fixture {
    /// The machine, and what it consults.
    fn parts(&mut self) -> (&mut SessionMachine, SessionEnv<'_>) {
        (&mut self.machine, SessionEnv { wt_path: "/holoquic", allowed_origins: &self.allowed_origins, metrics: &self.metrics, draining: false })
    }

    fn data(&mut self, stream: u64, bytes: &[u8], fin: bool) -> Vec<Action> {
        let (machine, env) = self.parts();
        machine.on_stream_data(&env, stream, bytes, fin)
    }

    fn reset(&mut self, stream: u64) -> Vec<Action> {
        let (machine, env) = self.parts();
        machine.on_stream_reset(&env, stream)
    }

    fn accept_sent(&mut self, stream: u64, sent: bool) -> Vec<Action> {
        let (machine, env) = self.parts();
        machine.on_accept_sent(&env, stream, sent)
    }

    /// A machine with the client's SETTINGS read and a session open on stream 0.
    fn with_session() -> Self {
        let mut f = Self::default();
        assert_eq!(f.data(CONTROL, &control_stream(), false), []);
        assert_eq!(f.data(SESSION, &connect("CONNECT", "/holoquic"), false), [Action::Accept { stream: SESSION }]);
        assert_eq!(f.accept_sent(SESSION, true), []);
        f
    }

    fn count(&self, metric: impl Fn(&Metrics) -> &std::sync::atomic::AtomicU64) -> u64 {
        metric(&self.metrics).load(Ordering::Relaxed)
    }
}

/// The opening of a WebTransport bidi stream of `session`, then `rest`.
fn request_stream(session: u64, rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    put(&mut out, WEBTRANSPORT_BIDI_SIGNAL);
    put(&mut out, session);
    out.extend_from_slice(rest);
    out
}

/// A CLOSE_WEBTRANSPORT_SESSION capsule in a DATA frame, as browsers send it.
fn close_capsule(code: u32) -> Vec<u8> {
    let mut capsule = Vec::new();
    CloseSession { code, reason: "bye".into() }.encode_capsule(&mut capsule);
    let mut out = Vec::new();
    Frame::encode(frame_type::DATA, &capsule, &mut out);
    out
}

fn refused(stream: u64, status: &'static str, body: &'static str) -> Vec<Action> {
    vec![Action::Refuse { stream, status, body }]
}

#[test]
fn connect_accepted_opens_a_session_once_its_200_is_written() {
    let mut f = Fixture::default();
    f.data(CONTROL, &control_stream(), false);
    assert_eq!(f.data(SESSION, &connect("CONNECT", "/holoquic"), false), [Action::Accept { stream: SESSION }]);
    assert_eq!(f.machine.session_count(), 0, "not open before the 200 is written");
    assert_eq!(f.accept_sent(SESSION, true), []);
    assert_eq!(f.machine.session_count(), 1);
    assert_eq!((f.count(|m| &m.sessions_total), f.count(|m| &m.sessions_active)), (1, 1));
}

#[test]
fn connect_whose_200_was_not_written_is_refused_with_500() {
    let mut f = Fixture::default();
    f.data(SESSION, &connect("CONNECT", "/holoquic"), false);
    assert_eq!(f.accept_sent(SESSION, false), refused(SESSION, "500", ""));
    assert_eq!(f.machine.session_count(), 0);
    assert_eq!(f.count(|m| &m.sessions_refused_total), 0, "our failure, not a refusal");
    assert_eq!(f.count(|m| &m.sessions_total), 0);
}

#[test]
fn what_follows_the_connect_is_read_once_the_session_is_open() {
    let mut f = Fixture::default();
    let mut bytes = connect("CONNECT", "/holoquic");
    bytes.extend(close_capsule(7));
    assert_eq!(f.data(SESSION, &bytes, false), [Action::Accept { stream: SESSION }]);
    assert_eq!(f.accept_sent(SESSION, true), [Action::SessionClosed { stream: SESSION, reply: true }]);
    assert_eq!(f.machine.session_count(), 0);
    assert_eq!((f.count(|m| &m.sessions_total), f.count(|m| &m.sessions_active)), (1, 0));
}

#[test]
fn connects_we_do_not_serve_are_refused() {
    let mut f = Fixture { allowed_origins: vec!["https://example.org".into()], ..Fixture::default() };
    assert_eq!(f.data(4, &connect("CONNECT", "/elsewhere"), false), refused(4, "404", "no WebTransport endpoint at this path\n"));
    assert_eq!(f.data(8, &connect("CONNECT", "/holoquic"), false), refused(8, "403", "origin not allowed\n"));
    assert_eq!(f.count(|m| &m.sessions_refused_total), 2);
    assert_eq!(f.data(8, b"more", true), [], "a refused stream's bytes are dropped");
}

#[test]
fn other_methods_go_to_the_http_side_with_the_fields_it_needs() {
    let mut f = Fixture::default();
    let get = headers_frame(&[
        Header::new(b":method", b"GET"),
        Header::new(b":scheme", b"https"),
        Header::new(b":authority", b"127.0.0.1:4433"),
        Header::new(b":path", b"/content/a.v3c?x=1"),
        Header::new(b"range", b"bytes=0-9"),
        Header::new(b"priority", b"u=1, i"),
        Header::new(b"if-none-match", b"\"abc\""),
    ]);
    let head = RequestHead {
        method: "GET".into(),
        path: "/content/a.v3c?x=1".into(),
        authority: "127.0.0.1:4433".into(),
        range: "bytes=0-9".into(),
        priority: "u=1, i".into(),
        if_none_match: "\"abc\"".into(),
        ..RequestHead::default()
    };
    assert_eq!(f.data(0, &get, false), [Action::Serve { stream: 0, head }]);
    let post = f.data(4, &connect("POST", "/holoquic"), false);
    assert!(matches!(&post[..], [Action::Serve { stream: 4, head }] if head.method == "POST"), "{post:?}");
    assert_eq!(f.data(4, b"a body nobody reads", true), [], "what follows the HEADERS is dropped");
    assert_eq!(f.count(|m| &m.sessions_refused_total), 0, "no WebTransport session was asked for");
}

#[test]
fn a_second_session_is_refused_while_one_is_open() {
    let mut f = Fixture::with_session();
    assert_eq!(f.data(4, &connect("CONNECT", "/holoquic"), false), refused(4, "429", "one WebTransport session per connection at a time\n"));
    assert_eq!(f.machine.session_count(), 1);
}

#[test]
fn malformed_and_oversized_headers_are_refused() {
    let mut f = Fixture::default();
    let mut garbage = Vec::new();
    Frame::encode(frame_type::HEADERS, &[0xff; 8], &mut garbage);
    assert_eq!(f.data(0, &garbage, false), refused(0, "400", "undecodable field section"));

    let mut data_first = Vec::new();
    Frame::encode(frame_type::DATA, b"hello", &mut data_first);
    assert_eq!(f.data(4, &data_first, false), refused(4, "400", "expected HEADERS"));

    // A HEADERS frame that would be 20 KiB: collected up to MAX_HEADERS, refused beyond.
    let mut big = Vec::new();
    put(&mut big, frame_type::HEADERS);
    put(&mut big, 20_000);
    big.resize(MAX_HEADERS, 0);
    assert_eq!(f.data(8, &big, false), [], "incomplete and within the limit: wait");
    assert_eq!(f.data(8, &[0], false), refused(8, "400", "malformed request"));
    assert_eq!(f.count(|m| &m.sessions_refused_total), 3);
}

#[test]
fn unknown_frames_before_the_headers_are_skipped() {
    let mut f = Fixture::default();
    let mut bytes = Vec::new();
    Frame::encode(0x21, b"grease", &mut bytes);
    bytes.extend(connect("CONNECT", "/holoquic"));
    let (first, second) = bytes.split_at(3);
    assert_eq!(f.data(SESSION, first, false), []);
    assert_eq!(f.data(SESSION, second, false), [Action::Accept { stream: SESSION }]);
}

#[test]
fn a_request_stream_of_an_unknown_session_is_rejected() {
    let mut f = Fixture::with_session();
    let code = error_code::WEBTRANSPORT_BUFFERED_STREAM_REJECTED;
    assert_eq!(f.data(4, &request_stream(8, b"req"), false), [Action::RejectStream { stream: 4, code }]);
    assert_eq!(f.count(|m| &m.protocol_errors_total), 1);
    assert_eq!(f.data(4, b"more", false), [], "then its bytes are dropped");
}

#[test]
fn a_request_stream_of_the_session_opens_a_request_and_carries_its_bytes() {
    let mut f = Fixture::with_session();
    // The stream header may arrive a byte at a time.
    let bytes = request_stream(SESSION, b"req");
    assert_eq!(f.data(4, &bytes[..1], false), []);
    let opened = f.data(4, &bytes[1..], false);
    let data = |data: &[u8], fin| Action::RequestData { stream: 4, data: data.to_vec(), fin };
    assert_eq!(opened, [Action::OpenRequest { stream: 4, session: SESSION }, data(b"req", false)]);
    assert_eq!(f.data(4, b"uest", true), [data(b"uest", true)]);
    f.machine.requests_finished([4]);
    assert_eq!(f.data(4, b"late", false), [], "a finished request's stream is done");
}

#[test]
fn the_close_capsule_ends_the_session_and_its_requests() {
    let mut f = Fixture::with_session();
    f.data(4, &request_stream(SESSION, b""), false);
    f.data(8, &request_stream(SESSION, b""), false);
    let capsule = close_capsule(7);
    let (first, second) = capsule.split_at(capsule.len() - 1);
    assert_eq!(f.data(SESSION, first, false), [], "an incomplete capsule waits");
    assert_eq!(
        f.data(SESSION, second, false),
        [Action::RequestSessionGone { stream: 4 }, Action::RequestSessionGone { stream: 8 }, Action::SessionClosed { stream: SESSION, reply: true },]
    );
    assert_eq!(f.machine.session_count(), 0);
    assert_eq!(f.count(|m| &m.sessions_active), 0);
    assert_eq!(f.data(4, b"late", false), [], "the requests are over");
    assert_eq!(
        f.data(12, &request_stream(SESSION, b""), false)[0],
        Action::RejectStream { stream: 12, code: error_code::WEBTRANSPORT_BUFFERED_STREAM_REJECTED }
    );
}

#[test]
fn other_capsules_are_passed_over_and_fin_ends_the_session() {
    let mut f = Fixture::with_session();
    let mut drain = Vec::new();
    Frame::encode(capsule_type::DRAIN_WEBTRANSPORT_SESSION, &[], &mut drain);
    let mut frame = Vec::new();
    Frame::encode(frame_type::DATA, &drain, &mut frame);
    assert_eq!(f.data(SESSION, &frame, false), []);
    assert_eq!(f.machine.session_count(), 1);
    assert_eq!(f.data(SESSION, &[], true), [Action::SessionClosed { stream: SESSION, reply: true }]);
}

#[test]
fn a_malformed_capsule_ends_the_session_as_a_protocol_error() {
    let mut f = Fixture::with_session();
    let mut oversized = Vec::new();
    put(&mut oversized, frame_type::DATA);
    put(&mut oversized, 1 << 20);
    assert_eq!(f.data(SESSION, &oversized, false), [Action::SessionClosed { stream: SESSION, reply: true }]);
    assert_eq!(f.count(|m| &m.protocol_errors_total), 1);
}

#[test]
fn stream_resets_end_a_request_a_session_or_the_connection() {
    let mut f = Fixture::with_session();
    f.data(4, &request_stream(SESSION, b""), false);
    f.data(8, &request_stream(SESSION, b""), false);
    assert_eq!(f.reset(4), [Action::RequestReset { stream: 4 }]);
    assert_eq!(f.data(4, b"late", false), []);
    assert_eq!(f.reset(SESSION), [Action::RequestSessionGone { stream: 8 }, Action::SessionClosed { stream: SESSION, reply: false }]);
    assert_eq!(f.machine.session_count(), 0);
    assert!(!f.machine.must_close());
    assert_eq!(f.reset(CONTROL), []);
    assert_eq!(f.machine.take_close(), Some((error_code::H3_CLOSED_CRITICAL_STREAM, "control stream closed")));
}

#[test]
fn the_control_stream_must_start_with_one_settings_and_never_finish() {
    let close = |bytes: &[u8], fin: bool| {
        let mut f = Fixture::default();
        f.data(CONTROL, bytes, fin);
        f.machine.take_close().map(|(code, _)| code)
    };
    let mut goaway_first = Vec::new();
    put(&mut goaway_first, stream_type::CONTROL);
    Frame::encode(frame_type::GOAWAY, &[0], &mut goaway_first);
    assert_eq!(close(&goaway_first, false), Some(error_code::H3_MISSING_SETTINGS));
    let mut twice = control_stream();
    Settings(vec![]).encode_frame(&mut twice);
    assert_eq!(close(&twice, false), Some(error_code::H3_FRAME_UNEXPECTED));
    let mut repeated = Vec::new();
    put(&mut repeated, stream_type::CONTROL);
    Settings(vec![(0x33, 1), (0x33, 1)]).encode_frame(&mut repeated);
    assert_eq!(close(&repeated, false), Some(error_code::H3_SETTINGS_ERROR));
    assert_eq!(close(&control_stream(), true), Some(error_code::H3_CLOSED_CRITICAL_STREAM));
    assert_eq!(close(&control_stream(), false), None);

    let mut f = Fixture::default();
    f.data(CONTROL, &control_stream(), false);
    f.data(6, &control_stream(), false);
    assert_eq!(f.machine.take_close(), Some((error_code::H3_STREAM_CREATION_ERROR, "second control stream")));
}

#[test]
fn other_unidirectional_streams_are_refused_or_read_and_forgotten() {
    let mut f = Fixture::default();
    f.data(CONTROL, &control_stream(), false);
    let mut webtransport_uni = Vec::new();
    put(&mut webtransport_uni, stream_type::WEBTRANSPORT_UNI);
    assert_eq!(f.data(6, &webtransport_uni, false), [Action::StopSending { stream: 6, code: error_code::H3_STREAM_CREATION_ERROR }]);
    assert_eq!(f.machine.uni_stream_count(), 1, "only the control stream is kept");
    let mut qpack_encoder = Vec::new();
    put(&mut qpack_encoder, stream_type::QPACK_ENCODER);
    assert_eq!(f.data(10, &qpack_encoder, false), []);
    assert_eq!(f.machine.uni_stream_count(), 2);
    assert_eq!(f.data(10, b"ignored", true), []);
    assert_eq!(f.machine.uni_stream_count(), 1, "forgotten at FIN");
    assert!(!f.machine.must_close());
}

#[test]
fn client_datagrams_are_counted_and_dropped() {
    let mut f = Fixture::with_session();
    let (machine, env) = f.parts();
    machine.on_datagram(&env, &[0, 1, 2]);
    machine.on_datagram(&env, &[]);
    assert_eq!(f.count(|m| &m.client_datagrams_dropped_total), 2);
}

#[test]
fn sessions_end_with_the_connection() {
    let mut f = Fixture::with_session();
    let (machine, env) = f.parts();
    machine.on_connection_closed(&env);
    assert_eq!(f.machine.session_count(), 0);
    assert_eq!(f.count(|m| &m.sessions_active), 0);
}
