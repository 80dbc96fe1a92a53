//! The session's writes when quiche takes only part of them: over a real quiche connection whose
//! peer grants only a few dozen bytes of flow-control credit (as a collapsed congestion window
//! does under loss), every request stream must still carry exactly one whole REQUEST.

use std::net::SocketAddr;
use std::time::Instant;

use holoquic_proto::varint::Reader;
use holoquic_proto::{Delivery, FecMode, Message, Request};

use super::*;

/// Connection-level credit the server grants: less than one REQUEST.
const SERVER_MAX_DATA: u64 = 48;

fn server_config(dir: &std::path::Path) -> quiche::Config {
    let key = rcgen::KeyPair::generate_for(&rcgen::PKCS_ECDSA_P256_SHA256).unwrap();
    let cert = rcgen::CertificateParams::new(vec!["localhost".to_owned()]).unwrap().self_signed(&key).unwrap();
    let (cert_path, key_path) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert_path, cert.pem()).unwrap();
    std::fs::write(&key_path, key.serialize_pem()).unwrap();
    let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
    config.load_cert_chain_from_pem_file(cert_path.to_str().unwrap()).unwrap();
    config.load_priv_key_from_pem_file(key_path.to_str().unwrap()).unwrap();
    config.set_application_protos(&[b"h3"]).unwrap();
    config.set_initial_max_data(SERVER_MAX_DATA);
    config.set_initial_max_stream_data_bidi_remote(1 << 20);
    config.set_initial_max_streams_bidi(100);
    config.set_max_idle_timeout(30_000);
    config
}

/// Moves every packet each side has to send to the other, until both are quiet.
fn exchange(client: &mut quiche::Connection, server: &mut quiche::Connection, client_addr: SocketAddr, server_addr: SocketAddr) {
    let mut out = [0u8; 1500];
    for _ in 0..100 {
        let mut moved = false;
        while let Ok((n, _)) = client.send(&mut out) {
            let _ = server.recv(&mut out[..n], quiche::RecvInfo { from: client_addr, to: server_addr });
            moved = true;
        }
        while let Ok((n, _)) = server.send(&mut out) {
            let _ = client.recv(&mut out[..n], quiche::RecvInfo { from: server_addr, to: client_addr });
            moved = true;
        }
        if !moved {
            return;
        }
    }
}

fn request(path: &str) -> Request {
    Request {
        request_id: 0,
        delivery: Delivery::Datagram,
        urgency: 3,
        deadline_ms: 60_000,
        fec_mode: FecMode::Fixed,
        loss_ppm: 0,
        burst_milli: 0,
        overhead_permille: 100,
        path: path.to_owned(),
    }
}

#[test]
fn a_request_cut_short_by_send_capacity_is_finished_later_never_glued_to_the_next() {
    let dir = tempfile::tempdir().unwrap();
    let (client_addr, server_addr): (SocketAddr, SocketAddr) = ("127.0.0.1:40000".parse().unwrap(), "127.0.0.1:4433".parse().unwrap());
    let mut session = Session::new(0, &mut client_config().unwrap(), client_addr, server_addr, "localhost", "/wt").unwrap();
    let mut server_config = server_config(dir.path());
    let mut out = [0u8; 1500];
    let (n, _) = session.conn.send(&mut out).unwrap();
    let scid = quiche::ConnectionId::from_vec(vec![7; 16]);
    let mut server = quiche::accept(&scid, None, server_addr, client_addr, &mut server_config).unwrap();
    server.recv(&mut out[..n], quiche::RecvInfo { from: client_addr, to: server_addr }).unwrap();
    exchange(&mut session.conn, &mut server, client_addr, server_addr);
    assert!(session.conn.is_established() && server.is_established(), "handshake");
    // The CONNECT is not what this is about: the session is taken as open.
    session.state = State::Open;

    let paths: Vec<String> = (0..6).map(|i| format!("/content/demo/rung-0/object-with-a-long-name/segment-{i:05}.bin")).collect();
    let mut received: std::collections::BTreeMap<u64, Vec<u8>> = Default::default();
    let mut scratch = vec![0u8; 65_536];
    let mut buf = [0u8; 4096];
    for path in &paths {
        session.request(request(path), Instant::now(), Duration::from_secs(60));
        for _ in 0..20 {
            session.advance(Instant::now(), None, &mut scratch);
            exchange(&mut session.conn, &mut server, client_addr, server_addr);
            // The server reads all it got, which hands credit back (MAX_DATA).
            let readable: Vec<u64> = server.readable().collect();
            for stream in readable {
                while let Ok((n, _)) = server.stream_recv(stream, &mut buf) {
                    received.entry(stream).or_default().extend_from_slice(&buf[..n]);
                }
            }
            exchange(&mut session.conn, &mut server, client_addr, server_addr);
        }
    }
    assert!(received.len() >= 2, "requests reached the server: {received:?}");
    let mut seen = Vec::new();
    for (stream, bytes) in &received {
        let mut r = Reader::new(bytes);
        assert_eq!(r.varint().unwrap(), WEBTRANSPORT_BIDI_SIGNAL, "stream {stream} opens as a WebTransport stream");
        assert_eq!(r.varint().unwrap(), SESSION_STREAM, "stream {stream}: session id");
        let rest = r.remaining();
        let (message, used) = Message::decode(rest).unwrap_or_else(|e| panic!("stream {stream}: {e:?} in {rest:?}"));
        let Message::Request(got) = message else { panic!("stream {stream}: not a REQUEST") };
        assert_eq!(used, rest.len(), "stream {stream} carries one REQUEST and nothing after it");
        seen.push(got.path);
    }
    assert!(seen.iter().all(|p| paths.contains(p)), "every REQUEST is one the client made whole: {seen:?}");
}
