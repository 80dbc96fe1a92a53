//! The QUIC loop's admission of new connections, over a real UDP socket on loopback: with many
//! handshakes left half open (as spoofed Initials leave them), a new client is sent a Retry and
//! still gets in; without them, nobody is; and a connection is accepted with the certificate the
//! store serves at that moment, however recently it rotated. (The Initials all come from
//! 127.0.0.1, so the per-IP handshake limit is lifted here; isolation_tests.rs tests it.)

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

use super::retry::RETRY_ABOVE_HALF_OPEN;
use super::test_support::{test_dir, LoopOrigin};
use crate::tls::GENERATED_VALIDITY;

/// An origin whose handshakes the tests watch: the per-IP handshake limit lifted (every Initial
/// comes from 127.0.0.1).
fn start_origin() -> LoopOrigin {
    LoopOrigin::start(test_dir("handshake"), &["--max-handshakes-per-ip", "1000"])
}

fn client_config() -> quiche::Config {
    let mut c = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
    c.verify_peer(false);
    c.set_application_protos(&[b"h3"]).unwrap();
    c.set_initial_max_data(1 << 20);
    c.set_initial_max_stream_data_uni(1 << 16);
    c.set_initial_max_streams_uni(8);
    c.set_max_idle_timeout(5_000);
    c
}

fn random_cid() -> quiche::ConnectionId<'static> {
    quiche::ConnectionId::from_vec(rand::random::<[u8; 16]>().to_vec())
}

/// Runs a quiche client handshake against `server`; panics if it does not complete in 5 s.
fn handshake(server: SocketAddr) -> quiche::Connection {
    let (socket, conn) = first_flight(server);
    complete(socket, conn)
}

/// A client that has sent its first flight (its Initial) to `server`, and nothing else yet.
fn first_flight(server: SocketAddr) -> (UdpSocket, quiche::Connection) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let local = socket.local_addr().unwrap();
    let mut conn = quiche::connect(Some("localhost"), &random_cid(), local, server, &mut client_config()).unwrap();
    let mut out = [0u8; 1500];
    while let Ok((n, info)) = conn.send(&mut out) {
        socket.send_to(&out[..n], info.to).unwrap();
    }
    (socket, conn)
}

/// Drives `conn` until its handshake completes; panics if it does not in 5 s.
fn complete(socket: UdpSocket, mut conn: quiche::Connection) -> quiche::Connection {
    let local = socket.local_addr().unwrap();
    let (mut out, mut buf) = ([0u8; 1500], [0u8; 65_536]);
    let deadline = Instant::now() + Duration::from_secs(5);
    while Instant::now() < deadline {
        while let Ok((n, info)) = conn.send(&mut out) {
            socket.send_to(&out[..n], info.to).unwrap();
        }
        if conn.is_established() {
            return conn;
        }
        assert!(!conn.is_closed(), "the origin closed the handshake: {:?}", conn.peer_error());
        let wait = conn.timeout().unwrap_or(Duration::from_millis(20)).clamp(Duration::from_millis(1), Duration::from_millis(50));
        socket.set_read_timeout(Some(wait)).unwrap();
        match socket.recv_from(&mut buf) {
            Ok((n, from)) => {
                let _ = conn.recv(&mut buf[..n], quiche::RecvInfo { from, to: local });
            }
            Err(_) => conn.on_timeout(),
        }
    }
    panic!("no handshake within 5 s");
}

/// The SHA-256 of the certificate the origin presented: what `serverCertificateHashes` pins.
fn presented(conn: &quiche::Connection) -> [u8; 32] {
    Sha256::digest(conn.peer_cert().expect("a certificate")).into()
}

#[test]
fn a_client_gets_in_without_retry_when_few_handshakes_are_open() {
    let origin = start_origin();
    assert!(handshake(origin.addr).is_established());
    assert_eq!(origin.count(|m| &m.retries_sent_total), 0);
}

#[test]
fn many_half_open_handshakes_make_new_clients_answer_a_retry() {
    let origin = start_origin();
    // First Initials that never go further, as an attacker spoofing addresses sends them.
    let spoofer = UdpSocket::bind("127.0.0.1:0").unwrap();
    let local = spoofer.local_addr().unwrap();
    let mut out = [0u8; 1500];
    for _ in 0..RETRY_ABOVE_HALF_OPEN {
        let mut c = quiche::connect(Some("localhost"), &random_cid(), local, origin.addr, &mut client_config()).unwrap();
        let (n, _) = c.send(&mut out).unwrap();
        spoofer.send_to(&out[..n], origin.addr).unwrap();
    }
    let deadline = Instant::now() + Duration::from_secs(5);
    while origin.count(|m| &m.connections_active) < RETRY_ABOVE_HALF_OPEN as u64 {
        assert!(Instant::now() < deadline, "the origin did not take the Initials");
        std::thread::sleep(Duration::from_millis(10));
    }
    assert_eq!(origin.count(|m| &m.retries_sent_total), 0, "no Retry below the threshold");
    // A real client now goes through a Retry, and gets in.
    assert!(handshake(origin.addr).is_established());
    // One Retry per Initial datagram of the client's first flight (a large ClientHello spans
    // two); the client takes the first and ignores the others.
    assert!(origin.count(|m| &m.retries_sent_total) >= 1);
    assert_eq!(origin.count(|m| &m.retry_tokens_refused_total), 0);
}

/// A client that read the new hash (HTTPS serves a rotated certificate from the next handshake
/// on) may send its Initial before the QUIC loop's next round: it must get the new certificate,
/// which it pins, not the old one. The loop is held between two rounds while the certificate
/// rotates and the Initial arrives (as a loop asleep in poll is); the first connection after
/// the rotation gets the new certificate, and the next ones too.
#[test]
fn the_first_connection_after_a_rotation_gets_the_new_certificate() {
    let origin = start_origin();
    let first = origin.certs.current();
    assert_eq!(presented(&handshake(origin.addr)), first.der_sha256);

    let held = origin.rounds.pause();
    // Longer than the loop's idle wake-up (100 ms): the round under way ends, the next waits.
    std::thread::sleep(Duration::from_millis(300));
    assert!(origin.certs.rotate_if_due(first.not_after - Duration::from_secs(60), GENERATED_VALIDITY).unwrap());
    let second = origin.certs.current();
    assert_ne!(second.der_sha256, first.der_sha256);
    let (socket, conn) = first_flight(origin.addr);
    std::thread::sleep(Duration::from_millis(50)); // the Initial is in the origin's socket
    drop(held);
    assert_eq!(presented(&complete(socket, conn)), second.der_sha256, "the first connection after the rotation");
    assert_eq!(presented(&handshake(origin.addr)), second.der_sha256);
}
