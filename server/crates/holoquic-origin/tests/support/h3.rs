//! A minimal HTTP/3 client on quiche for the tests: one connection to the origin's UDP port, one
//! GET, the whole answer (certificate not verified: the tests compare bytes, not identities).

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use quiche::h3::NameValue;

/// What one GET got.
#[derive(Debug, Default)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> &str {
        self.headers.iter().find(|(n, _)| n == name).map_or("", |(_, v)| v.as_str())
    }
}

/// `GET path` over HTTP/3 to `origin` (10 s at most).
pub fn get(origin: SocketAddr, path: &str) -> Answer {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.connect(origin).unwrap();
    socket.set_read_timeout(Some(Duration::from_millis(20))).unwrap();
    let local = socket.local_addr().unwrap();
    let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
    config.verify_peer(false);
    config.set_application_protos(quiche::h3::APPLICATION_PROTOCOL).unwrap();
    config.set_max_idle_timeout(10_000);
    config.set_max_recv_udp_payload_size(1350);
    config.set_max_send_udp_payload_size(1350);
    config.set_initial_max_data(64 << 20);
    config.set_initial_max_stream_data_bidi_local(64 << 20);
    config.set_initial_max_stream_data_bidi_remote(1 << 20);
    config.set_initial_max_stream_data_uni(1 << 20);
    config.set_initial_max_streams_bidi(16);
    config.set_initial_max_streams_uni(16);
    let scid: [u8; 16] = rand::random();
    let scid = quiche::ConnectionId::from_ref(&scid);
    let mut conn = quiche::connect(Some("localhost"), &scid, local, origin, &mut config).unwrap();
    let h3_config = quiche::h3::Config::new().unwrap();
    let mut h3: Option<quiche::h3::Connection> = None;
    let mut answer = Answer::default();
    let (mut buf, mut out) = (vec![0u8; 65_535], vec![0u8; 1350]);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        assert!(Instant::now() < deadline, "no complete HTTP/3 answer for {path} within 10 s (so far: {answer:?})");
        while let Ok((n, _)) = conn.send(&mut out) {
            socket.send(&out[..n]).unwrap();
        }
        match socket.recv(&mut buf) {
            Ok(n) => {
                let _ = conn.recv(&mut buf[..n], quiche::RecvInfo { from: origin, to: local });
            }
            Err(_) => conn.on_timeout(),
        }
        assert!(!conn.is_closed(), "the connection closed before the answer to {path}");
        if conn.is_established() && h3.is_none() {
            let mut client = quiche::h3::Connection::with_transport(&mut conn, &h3_config).unwrap();
            let request = [
                quiche::h3::Header::new(b":method", b"GET"),
                quiche::h3::Header::new(b":scheme", b"https"),
                quiche::h3::Header::new(b":authority", b"localhost"),
                quiche::h3::Header::new(b":path", path.as_bytes()),
            ];
            client.send_request(&mut conn, &request, true).unwrap();
            h3 = Some(client);
        }
        let Some(client) = h3.as_mut() else { continue };
        loop {
            match client.poll(&mut conn) {
                Ok((_, quiche::h3::Event::Headers { list, .. })) => {
                    for header in list {
                        let (name, value) = (String::from_utf8_lossy(header.name()).into_owned(), String::from_utf8_lossy(header.value()).into_owned());
                        if name == ":status" {
                            answer.status = value.parse().unwrap();
                        }
                        answer.headers.push((name, value));
                    }
                }
                Ok((stream, quiche::h3::Event::Data)) => {
                    while let Ok(n) = client.recv_body(&mut conn, stream, &mut buf) {
                        answer.body.extend_from_slice(&buf[..n]);
                    }
                }
                Ok((_, quiche::h3::Event::Finished)) => {
                    let _ = conn.close(true, 0x100, b"done");
                    while let Ok((n, _)) = conn.send(&mut out) {
                        let _ = socket.send(&out[..n]);
                    }
                    return answer;
                }
                Ok((_, quiche::h3::Event::Reset(code))) => panic!("{path}: the stream was reset ({code})"),
                Ok(_) => {}
                Err(quiche::h3::Error::Done) => break,
                Err(e) => panic!("{path}: HTTP/3 error {e:?}"),
            }
        }
    }
}
