//! The real origin binary as a child process, and small clients for it: plain HTTP/1.1 over TCP
//! and a TLS handshake that reports the certificate's SHA-256.

#![allow(dead_code)] // each test file uses a part

pub mod h3;
pub mod https;
pub mod seaweed;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use sha2::{Digest, Sha256};

pub const BIN: &str = env!("CARGO_BIN_EXE_holoquic-origin");

/// A running origin; killed (SIGKILL) when dropped if still running.
pub struct Origin {
    pub child: Child,
    pub quic: SocketAddr,
    pub http: Option<SocketAddr>,
    pub admin: Option<SocketAddr>,
    /// Everything it wrote on stderr so far.
    pub stderr: Arc<Mutex<String>>,
}

/// `holoquic-origin` with `args`, no inherited `HOLOQUIC_*` variable, and `env` added.
pub fn command(args: &[&str], env: &[(&str, &str)]) -> Command {
    let mut cmd = Command::new(BIN);
    cmd.args(args).stdin(Stdio::null()).stdout(Stdio::piped()).stderr(Stdio::piped());
    for (name, _) in std::env::vars_os() {
        if name.to_string_lossy().starts_with("HOLOQUIC_") {
            cmd.env_remove(name);
        }
    }
    cmd.env("RUST_LOG", "info").envs(env.iter().copied());
    cmd
}

impl Origin {
    pub fn start(args: &[&str], env: &[(&str, &str)]) -> Self {
        Self::spawn(command(args, env))
    }

    /// Spawns `cmd` and waits (30 s at most) for its ready line. (With `--listen …:0` the origin
    /// itself finds a port free for both UDP and TCP.)
    pub fn spawn(mut cmd: Command) -> Self {
        Self::try_spawn(&mut cmd).unwrap_or_else(|stderr| panic!("no ready line; stderr:\n{stderr}"))
    }

    /// One start: the origin once ready, or its stderr when it exited or stayed silent for 30 s.
    fn try_spawn(cmd: &mut Command) -> Result<Self, String> {
        let mut child = cmd.spawn().expect("spawn the origin");
        let stderr = Arc::new(Mutex::new(String::new()));
        let sink = Arc::clone(&stderr);
        let err = child.stderr.take().unwrap();
        let stderr_reader = std::thread::spawn(move || {
            for line in BufReader::new(err).lines().map_while(Result::ok) {
                let Ok(mut all) = sink.lock() else { return };
                all.push_str(&line);
                all.push('\n');
            }
        });
        let (tx, rx) = std::sync::mpsc::channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        // Generous: a loaded CI machine pages a large binary in slowly.
        let Ok(line) = rx.recv_timeout(Duration::from_secs(30)) else {
            let _ = child.kill();
            let _ = child.wait();
            let _ = stderr_reader.join();
            let text = stderr.lock().unwrap().clone();
            return Err(text);
        };
        let field = |name: &str| line.split(' ').find_map(|f| f.strip_prefix(name)).and_then(|v| v.parse().ok());
        assert!(line.starts_with("holoquic-origin: listening"), "{line}");
        Ok(Self { child, quic: field("quic=").expect("quic address"), http: field("http="), admin: field("admin="), stderr })
    }

    pub fn signal(&self, signal: libc::c_int) {
        // SAFETY: kill with the pid of our own child.
        assert_eq!(unsafe { libc::kill(self.child.id() as libc::pid_t, signal) }, 0);
    }

    /// Waits (10 s at most) until stderr holds `text` after `from` bytes; returns where it ends.
    pub fn wait_log(&self, text: &str, from: usize) -> usize {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            let all = self.stderr.lock().unwrap().clone();
            if let Some(at) = all.get(from..).and_then(|rest| rest.find(text)) {
                return from + at + text.len();
            }
            assert!(Instant::now() < deadline, "no {text:?} on stderr:\n{all}");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// SIGTERM, then waits (10 s at most) for the exit.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        self.signal(libc::SIGTERM);
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(Instant::now() < deadline, "the origin did not exit on SIGTERM");
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Origin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `GET path` over plain HTTP/1.1: (status, body).
pub fn http_get(addr: SocketAddr, path: &str) -> (u16, String) {
    let mut tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    write!(tcp, "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = String::new();
    tcp.read_to_string(&mut response).unwrap();
    let status = response.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or_else(|| panic!("response {response:?}"));
    let body = response.split_once("\r\n\r\n").map(|(_, b)| b.to_owned()).unwrap_or_default();
    (status, body)
}

/// A TLS handshake with the HTTPS listener: the SHA-256 of the certificate it presented, and the
/// status of `GET path` on that connection (HTTP/1.1).
pub fn tls_get(addr: SocketAddr, path: &str) -> ([u8; 32], u16) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(Arc::clone(&provider))
        .with_safe_default_protocol_versions()
        .unwrap()
        .dangerous()
        .with_custom_certificate_verifier(Arc::new(AnyCertificate(provider)))
        .with_no_client_auth();
    config.alpn_protocols = vec![b"http/1.1".to_vec()];
    let mut conn = rustls::ClientConnection::new(Arc::new(config), "localhost".try_into().unwrap()).unwrap();
    let mut tcp = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
    let mut tls = rustls::Stream::new(&mut conn, &mut tcp);
    write!(tls, "GET {path} HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").unwrap();
    let mut response = Vec::new();
    let _ = tls.read_to_end(&mut response); // a close without close_notify is fine here
    let leaf = conn.peer_certificates().expect("a certificate")[0].clone();
    let text = String::from_utf8_lossy(&response);
    let status = text.split(' ').nth(1).and_then(|s| s.parse().ok()).unwrap_or(0);
    (Sha256::digest(leaf.as_ref()).into(), status)
}

/// Accepts any certificate: the tests compare its hash instead.
#[derive(Debug)]
struct AnyCertificate(Arc<rustls::crypto::CryptoProvider>);

impl rustls::client::danger::ServerCertVerifier for AnyCertificate {
    fn verify_server_cert(
        &self,
        _: &rustls::pki_types::CertificateDer<'_>,
        _: &[rustls::pki_types::CertificateDer<'_>],
        _: &rustls::pki_types::ServerName<'_>,
        _: &[u8],
        _: rustls::pki_types::UnixTime,
    ) -> Result<rustls::client::danger::ServerCertVerified, rustls::Error> {
        Ok(rustls::client::danger::ServerCertVerified::assertion())
    }

    fn verify_tls12_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls12_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn verify_tls13_signature(
        &self,
        message: &[u8],
        cert: &rustls::pki_types::CertificateDer<'_>,
        dss: &rustls::DigitallySignedStruct,
    ) -> Result<rustls::client::danger::HandshakeSignatureValid, rustls::Error> {
        rustls::crypto::verify_tls13_signature(message, cert, dss, &self.0.signature_verification_algorithms)
    }

    fn supported_verify_schemes(&self) -> Vec<rustls::SignatureScheme> {
        self.0.signature_verification_algorithms.supported_schemes()
    }
}
