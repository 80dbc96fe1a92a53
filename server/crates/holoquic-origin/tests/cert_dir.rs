//! Generated certificates shared through `--cert-dir`: two real origin binaries on one directory
//! serve the same certificate (over QUIC, pinned by the hash they publish) and publish the same
//! hashes in `/cert-hash` and `/config.json`, at start and across a rotation (certificates valid
//! a few seconds, through the test-only `HOLOQUIC_TEST_CERT_VALIDITY_SECONDS`).

mod support;

use std::net::{SocketAddr, UdpSocket};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};
use support::{http_get, Origin};

/// The certificate's validity in the rotation test: the next one is made a fifth of it before
/// expiry (6 s) and served from a tenth before (3 s); origins read the directory every 0.1 s.
const VALIDITY_SECONDS: &str = "30";

fn start(cert_dir: &std::path::Path, content: &std::path::Path) -> Origin {
    let args = ["--listen", "127.0.0.1:0", "--http-listen", "127.0.0.1:0", "--content", content.to_str().unwrap(), "--cert-dir", cert_dir.to_str().unwrap()];
    Origin::start(&args, &[("HOLOQUIC_TEST_CERT_VALIDITY_SECONDS", VALIDITY_SECONDS)])
}

/// The hashes `/config.json` publishes, in order.
fn published(origin: &Origin) -> Vec<String> {
    let (status, body) = http_get(origin.http.unwrap(), "/config.json");
    assert_eq!(status, 200);
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    json["certificateHashes"].as_array().unwrap().iter().map(|h| h["value"].as_str().unwrap_or_else(|| panic!("{h}")).to_owned()).collect()
}

/// `/cert-hash`'s hash.
fn cert_hash(origin: &Origin) -> String {
    let (status, body) = http_get(origin.http.unwrap(), "/cert-hash");
    assert_eq!(status, 200);
    let json: serde_json::Value = serde_json::from_str(&body).unwrap();
    json["value"].as_str().unwrap_or_else(|| panic!("{json}")).to_owned()
}

/// The SHA-256 (hex) of the certificate the origin's QUIC side presents.
fn quic_certificate(server: SocketAddr) -> String {
    let mut config = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
    config.verify_peer(false);
    config.set_application_protos(&[b"h3"]).unwrap();
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.set_nonblocking(true).unwrap();
    let local = socket.local_addr().unwrap();
    let scid = quiche::ConnectionId::from_vec(rand::random::<[u8; 16]>().to_vec());
    let mut conn = quiche::connect(Some("localhost"), &scid, local, server, &mut config).unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let (mut out, mut buf) = ([0u8; 1500], [0u8; 65_536]);
    while !conn.is_established() {
        assert!(Instant::now() < deadline && !conn.is_closed(), "no QUIC handshake");
        while let Ok((n, info)) = conn.send(&mut out) {
            let _ = socket.send_to(&out[..n], info.to);
        }
        while let Ok((n, from)) = socket.recv_from(&mut buf) {
            let _ = conn.recv(&mut buf[..n], quiche::RecvInfo { from, to: local });
        }
        if conn.timeout().is_some_and(|t| t.is_zero()) {
            conn.on_timeout();
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    Sha256::digest(conn.peer_cert().unwrap()).iter().map(|b| format!("{b:02x}")).collect()
}

/// Whether a client pinning the hashes `origin`'s `/config.json` lists (as a browser's
/// `serverCertificateHashes`) accepts the certificate `presented`.
fn pinned_accepts(origin: &Origin, presented: &str) -> bool {
    published(origin).iter().any(|h| h == presented)
}

#[test]
fn two_origins_on_one_cert_dir_publish_and_serve_the_same_certificate_across_rotation() {
    let base = tempfile::tempdir().unwrap();
    let (certs, content) = (base.path().join("certs"), base.path().join("content"));
    std::fs::create_dir(&content).unwrap();
    let a = start(&certs, &content);
    let b = start(&certs, &content);
    let first = published(&a);
    assert_eq!(first.len(), 1, "one certificate at start");
    assert_eq!(published(&b), first, "both origins publish the same hashes");
    assert_eq!((cert_hash(&a), cert_hash(&b)), (first[0].clone(), first[0].clone()));
    // A WebTransport client pinning that hash gets it from either origin.
    assert_eq!(quic_certificate(a.quic), first[0]);
    assert_eq!(quic_certificate(b.quic), first[0]);

    // The next certificate appears in both, 6 s before the first expires; both keep agreeing.
    let deadline = Instant::now() + Duration::from_secs(40);
    let both = loop {
        assert!(Instant::now() < deadline, "no next certificate was published");
        let (from_a, from_b) = (published(&a), published(&b));
        if from_a.len() == 2 && from_a == from_b {
            break from_a;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(both[0], first[0], "the first is still served, the next published beside it");
    for origin in [&a, &b] {
        assert!(pinned_accepts(origin, &quic_certificate(a.quic)) && pinned_accepts(origin, &quic_certificate(b.quic)));
    }
    // Then each origin serves the next (3 s before the first expires), over QUIC as over HTTPS:
    // a client that saw the switch and connects at once gets the new certificate.
    for origin in [&a, &b] {
        let deadline = Instant::now() + Duration::from_secs(20);
        while cert_hash(origin) != both[1] {
            assert!(Instant::now() < deadline, "the next certificate was not served");
            std::thread::sleep(Duration::from_millis(10));
        }
        assert_eq!(quic_certificate(origin.quic), both[1], "QUIC presents what HTTPS does");
    }
    assert_eq!(published(&a), published(&b));
    // A client pinned with either origin's list connects to either origin.
    for presented in [quic_certificate(a.quic), quic_certificate(b.quic)] {
        assert_eq!(presented, both[1]);
        assert!(pinned_accepts(&a, &presented) && pinned_accepts(&b, &presented));
    }
    // The key files are private.
    use std::os::unix::fs::PermissionsExt;
    assert_eq!(std::fs::metadata(&certs).unwrap().permissions().mode() & 0o777, 0o700);
    for entry in std::fs::read_dir(&certs).unwrap() {
        assert_eq!(entry.unwrap().metadata().unwrap().permissions().mode() & 0o777, 0o600);
    }
}

#[test]
fn a_cert_dir_readable_by_others_is_refused_at_start() {
    let base = tempfile::tempdir().unwrap();
    let (certs, content) = (base.path().join("certs"), base.path().join("content"));
    std::fs::create_dir(&content).unwrap();
    std::fs::create_dir(&certs).unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&certs, std::fs::Permissions::from_mode(0o755)).unwrap();
    let output =
        support::command(&["--listen", "127.0.0.1:0", "--content", content.to_str().unwrap(), "--cert-dir", certs.to_str().unwrap()], &[]).output().unwrap();
    assert!(!output.status.success());
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains("--cert-dir") && stderr.contains("mode 755"), "{stderr}");
}
