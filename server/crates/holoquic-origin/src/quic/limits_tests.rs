//! The WebTransport layer against a misbehaving client, in process: quiche's own test pipe
//! connects a raw quiche client to a server connection configured exactly as the origin's
//! (`quiche_config`), and `webtransport::Connection` runs on the server side. The client speaks
//! just enough HTTP/3 to open a session, then floods datagrams, opens too many requests or sends an
//! oversized capsule; the origin must answer with the documented errors and keep bounded state.

use std::sync::Arc;
use std::time::Instant;

use holoquic_proto::h3::{capsule_type, frame_type, stream_type, CloseSession, Frame, WEBTRANSPORT_BIDI_SIGNAL};
use holoquic_proto::{Delivery, FecMode, Message, Request};
use quiche::h3::qpack;
use quiche::h3::NameValue;
use quiche::test_utils::Pipe;

use super::test_support::{connect, control_stream};
use super::{quiche_config, webtransport, QuicContext};
use crate::config::Config;
use crate::content::ContentStore;
use crate::metrics::Metrics;
use crate::tls::CertStore;

pub(super) struct Harness {
    dir: std::path::PathBuf,
    pub(super) ctx: QuicContext,
    pub(super) pipe: Pipe,
    pub(super) wt: webtransport::Connection,
}

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

impl Harness {
    /// A connected client with an open WebTransport session (stream 0).
    pub(super) fn with_session() -> Self {
        let dir = std::env::temp_dir().join(format!("holoquic-limits-{}-{}", std::process::id(), rand::random::<u64>()));
        std::fs::create_dir_all(dir.join("content/d")).unwrap();
        std::fs::write(dir.join("content/d/obj"), vec![5u8; 4000]).unwrap();
        std::fs::write(dir.join("content/d/big"), vec![7u8; 300_000]).unwrap();
        std::fs::write(dir.join("content/d/mid"), vec![6u8; 10_000]).unwrap();
        let config = Config::parse_from(["x", "--content", dir.join("content").to_str().unwrap()]).unwrap();
        let ctx = QuicContext::new(
            Arc::new(config),
            Arc::new(CertStore::generate(&dir.join("tls"), &[]).unwrap()),
            Arc::new(ContentStore::open(&dir.join("content"), 1 << 20).unwrap()),
            Arc::new(Metrics::default()),
            None,
        )
        .unwrap();
        let mut server = quiche_config(&ctx).unwrap();
        let mut client = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
        client.verify_peer(false);
        client.set_application_protos(&[b"h3"]).unwrap();
        client.set_initial_max_data(1 << 24);
        client.set_initial_max_stream_data_bidi_local(1 << 20);
        client.set_initial_max_stream_data_bidi_remote(1 << 20);
        client.set_initial_max_stream_data_uni(1 << 20);
        client.set_initial_max_streams_bidi(100);
        client.set_initial_max_streams_uni(100);
        client.enable_dgram(true, 10_000, 10_000);
        let mut pipe = Pipe::with_client_and_server_config(&mut client, &mut server).unwrap();
        pipe.handshake().unwrap();
        let mut h = Self { dir, ctx, pipe, wt: webtransport::Connection::new() };

        h.pipe.client.stream_send(2, &control_stream(), false).unwrap();
        let mut connect = Vec::new();
        h.connect_frame(&mut connect);
        h.pipe.client.stream_send(0, &connect, false).unwrap();
        h.turn();
        assert_eq!(h.wt.session_count(), 1, "session should be open");
        h
    }

    /// The HEADERS frame of an extended CONNECT for the origin's WebTransport endpoint.
    fn connect_frame(&self, out: &mut Vec<u8>) {
        out.extend(connect("CONNECT", "/holoquic"));
    }

    /// Moves packets both ways until neither side has any to send, the server's through
    /// `packet_sent` as the origin's loop sends them (quiche's `Pipe::advance` would bypass it).
    pub(super) fn advance(&mut self) {
        loop {
            let mut moved = false;
            if let Ok(flight) = quiche::test_utils::emit_flight(&mut self.pipe.client) {
                quiche::test_utils::process_flight(&mut self.pipe.server, flight).unwrap();
                moved = true;
            }
            let flight = self.server_flight();
            if !flight.is_empty() {
                quiche::test_utils::process_flight(&mut self.pipe.client, flight).unwrap();
                moved = true;
            }
            if !moved {
                return;
            }
        }
    }

    /// What the server sends now (up to its congestion window), each packet told to the
    /// WebTransport layer.
    pub(super) fn server_flight(&mut self) -> Vec<(Vec<u8>, quiche::SendInfo)> {
        let mut flight = Vec::new();
        let mut buf = [0u8; 65_535];
        loop {
            let queued = self.pipe.server.dgram_send_queue_len();
            let Ok((n, info)) = self.pipe.server.send(&mut buf) else { return flight };
            self.wt.packet_sent(n, self.pipe.server.dgram_send_queue_len() < queued, Instant::now());
            flight.push((buf[..n].to_vec(), info));
        }
    }

    /// Moves packets both ways and lets the WebTransport layer run, a few times.
    pub(super) fn turn(&mut self) {
        for _ in 0..4 {
            self.advance();
            self.settle();
            self.wt.process(&mut self.pipe.server, &self.ctx, Instant::now());
            if let Some((code, reason)) = self.wt.take_close() {
                let _ = self.pipe.server.close(true, code, reason.as_bytes());
            }
        }
        self.advance();
    }

    /// Lets the loader's workers finish what the requests asked of them (objects are read and
    /// encoders built off the loop), as the loop's rounds would while they work.
    fn settle(&mut self) {
        let deadline = Instant::now() + std::time::Duration::from_secs(10);
        self.wt.process(&mut self.pipe.server, &self.ctx, Instant::now());
        while self.wt.waits_for_loader() {
            assert!(Instant::now() < deadline, "the loader never answered");
            std::thread::sleep(std::time::Duration::from_micros(200));
            self.wt.process(&mut self.pipe.server, &self.ctx, Instant::now());
        }
    }

    /// One round: the WebTransport layer runs once, then the packets it made move (and the ACKs
    /// back) — fine enough to see which data went first.
    fn step(&mut self) {
        self.settle();
        self.wt.process(&mut self.pipe.server, &self.ctx, Instant::now());
        self.advance();
    }

    /// Everything the client can read from `stream` now.
    pub(super) fn read(&mut self, stream: u64) -> (Vec<u8>, bool) {
        let mut all = Vec::new();
        let mut buf = [0u8; 65_536];
        let mut fin = false;
        while let Ok((n, f)) = self.pipe.client.stream_recv(stream, &mut buf) {
            all.extend_from_slice(&buf[..n]);
            fin |= f;
        }
        (all, fin)
    }

    fn open_request(&mut self, stream: u64, request_id: u64) {
        self.open(stream, request_id, Delivery::Datagram, 3, "/content/d/obj");
    }

    fn open(&mut self, stream: u64, request_id: u64, delivery: Delivery, urgency: u8, path: &str) {
        let request = Request {
            request_id,
            delivery,
            urgency,
            deadline_ms: 0,
            fec_mode: FecMode::None,
            loss_ppm: 0,
            burst_milli: 0,
            overhead_permille: 0,
            path: path.into(),
        };
        self.pipe.client.stream_send(stream, &request_stream_bytes(request), false).unwrap();
    }
}

/// What a client writes on a new bidirectional stream for `request`: the WebTransport stream
/// signal, session 0, then the REQUEST message.
pub(super) fn request_stream_bytes(request: Request) -> Vec<u8> {
    let mut bytes = Vec::new();
    holoquic_proto::varint::put(&mut bytes, WEBTRANSPORT_BIDI_SIGNAL);
    holoquic_proto::varint::put(&mut bytes, 0);
    Message::Request(request).encode(&mut bytes);
    bytes
}

pub(super) fn status(bytes: &[u8]) -> u16 {
    match Message::decode(bytes) {
        Ok((Message::Response(r), _)) => r.status,
        other => panic!("expected a RESPONSE, got {other:?}"),
    }
}

/// Datagrams of a less urgent request wait while a more urgent reliable response is still being
/// handed to QUIC or sent by it (quiche alone would alternate packets between the two from the
/// start), then flow.
#[test]
fn a_more_urgent_reliable_response_goes_before_less_urgent_datagrams() {
    let mut h = Harness::with_session();
    h.open(4, 1, Delivery::Reliable, 0, "/content/d/big");
    h.open(8, 2, Delivery::Datagram, 5, "/content/d/obj");
    let mut body = 0;
    let mut body_at_first_datagram = None;
    let mut datagrams = 0;
    let mut buf = [0u8; 2048];
    for _ in 0..200 {
        h.turn();
        body += h.read(4).0.len();
        while h.pipe.client.dgram_recv(&mut buf).is_ok() {
            datagrams += 1;
            body_at_first_datagram.get_or_insert(body);
        }
        if datagrams >= 4 && body > 300_000 {
            break;
        }
    }
    assert!(body > 300_000, "the reliable object arrived ({body} bytes)");
    assert!(datagrams >= 4, "the datagram object followed ({datagrams} datagrams)");
    let first = body_at_first_datagram.unwrap();
    assert!(first > 290_000, "datagrams went early: only {first} of 300000 reliable bytes were in");
}

/// The same for a reliable object smaller than the congestion window, the player's usual case:
/// quiche takes it whole at once, and the datagrams still wait until it has left (they took
/// every other packet from it while the origin only looked at what it had not handed over).
#[test]
fn a_more_urgent_reliable_object_within_one_window_goes_before_less_urgent_datagrams() {
    use quiche::test_utils::process_flight;
    let mut h = Harness::with_session();
    let cwnd = h.pipe.server.path_stats().find(|p| p.active).unwrap().cwnd;
    assert!(cwnd > 10_000, "the object fits the window ({cwnd} bytes)");
    h.open(8, 2, Delivery::Reliable, 0, "/content/d/mid");
    h.open(12, 3, Delivery::Datagram, 5, "/content/d/mid");
    let mut body = 0;
    let mut body_at_first_datagram = None;
    let mut buf = [0u8; 2048];
    for _ in 0..400 {
        if let Ok(flight) = quiche::test_utils::emit_flight(&mut h.pipe.client) {
            process_flight(&mut h.pipe.server, flight).unwrap();
        }
        h.settle();
        h.wt.process(&mut h.pipe.server, &h.ctx, Instant::now());
        // The server's packets one at a time, so the order shows.
        for packet in h.server_flight() {
            process_flight(&mut h.pipe.client, vec![packet]).unwrap();
            body += h.read(8).0.len();
            while h.pipe.client.dgram_recv(&mut buf).is_ok() {
                body_at_first_datagram.get_or_insert(body);
            }
        }
        if body >= 10_000 && body_at_first_datagram.is_some() {
            break;
        }
    }
    assert!(body >= 10_000, "the reliable object arrived ({body} bytes)");
    let first = body_at_first_datagram.expect("the datagram object followed");
    assert!(first >= 9_000, "datagrams shared the link with it: {first} of 10000 reliable bytes were in at the first");
}

/// The messages of a datagram request (RESPONSE, SENT, END) do not wait behind a more urgent
/// reliable object's bytes, although its symbols do: without the RESPONSE the client cannot use
/// symbols that arrive, and SENT starts its repair timer. (At the request's urgency the RESPONSE
/// came after the whole reliable object.)
#[test]
fn a_datagram_requests_messages_go_ahead_of_more_urgent_object_bytes() {
    use quiche::test_utils::{emit_flight, process_flight};
    let mut h = Harness::with_session();
    h.open(4, 1, Delivery::Reliable, 0, "/content/d/big");
    h.open(8, 2, Delivery::Datagram, 5, "/content/d/obj");
    // One flight (what the congestion window lets quiche send) at a time, so the order shows.
    let mut body = 0;
    let mut body_at_response = None;
    let mut buf = [0u8; 2048];
    for _ in 0..400 {
        if let Ok(flight) = emit_flight(&mut h.pipe.client) {
            process_flight(&mut h.pipe.server, flight).unwrap();
        }
        h.settle();
        h.wt.process(&mut h.pipe.server, &h.ctx, Instant::now());
        let flight = h.server_flight();
        if !flight.is_empty() {
            process_flight(&mut h.pipe.client, flight).unwrap();
        }
        body += h.read(4).0.len();
        while h.pipe.client.dgram_recv(&mut buf).is_ok() {}
        let (messages, _) = h.read(8);
        if !messages.is_empty() && body_at_response.is_none() {
            assert_eq!(status(&messages), 200);
            body_at_response = Some(body);
        }
        if body >= 300_000 && body_at_response.is_some() {
            break;
        }
    }
    assert!(body >= 300_000, "the reliable object arrived ({body} bytes)");
    let at = body_at_response.expect("the datagram request's RESPONSE arrived");
    assert!(at < 100_000, "the RESPONSE waited behind {at} of 300000 reliable bytes");
}

/// And the other way round: a less urgent reliable response waits for the datagrams of a more
/// urgent request.
#[test]
fn more_urgent_datagrams_go_before_a_less_urgent_reliable_response() {
    let mut h = Harness::with_session();
    h.open(4, 1, Delivery::Reliable, 5, "/content/d/big");
    h.open(8, 2, Delivery::Datagram, 0, "/content/d/big");
    let mut body = 0;
    let mut datagrams = 0;
    let mut buf = [0u8; 2048];
    let mut body_when_datagrams_in = None;
    for _ in 0..200 {
        h.step();
        body += h.read(4).0.len();
        while h.pipe.client.dgram_recv(&mut buf).is_ok() {
            datagrams += 1;
        }
        // 300 000 bytes in symbols of ~1300 bytes: 232 datagrams; most of them.
        if datagrams >= 200 {
            body_when_datagrams_in.get_or_insert(body);
        }
        if body > 300_000 && body_when_datagrams_in.is_some() {
            break;
        }
    }
    assert!(body > 300_000, "the reliable object arrived ({body} bytes)");
    let at = body_when_datagrams_in.expect("the datagram object arrived");
    assert!(at < 100_000, "the reliable response went first: {at} bytes before the datagrams were in");
}

/// `symbols_sent_total` counts what left: datagrams handed to quiche and purged from its queue
/// when their request's deadline passed were never sent, and do not count.
#[test]
fn datagrams_purged_unsent_are_not_counted_as_sent() {
    let mut h = Harness::with_session();
    let count = |c: &std::sync::atomic::AtomicU64| c.load(std::sync::atomic::Ordering::Relaxed);
    let mut buf = [0u8; 2048];
    let mut received = 0u64;
    // A small object sent whole: every symbol handed over is sent and counted.
    h.open_request(4, 1);
    h.turn();
    while h.pipe.client.dgram_recv(&mut buf).is_ok() {
        received += 1;
    }
    assert!(received > 0);
    assert_eq!(count(&h.ctx.metrics.symbols_sent_total), received + count(&h.ctx.metrics.symbols_on_stream_total));

    // A large one with a 100-ms deadline: the origin queues 64 KiB of its symbols in quiche, then
    // (before the packets go out) finds the deadline passed and purges them.
    let request = Request {
        request_id: 2,
        delivery: Delivery::Datagram,
        urgency: 3,
        deadline_ms: 100,
        fec_mode: FecMode::None,
        loss_ppm: 0,
        burst_milli: 0,
        overhead_permille: 0,
        path: "/content/d/big".into(),
    };
    h.pipe.client.stream_send(8, &request_stream_bytes(request), false).unwrap();
    h.advance();
    let handed_before = count(&h.ctx.metrics.bytes_datagram_total);
    let source_before = count(&h.ctx.metrics.source_symbols_total);
    h.settle();
    assert!(h.pipe.server.dgram_send_queue_len() > 0, "symbols were queued in quiche");
    h.wt.process(&mut h.pipe.server, &h.ctx, Instant::now() + std::time::Duration::from_secs(1));
    assert_eq!(h.pipe.server.dgram_send_queue_len(), 0, "the deadline purged them");
    assert!(count(&h.ctx.metrics.bytes_datagram_total) > handed_before);
    h.turn();
    let mut received_late = 0u64;
    while h.pipe.client.dgram_recv(&mut buf).is_ok() {
        received_late += 1;
    }
    assert_eq!(count(&h.ctx.metrics.symbols_sent_total), received + received_late + count(&h.ctx.metrics.symbols_on_stream_total));
    // The client is told the same: END counts the purged datagrams as purged, not sent.
    let (bytes, fin) = h.read(8);
    assert!(fin);
    let mut rest = &bytes[..];
    let mut end = None;
    while !rest.is_empty() {
        let (message, used) = Message::decode(rest).unwrap();
        rest = &rest[used..];
        if let Message::End { symbols_sent, purged, .. } = message {
            end = Some((symbols_sent, purged));
        }
    }
    let (symbols_sent, purged) = end.expect("an END");
    assert_eq!(symbols_sent, received_late);
    // No FEC: the object's source symbols were each either sent or purged.
    assert_eq!(symbols_sent + purged, count(&h.ctx.metrics.source_symbols_total) - source_before);
}

#[test]
fn a_datagram_flood_is_counted_and_dropped() {
    let mut h = Harness::with_session();
    let mut sent = 0u64;
    for _ in 0..20 {
        while h.pipe.client.dgram_send(&[0x00, 0x01, 0x02, 0x03]).is_ok() {
            sent += 1;
            if h.pipe.client.dgram_send_queue_len() >= 500 {
                break;
            }
        }
        h.turn();
    }
    let dropped = h.ctx.metrics.client_datagrams_dropped_total.load(std::sync::atomic::Ordering::Relaxed);
    assert!(sent >= 10_000 && dropped > 0, "sent {sent}, dropped {dropped}");
    assert!(!h.pipe.server.is_closed() && h.wt.session_count() == 1, "a flood neither closes the session nor is buffered");
    assert_eq!(h.pipe.server.dgram_recv_queue_len(), 0, "every datagram was read and dropped");
}

#[test]
fn requests_beyond_the_session_limit_get_429() {
    let mut h = Harness::with_session();
    let limit = h.ctx.config.limits.max_requests_per_session as u64;
    // Datagram requests stay open until the client ends them, so they count against the limit.
    let streams: Vec<u64> = (0..limit + 3).map(|i| 4 + 4 * i).collect();
    for (i, &stream) in streams.iter().enumerate() {
        h.open_request(stream, i as u64 + 1);
        if i % 50 == 49 {
            h.turn();
        }
    }
    h.turn();
    let statuses: Vec<u16> = streams.iter().map(|&s| status(&h.read(s).0)).collect();
    assert_eq!(statuses.iter().filter(|&&s| s == 200).count() as u64, limit);
    assert_eq!(&statuses[limit as usize..], &[429, 429, 429]);
}

/// A request stream that opens (the WebTransport signal and the session id) but never sends its
/// REQUEST is reset once `REQUEST_TIMEOUT` has passed; one that asked in time is served.
#[test]
fn a_request_stream_without_a_request_is_reset_after_the_timeout() {
    let mut h = Harness::with_session();
    let mut opening = Vec::new();
    holoquic_proto::varint::put(&mut opening, WEBTRANSPORT_BIDI_SIGNAL);
    holoquic_proto::varint::put(&mut opening, 0);
    h.pipe.client.stream_send(4, &opening, false).unwrap();
    h.open(8, 1, Delivery::Reliable, 3, "/content/d/obj");
    h.turn();
    let later = Instant::now() + super::delivery::REQUEST_TIMEOUT;
    h.wt.process(&mut h.pipe.server, &h.ctx, later);
    h.advance();
    let mut buf = [0u8; 64];
    let reset = h.pipe.client.stream_recv(4, &mut buf);
    let expected = holoquic_proto::h3::webtransport_error_to_h3(super::delivery::WT_REQUEST_TIMEOUT);
    assert_eq!(reset, Err(quiche::Error::StreamReset(expected)), "the silent stream is reset");
    let (bytes, fin) = h.read(8);
    assert!(fin && status(&bytes) == 200, "the request that came in time was served");
}

/// The capsules of a session stream, each in its own DATA frame as browsers write them.
fn data_framed(capsules: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    Frame::encode(frame_type::DATA, capsules, &mut out);
    out
}

#[test]
fn an_oversized_capsule_ends_the_session() {
    let mut h = Harness::with_session();
    let (response, _) = h.read(0);
    assert!(!response.is_empty(), "CONNECT answered");
    // A capsule announcing 1 MB, arriving in 16-kB DATA frames: refused once its header is read,
    // never buffered.
    let mut capsule = Vec::new();
    holoquic_proto::varint::put(&mut capsule, 0x1234);
    holoquic_proto::varint::put(&mut capsule, 1 << 20);
    capsule.extend(std::iter::repeat_n(0u8, 100_000));
    for chunk in capsule.chunks(16_000) {
        h.pipe.client.stream_send(0, &data_framed(chunk), false).unwrap();
        h.turn();
    }
    assert_eq!(h.wt.session_count(), 0, "session ended");
    let (_, fin) = h.read(0);
    assert!(fin, "the session stream is finished by the origin");
    assert!(!h.pipe.server.is_closed(), "only the session ends, not the connection");
}

#[test]
fn an_oversized_frame_on_the_session_stream_ends_the_session() {
    let mut h = Harness::with_session();
    let mut frame = Vec::new();
    holoquic_proto::varint::put(&mut frame, frame_type::DATA);
    holoquic_proto::varint::put(&mut frame, 1 << 20);
    frame.extend(std::iter::repeat_n(0u8, 100_000));
    h.pipe.client.stream_send(0, &frame, false).unwrap();
    for _ in 0..10 {
        h.turn();
    }
    assert_eq!(h.wt.session_count(), 0, "session ended");
    assert!(!h.pipe.server.is_closed(), "only the session ends, not the connection");
}

#[test]
fn a_close_capsule_in_a_data_frame_ends_the_session_and_is_answered_in_one() {
    let mut h = Harness::with_session();
    let _ = h.read(0); // the 200
                       // Unknown frame types and capsules around the close are skipped.
    let mut bytes = Vec::new();
    Frame::encode(0x21, b"reserved frame type", &mut bytes);
    let mut capsules = Vec::new();
    Frame::encode(0x29, b"unknown capsule", &mut capsules);
    CloseSession { code: 0x5354, reason: "stalled".into() }.encode_capsule(&mut capsules);
    bytes.extend(data_framed(&capsules));
    h.pipe.client.stream_send(0, &bytes, false).unwrap();
    h.turn();
    assert_eq!(h.wt.session_count(), 0, "session ended");
    let (reply, fin) = h.read(0);
    assert!(fin, "the origin finished the session stream");
    let (frame, _) = Frame::decode(&reply).expect("one frame");
    assert_eq!(frame.kind, frame_type::DATA, "the close capsule comes in a DATA frame");
    let (capsule, _) = Frame::decode(frame.payload).expect("one capsule");
    assert_eq!(capsule.kind, capsule_type::CLOSE_WEBTRANSPORT_SESSION);
}

#[test]
fn reserved_frames_before_the_connect_headers_are_skipped() {
    let mut h = Harness::with_session();
    // A second connection's worth of CONNECT on a fresh stream would be refused (one session per
    // connection), so end the first session, then open one behind GREASE frames.
    let mut close = Vec::new();
    CloseSession { code: 0, reason: String::new() }.encode_capsule(&mut close);
    h.pipe.client.stream_send(0, &data_framed(&close), true).unwrap();
    h.turn();
    assert_eq!(h.wt.session_count(), 0);
    let mut bytes = Vec::new();
    Frame::encode(0x21, b"grease", &mut bytes);
    Frame::encode(0x1f * 7 + 0x21, b"", &mut bytes);
    h.connect_frame(&mut bytes);
    h.pipe.client.stream_send(4, &bytes, false).unwrap();
    h.turn();
    assert_eq!(h.wt.session_count(), 1, "the session opened behind the reserved frames");
}

#[test]
fn a_second_session_on_the_connection_gets_429() {
    let mut h = Harness::with_session();
    let mut connect = Vec::new();
    h.connect_frame(&mut connect);
    h.pipe.client.stream_send(4, &connect, false).unwrap();
    h.turn();
    assert_eq!(h.wt.session_count(), 1, "still one session");
    let (reply, _) = h.read(4);
    let (frame, _) = Frame::decode(&reply).expect("a HEADERS answer");
    let headers = qpack::Decoder::new().decode(frame.payload, 4096).unwrap();
    assert!(headers.iter().any(|x| x.name() == b":status" && x.value() == b"429"), "{headers:?}");
}

#[test]
fn finished_and_refused_uni_streams_leave_no_state() {
    let mut h = Harness::with_session();
    let before = h.wt.uni_stream_count();
    // Uni streams of an unknown type (refused) and QPACK streams that finish at once, many times
    // over: quiche renews the peer's stream credit as they go.
    for round in 0..6u64 {
        for i in 0..40u64 {
            let stream = 6 + 4 * (round * 40 + i);
            let mut bytes = Vec::new();
            holoquic_proto::varint::put(&mut bytes, if i % 2 == 0 { 0x21 } else { stream_type::QPACK_DECODER });
            h.pipe.client.stream_send(stream, &bytes, true).unwrap();
        }
        h.turn();
    }
    assert!(h.wt.uni_stream_count() <= before, "{} streams tracked, {before} before", h.wt.uni_stream_count());
    assert!(!h.pipe.server.is_closed());
}

#[test]
fn finishing_the_control_stream_closes_the_connection() {
    let mut h = Harness::with_session();
    h.pipe.client.stream_send(2, &[], true).unwrap();
    h.turn();
    let error = h.pipe.client.peer_error().expect("the origin closed the connection");
    assert_eq!(error.error_code, holoquic_proto::h3::error_code::H3_CLOSED_CRITICAL_STREAM);
}

#[test]
fn an_oversized_control_frame_closes_the_connection() {
    let mut h = Harness::with_session();
    let mut frame = Vec::new();
    holoquic_proto::varint::put(&mut frame, 0x21); // reserved frame type
    holoquic_proto::varint::put(&mut frame, 1 << 20);
    frame.extend(std::iter::repeat_n(0u8, 100_000));
    h.pipe.client.stream_send(2, &frame, false).unwrap();
    for _ in 0..10 {
        h.turn();
    }
    let error = h.pipe.client.peer_error().expect("the origin closed the connection");
    assert_eq!(error.error_code, holoquic_proto::h3::error_code::H3_FRAME_ERROR);
}

/// What a client may do to the connection, at random: bytes (random, or well-formed pieces of
/// our protocol) on its bidi and uni streams with or without FIN, resets, datagrams.
#[derive(Debug, Clone)]
enum PeerOp {
    Bidi { stream: u8, bytes: Vec<u8>, fin: bool },
    Uni { stream: u8, bytes: Vec<u8>, fin: bool },
    Reset { stream: u8 },
    Datagram(Vec<u8>),
}

fn peer_op() -> impl proptest::strategy::Strategy<Value = PeerOp> {
    use proptest::prelude::*;
    let request = request_stream_bytes(Request {
        request_id: 1,
        delivery: Delivery::Datagram,
        urgency: 3,
        deadline_ms: 0,
        fec_mode: FecMode::Planned,
        loss_ppm: 50_000,
        burst_milli: 2000,
        overhead_permille: 0,
        path: "/content/d/obj".into(),
    });
    let mut capsule = Vec::new();
    CloseSession { code: 7, reason: "bye".into() }.encode_capsule(&mut capsule);
    let close = data_framed(&capsule);
    let mut repair = Vec::new();
    Message::Repair { symbols: 65_535 }.encode(&mut repair);
    // Pieces worth recombining, and random bytes.
    let bytes = prop_oneof![
        2 => proptest::collection::vec(any::<u8>(), 0..64),
        1 => Just(request),
        1 => Just(close),
        1 => Just(repair),
        1 => Just(vec![0x41, 0x00]),
        1 => Just(vec![0x54, 0x00]),
        1 => Just(vec![0x00]),
    ];
    prop_oneof![
        4 => (0u8..6, bytes.clone(), any::<bool>()).prop_map(|(stream, bytes, fin)| PeerOp::Bidi { stream, bytes, fin }),
        2 => (0u8..6, bytes, any::<bool>()).prop_map(|(stream, bytes, fin)| PeerOp::Uni { stream, bytes, fin }),
        1 => (0u8..6).prop_map(|stream| PeerOp::Reset { stream }),
        1 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(PeerOp::Datagram),
    ]
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(96))]
    /// Whatever the client does on top of an open session, the origin's WebTransport layer does
    /// not panic and its state stays bounded: one session at most, no more uni streams than the
    /// client may have open, and requests only within the session limit.
    #[test]
    fn any_peer_behaviour_leaves_bounded_state(ops in proptest::collection::vec(peer_op(), 1..24)) {
        let mut h = Harness::with_session();
        for op in ops {
            match op {
                // Stream 0 is the session; the others are new client bidi streams.
                PeerOp::Bidi { stream, bytes, fin } => { let _ = h.pipe.client.stream_send(4 * u64::from(stream), &bytes, fin); }
                // Stream 2 is the client's control stream; 6, 10, … are new.
                PeerOp::Uni { stream, bytes, fin } => { let _ = h.pipe.client.stream_send(2 + 4 * u64::from(stream), &bytes, fin); }
                PeerOp::Reset { stream } => { let _ = h.pipe.client.stream_shutdown(4 * u64::from(stream), quiche::Shutdown::Write, 0x10c); }
                PeerOp::Datagram(d) => { let _ = h.pipe.client.dgram_send(&d); }
            }
            h.turn();
            proptest::prop_assert!(h.wt.session_count() <= 1);
            proptest::prop_assert!(h.wt.uni_stream_count() <= 100, "{} uni streams tracked", h.wt.uni_stream_count());
        }
    }
}

/// A served object lands in the histograms, and their Prometheus text parses: a reliable
/// 4000-byte object over a real quiche connection, then a datagram request with a deadline that
/// the client finishes after reading what it needs.
#[test]
fn served_objects_are_counted_in_parseable_histograms() {
    let mut h = Harness::with_session();
    h.open(4, 1, Delivery::Reliable, 3, "/content/d/obj");
    for _ in 0..50 {
        h.turn();
        if h.read(4).1 {
            break;
        }
    }
    let request = Request {
        request_id: 2,
        delivery: Delivery::Datagram,
        urgency: 3,
        deadline_ms: 5_000,
        fec_mode: FecMode::None,
        loss_ppm: 0,
        burst_milli: 0,
        overhead_permille: 0,
        path: "/content/d/obj".into(),
    };
    h.pipe.client.stream_send(8, &request_stream_bytes(request), false).unwrap();
    h.turn();
    h.pipe.client.stream_send(8, &[], true).unwrap(); // decoded: the client's FIN ends the request
    for _ in 0..50 {
        h.turn();
        if h.read(8).1 {
            break;
        }
    }
    h.turn();
    let text = h.ctx.metrics.render_prometheus();
    let mut samples = std::collections::HashMap::new();
    for line in text.lines().filter(|l| !l.starts_with('#')) {
        let (name, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("sample line {line:?}"));
        samples.insert(name.to_owned(), value.parse::<f64>().unwrap_or_else(|e| panic!("{line:?}: {e}")));
    }
    let sample = |name: &str| *samples.get(name).unwrap_or_else(|| panic!("no {name} in\n{text}"));
    assert_eq!(sample("holoquic_object_latency_seconds_count{delivery=\"reliable\"}"), 1.0);
    assert_eq!(sample("holoquic_object_latency_seconds_count{delivery=\"datagram\"}"), 1.0);
    assert_eq!(sample("holoquic_object_latency_seconds_bucket{delivery=\"reliable\",le=\"+Inf\"}"), 1.0);
    assert_eq!(sample("holoquic_object_size_bytes_bucket{le=\"1024\"}"), 0.0);
    assert_eq!(sample("holoquic_object_size_bytes_bucket{le=\"4096\"}"), 2.0, "two objects of 4000 bytes");
    assert_eq!(sample("holoquic_object_size_bytes_sum"), 8000.0);
    assert_eq!(sample("holoquic_deadline_slack_seconds_count"), 1.0);
    assert!(sample("holoquic_deadline_slack_seconds_sum") > 4.0, "finished well before its 5-s deadline");
}
