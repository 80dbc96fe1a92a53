//! The graceful drain of the real origin binary: SIGTERM while a large reliable object is being
//! sent. The client is told at once (the session's drain capsule, an HTTP/3 GOAWAY), gets every
//! byte of the object, then the session's close capsule (it finishes its side of the session
//! stream), then the connection's close; a new connection meanwhile is refused; the admin
//! listener says it drains; the process exits 0 within the grace period.

mod support;

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use holoquic_proto::h3::{capsule_type, error_code, frame_type, stream_type, CloseSession, Frame, Settings, WEBTRANSPORT_BIDI_SIGNAL};
use holoquic_proto::varint::VarInt;
use holoquic_proto::{Delivery, FecMode, Message, Request};
use quiche::h3::{qpack, Header};
use support::{http_get, Origin};

const OBJECT_BYTES: usize = 8_000_000;
/// What the client's stream window lets the origin send ahead of the client's reads.
const CLIENT_STREAM_WINDOW: u64 = 1 << 20;
const GRACE_SECONDS: u64 = 10;

/// A quiche client on its own UDP socket, speaking WebTransport to the origin.
struct Client {
    socket: UdpSocket,
    local: SocketAddr,
    conn: quiche::Connection,
}

impl Client {
    /// Connects and completes the handshake; None when the origin closes the connection (or
    /// nothing completes) within `timeout`.
    fn connect(server: SocketAddr, timeout: Duration) -> Option<Self> {
        let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
        config.verify_peer(false);
        config.set_application_protos(&[b"h3"]).unwrap();
        config.set_initial_max_data(1 << 26);
        config.set_initial_max_stream_data_bidi_local(CLIENT_STREAM_WINDOW);
        config.set_initial_max_stream_data_uni(1 << 20);
        config.set_initial_max_streams_bidi(100);
        config.set_initial_max_streams_uni(100);
        config.set_max_idle_timeout(20_000);
        config.enable_dgram(true, 1000, 1000);
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.set_nonblocking(true).unwrap();
        let local = socket.local_addr().unwrap();
        let scid = quiche::ConnectionId::from_vec(rand::random::<[u8; 16]>().to_vec());
        let conn = quiche::connect(Some("localhost"), &scid, local, server, &mut config).unwrap();
        let mut client = Self { socket, local, conn };
        let deadline = Instant::now() + timeout;
        while !client.conn.is_established() {
            if Instant::now() > deadline || client.conn.is_closed() || client.conn.peer_error().is_some() {
                return None;
            }
            client.pump();
        }
        Some(client)
    }

    /// Sends what quiche has, reads what arrived, runs timers; sleeps briefly when idle.
    fn pump(&mut self) {
        let (mut out, mut buf) = ([0u8; 1500], [0u8; 65_536]);
        while let Ok((n, info)) = self.conn.send(&mut out) {
            let _ = self.socket.send_to(&out[..n], info.to);
        }
        let mut got = false;
        while let Ok((n, from)) = self.socket.recv_from(&mut buf) {
            got = true;
            let _ = self.conn.recv(&mut buf[..n], quiche::RecvInfo { from, to: self.local });
        }
        if self.conn.timeout().is_some_and(|t| t.is_zero()) {
            self.conn.on_timeout();
        }
        if !got {
            std::thread::sleep(Duration::from_micros(300));
        }
    }

    fn read(&mut self, stream: u64, into: &mut Vec<u8>) -> bool {
        let mut buf = [0u8; 65_536];
        let mut fin = false;
        while let Ok((n, f)) = self.conn.stream_recv(stream, &mut buf) {
            into.extend_from_slice(&buf[..n]);
            fin |= f;
        }
        fin
    }
}

/// The client's control stream and a WebTransport CONNECT on stream 0, as a browser sends them.
fn open_session(client: &mut Client) {
    let mut control = Vec::new();
    holoquic_proto::varint::put(&mut control, stream_type::CONTROL);
    Settings(vec![(0x33, 1), (0x2b60_3742, 1)]).encode_frame(&mut control);
    client.conn.stream_send(2, &control, false).unwrap();
    let headers = [
        Header::new(b":method", b"CONNECT"),
        Header::new(b":protocol", b"webtransport"),
        Header::new(b":scheme", b"https"),
        Header::new(b":authority", b"localhost"),
        Header::new(b":path", b"/holoquic"),
        Header::new(b"origin", b"https://localhost"),
    ];
    let mut block = vec![0u8; 1024];
    let n = qpack::Encoder::new().encode(&headers, &mut block).unwrap();
    let mut connect = Vec::new();
    Frame::encode(frame_type::HEADERS, &block[..n], &mut connect);
    client.conn.stream_send(0, &connect, false).unwrap();
}

/// The frames of the session stream after its HEADERS: the payloads of its DATA frames.
fn capsules_of(session_stream: &[u8]) -> Vec<u8> {
    let mut rest = session_stream;
    let mut capsules = Vec::new();
    while let Ok((frame, used)) = Frame::decode(rest) {
        if frame.kind == frame_type::DATA {
            capsules.extend_from_slice(frame.payload);
        }
        rest = &rest[used..];
    }
    capsules
}

/// The types of the whole capsules (or frames) in `bytes`, in order.
fn kinds_of(mut bytes: &[u8]) -> Vec<u64> {
    let mut kinds = Vec::new();
    while let Ok((frame, used)) = Frame::decode(bytes) {
        kinds.push(frame.kind);
        bytes = &bytes[used..];
    }
    kinds
}

/// The GOAWAY frame's stream id on the origin's control stream, once it has come.
fn goaway_of(control_stream: &[u8]) -> Option<u64> {
    let (kind, used) = VarInt::decode(control_stream).ok()?;
    assert_eq!(kind.get(), stream_type::CONTROL);
    let mut rest = &control_stream[used..];
    while let Ok((frame, used)) = Frame::decode(rest) {
        if frame.kind == frame_type::GOAWAY {
            return Some(VarInt::decode(frame.payload).expect("a stream id").0.get());
        }
        rest = &rest[used..];
    }
    None
}

#[test]
fn sigterm_finishes_the_object_in_flight_then_closes_the_session_and_exits_0() {
    let dir = tempfile::tempdir().unwrap();
    let object: Vec<u8> = (0..OBJECT_BYTES as u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8).collect();
    std::fs::write(dir.path().join("big.bin"), &object).unwrap();
    let grace = GRACE_SECONDS.to_string();
    let args = ["--listen", "127.0.0.1:0", "--admin-listen", "127.0.0.1:0", "--content", dir.path().to_str().unwrap(), "--drain-grace", &grace];
    let mut origin = Origin::start(&args, &[]);
    let admin = origin.admin.unwrap();

    let mut client = Client::connect(origin.quic, Duration::from_secs(10)).expect("connected");
    open_session(&mut client);
    let mut request = Vec::new();
    holoquic_proto::varint::put(&mut request, WEBTRANSPORT_BIDI_SIGNAL);
    holoquic_proto::varint::put(&mut request, 0);
    let path = "/content/big.bin".to_owned();
    Message::Request(Request {
        request_id: 1,
        delivery: Delivery::Reliable,
        urgency: 1,
        deadline_ms: 0,
        fec_mode: FecMode::None,
        loss_ppm: 0,
        burst_milli: 0,
        overhead_permille: 0,
        path,
    })
    .encode(&mut request);
    client.conn.stream_send(4, &request, false).unwrap();

    // The first bytes are in; the rest waits for the client to read (its stream window).
    let (mut response, mut session) = (Vec::new(), Vec::new());
    let deadline = Instant::now() + Duration::from_secs(10);
    while response.len() < 200_000 {
        assert!(Instant::now() < deadline, "the object did not start");
        client.pump();
        client.read(0, &mut session);
        client.read(4, &mut response);
    }
    let signalled = Instant::now();
    origin.signal(libc::SIGTERM);
    origin.wait_log("draining", 0);

    // A new connection is refused (CONNECTION_REFUSED), and health checks see the drain.
    assert!(Client::connect(origin.quic, Duration::from_secs(5)).is_none(), "a new connection got in during the drain");
    assert_eq!(http_get(admin, "/healthz"), (503, "draining\n".into()));
    assert!(http_get(admin, "/metrics").1.contains("holoquic_draining 1\n"));

    // At once, before the object is done: the session's drain capsule and a GOAWAY. Then the
    // object whole, then the close capsule, then the connection's close.
    let (mut object_done, mut drain_seen, mut close_seen, mut control, mut goaway) = (false, false, false, Vec::new(), None);
    while client.conn.peer_error().is_none() {
        assert!(signalled.elapsed() < Duration::from_secs(GRACE_SECONDS + 5), "the origin did not close the connection");
        client.pump();
        object_done |= client.read(4, &mut response);
        client.read(0, &mut session);
        client.read(3, &mut control);
        if goaway.is_none() {
            goaway = goaway_of(&control);
        }
        let kinds = kinds_of(&capsules_of(&session));
        if !drain_seen && kinds.contains(&capsule_type::DRAIN_WEBTRANSPORT_SESSION) {
            drain_seen = true;
            assert!(!object_done, "the drain capsule came only after the object ({} of {OBJECT_BYTES} bytes)", response.len());
        }
        if !close_seen && kinds.contains(&capsule_type::CLOSE_WEBTRANSPORT_SESSION) {
            close_seen = true;
            assert!(object_done, "the close capsule came before the object's last byte ({} of {OBJECT_BYTES} bytes)", response.len());
            // As a WebTransport client does: the session is over, our side of its stream too.
            client.conn.stream_send(0, &[], true).unwrap();
        }
    }
    // The first request stream not served: the one after the last the client opened (4).
    assert_eq!(goaway, Some(8), "the origin's GOAWAY (control stream: {control:x?}, capsules {:x?})", kinds_of(&capsules_of(&session)));
    let (message, used) = Message::decode(&response).expect("a RESPONSE");
    assert!(matches!(message, Message::Response(ref r) if r.status == 200), "{message:?}");
    assert!(response[used..] == object[..], "the object's bytes: {} of {OBJECT_BYTES}", response.len() - used);
    let capsules = capsules_of(&session);
    assert_eq!(kinds_of(&capsules), [capsule_type::DRAIN_WEBTRANSPORT_SESSION, capsule_type::CLOSE_WEBTRANSPORT_SESSION]);
    let (drain, used) = Frame::decode(&capsules).expect("a capsule");
    assert!(drain.payload.is_empty(), "DRAIN_WEBTRANSPORT_SESSION has no payload");
    let (close, _) = Frame::decode(&capsules[used..]).expect("a capsule");
    assert_eq!(CloseSession::decode(close.payload).unwrap().code, 0);
    let close = client.conn.peer_error().unwrap();
    assert!(close.is_app && close.error_code == error_code::H3_NO_ERROR, "{close:?}");

    // The process ends by itself, with 0, well within the grace period.
    let status = loop {
        if let Some(status) = origin.child.try_wait().unwrap() {
            break status;
        }
        assert!(signalled.elapsed() < Duration::from_secs(GRACE_SECONDS), "no exit within the grace period");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status:?}");
    eprintln!("drained and exited {:?} after SIGTERM", signalled.elapsed());
}

#[test]
fn a_second_signal_stops_at_once() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("big.bin"), vec![7u8; OBJECT_BYTES]).unwrap();
    let args = ["--listen", "127.0.0.1:0", "--content", dir.path().to_str().unwrap(), "--drain-grace", "60"];
    let mut origin = Origin::start(&args, &[]);
    // A session that never reads keeps the drain waiting: only the second signal ends it.
    let mut client = Client::connect(origin.quic, Duration::from_secs(10)).expect("connected");
    open_session(&mut client);
    let mut request = Vec::new();
    holoquic_proto::varint::put(&mut request, WEBTRANSPORT_BIDI_SIGNAL);
    holoquic_proto::varint::put(&mut request, 0);
    Message::Request(Request {
        request_id: 1,
        delivery: Delivery::Reliable,
        urgency: 1,
        deadline_ms: 0,
        fec_mode: FecMode::None,
        loss_ppm: 0,
        burst_milli: 0,
        overhead_permille: 0,
        path: "/content/big.bin".into(),
    })
    .encode(&mut request);
    client.conn.stream_send(4, &request, false).unwrap();
    for _ in 0..200 {
        client.pump();
    }
    origin.signal(libc::SIGTERM);
    origin.wait_log("draining", 0);
    let signalled = Instant::now();
    std::thread::sleep(Duration::from_millis(300));
    assert!(origin.child.try_wait().unwrap().is_none(), "the drain waits for the object");
    origin.signal(libc::SIGINT);
    let status = loop {
        if let Some(status) = origin.child.try_wait().unwrap() {
            break status;
        }
        assert!(signalled.elapsed() < Duration::from_secs(5), "a second signal did not stop the origin");
        client.pump();
    };
    assert!(status.success(), "{status:?}");
}
