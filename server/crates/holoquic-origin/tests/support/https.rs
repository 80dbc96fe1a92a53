//! The origin over a fresh content directory and web app, with a PKI certificate the tests
//! trust, and the clients the HTTPS tests use against it: HTTP/2 over TLS (the `h2` crate, as a
//! browser speaks it) and raw TCP and TLS sockets for the misbehaving ones.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio_rustls::client::TlsStream;

pub struct Site {
    pub origin: super::Origin,
    pub https: SocketAddr,
    pub admin: SocketAddr,
    pub dir: PathBuf,
    tls: Arc<rustls::ClientConfig>,
}

/// What a fetch got.
#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: http::HeaderMap,
    pub body: Bytes,
}

impl Answer {
    pub fn header(&self, name: &str) -> &str {
        self.headers.get(name).and_then(|v| v.to_str().ok()).unwrap_or("")
    }
}

impl Site {
    /// Starts the origin on 127.0.0.1 (ports chosen by the system) with `extra` flags, over a
    /// content directory holding `demo/manifest.mpd` and a web app holding `index.html`.
    pub fn start(extra: &[&str]) -> Self {
        Self::start_limited(extra, None)
    }

    /// Like [`Site::start`], the child's open-file limit (soft and hard) set to `max_files`.
    pub fn start_limited(extra: &[&str], max_files: Option<u64>) -> Self {
        Self::launch(None, extra, max_files, &[])
    }

    /// Like [`Site::start`], serving `content` (e.g. `s3://bucket/prefix`) instead of the
    /// fresh directory, with `env` added.
    pub fn start_serving(content: &str, extra: &[&str], env: &[(&str, &str)]) -> Self {
        Self::launch(Some(content), extra, None, env)
    }

    fn launch(content: Option<&str>, extra: &[&str], max_files: Option<u64>, env: &[(&str, &str)]) -> Self {
        let dir = std::env::temp_dir().join(format!("holoquic-origin-test-{}-{}", std::process::id(), rand::random::<u64>()));
        std::fs::create_dir_all(dir.join("content/demo")).unwrap();
        std::fs::create_dir_all(dir.join("web")).unwrap();
        std::fs::write(dir.join("content/demo/manifest.mpd"), b"<MPD generation=\"1\"/>").unwrap();
        std::fs::write(dir.join("web/index.html"), b"<p>app v1</p>").unwrap();
        let certified = rcgen::generate_simple_self_signed(vec!["localhost".to_owned()]).unwrap();
        std::fs::write(dir.join("cert.pem"), certified.cert.pem()).unwrap();
        std::fs::write(dir.join("key.pem"), certified.key_pair.serialize_pem()).unwrap();
        let mut roots = rustls::RootCertStore::empty();
        roots.add(certified.cert.der().clone()).unwrap();
        let tls = Arc::new(rustls::ClientConfig::builder().with_root_certificates(roots).with_no_client_auth());

        let path = |p: &str| dir.join(p).to_str().unwrap().to_owned();
        let mut args = vec!["--listen".to_owned(), "127.0.0.1:0".to_owned(), "--admin-listen".to_owned(), "127.0.0.1:0".to_owned()];
        for (flag, file) in [("--content", "content"), ("--web", "web"), ("--cert", "cert.pem"), ("--key", "key.pem")] {
            let value = if flag == "--content" { content.map_or_else(|| path(file), str::to_owned) } else { path(file) };
            args.extend([flag.to_owned(), value]);
        }
        args.extend(extra.iter().map(|a| a.to_string()));
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut env = env.to_vec();
        env.push(("RUST_LOG", "warn"));
        let mut command = super::command(&args, &env);
        if let Some(max_files) = max_files {
            use std::os::unix::process::CommandExt;
            // SAFETY: setrlimit is async-signal-safe; nothing else runs between fork and exec.
            unsafe {
                command.pre_exec(move || {
                    let limit = libc::rlimit { rlim_cur: max_files, rlim_max: max_files };
                    if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
                        return Err(std::io::Error::last_os_error());
                    }
                    Ok(())
                });
            }
        }
        let origin = super::Origin::spawn(command);
        // HTTPS listens on the QUIC port number.
        let (https, admin) = (origin.quic, origin.admin.expect("the admin listener"));
        Self { origin, https, admin, dir, tls }
    }

    pub fn pid(&self) -> u32 {
        self.origin.child.id()
    }

    pub fn write(&self, relative: &str, bytes: &[u8]) {
        std::fs::write(self.dir.join(relative), bytes).unwrap();
    }

    /// Replaces a file as a careful packager does: a new file renamed over the old.
    pub fn replace(&self, relative: &str, bytes: &[u8]) {
        let staged = self.dir.join(format!("{relative}.staged"));
        std::fs::write(&staged, bytes).unwrap();
        std::fs::rename(staged, self.dir.join(relative)).unwrap();
    }

    pub async fn tls(&self, alpn: &[u8]) -> std::io::Result<TlsStream<TcpStream>> {
        let tcp = TcpStream::connect(self.https).await?;
        self.tls_on(tcp, alpn).await
    }

    /// TLS to the origin over `tcp` (already connected to [`Site::https`]), offering `alpn`.
    pub async fn tls_on(&self, tcp: TcpStream, alpn: &[u8]) -> std::io::Result<TlsStream<TcpStream>> {
        let mut config = (*self.tls).clone();
        config.alpn_protocols = vec![alpn.to_vec()];
        tokio_rustls::TlsConnector::from(Arc::new(config)).connect("localhost".try_into().unwrap(), tcp).await
    }

    /// GET over a new HTTP/2 connection, as a browser would.
    pub async fn fetch(&self, path: &str, headers: &[(&str, &str)]) -> Result<Answer, String> {
        let tls = self.tls(b"h2").await.map_err(|e| format!("TLS: {e}"))?;
        let (client, connection) = h2::client::handshake(tls).await.map_err(|e| format!("h2 handshake: {e}"))?;
        let driver = tokio::spawn(connection);
        let answer = h2_get(client, &format!("https://localhost:{}{path}", self.https.port()), headers).await;
        driver.abort();
        answer
    }

    /// A metric's value, read from `/metrics` on the admin listener.
    pub async fn metric(&self, name: &str) -> u64 {
        let mut tcp = TcpStream::connect(self.admin).await.unwrap();
        tcp.write_all(b"GET /metrics HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n").await.unwrap();
        let mut text = String::new();
        tcp.read_to_string(&mut text).await.unwrap();
        let prefix = format!("holoquic_{name} ");
        text.lines().find_map(|l| l.strip_prefix(&prefix)).unwrap_or_else(|| panic!("no {name}")).trim().parse().unwrap()
    }

    /// CPU seconds (user + system) the origin has used.
    pub fn cpu_seconds(&self) -> f64 {
        let stat = std::fs::read_to_string(format!("/proc/{}/stat", self.pid())).unwrap();
        // Fields after the parenthesised command name; utime and stime are the 14th and 15th.
        let rest = &stat[stat.rfind(')').unwrap() + 2..];
        let fields: Vec<&str> = rest.split_whitespace().collect();
        let ticks: u64 = fields[11].parse::<u64>().unwrap() + fields[12].parse::<u64>().unwrap();
        // SAFETY: sysconf has no preconditions.
        ticks as f64 / unsafe { libc::sysconf(libc::_SC_CLK_TCK) } as f64
    }
}

impl Drop for Site {
    fn drop(&mut self) {
        let _ = self.origin.child.kill();
        let _ = self.origin.child.wait();
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// One GET on an HTTP/2 connection.
pub async fn h2_get(mut client: h2::client::SendRequest<Bytes>, uri: &str, headers: &[(&str, &str)]) -> Result<Answer, String> {
    let mut request = http::Request::get(uri);
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    client = client.ready().await.map_err(|e| format!("h2 ready: {e}"))?;
    let (response, _) = client.send_request(request.body(()).unwrap(), true).map_err(|e| format!("h2 send: {e}"))?;
    let (parts, mut body) = response.await.map_err(|e| format!("h2 response: {e}"))?.into_parts();
    let mut bytes = Vec::new();
    while let Some(chunk) = body.data().await {
        let chunk = chunk.map_err(|e| format!("h2 body: {e}"))?;
        let _ = body.flow_control().release_capacity(chunk.len());
        bytes.extend_from_slice(&chunk);
    }
    Ok(Answer { status: parts.status.as_u16(), headers: parts.headers, body: bytes.into() })
}

/// Waits until the peer closes `stream` (end of stream or an error such as a reset), at most
/// `limit`; returns whether it did. Whatever the peer sends before is discarded.
pub async fn closed_within<S: tokio::io::AsyncRead + Unpin>(stream: &mut S, limit: Duration) -> bool {
    let mut buf = [0u8; 4096];
    tokio::time::timeout(limit, async {
        loop {
            match stream.read(&mut buf).await {
                Ok(0) | Err(_) => return,
                Ok(_) => {}
            }
        }
    })
    .await
    .is_ok()
}

/// The first bytes a TLS client sends (its ClientHello), for clients that stop half way.
pub fn client_hello() -> Vec<u8> {
    let config = rustls::ClientConfig::builder().with_root_certificates(rustls::RootCertStore::empty()).with_no_client_auth();
    let mut connection = rustls::ClientConnection::new(Arc::new(config), "localhost".try_into().unwrap()).unwrap();
    let mut hello = Vec::new();
    connection.write_tls(&mut hello).unwrap();
    hello
}
