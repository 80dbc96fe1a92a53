//! The origin's HTTP semantics over both transports, from one table of cases: each case is asked
//! of the QUIC side by quiche's own HTTP/3 client (over quiche's test pipe, the server connection
//! configured as the origin's and driven by `webtransport::Connection`) and of the HTTPS listener
//! by hyper's HTTP/2 client over TLS on loopback, and both must give the same status, header
//! fields and exact bytes. Then what only HTTP/3 has: bodies larger than the stream window, a
//! client that stops reading, and the per-connection queue budget.

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::Arc;
use std::time::{Duration, Instant};

use quiche::h3::{Event, Header, NameValue};
use quiche::test_utils::Pipe;

use super::CONNECTION_QUEUE_BYTES;
use crate::config::Config;
use crate::content::ContentStore;
use crate::metrics::Metrics;
use crate::quic::{quiche_config, webtransport, QuicContext};
use crate::tls::CertStore;

/// The receive window the HTTP/3 client gives each stream: the large file is many times this.
const CLIENT_STREAM_WINDOW: u64 = 256 * 1024;
const BIG_FILE_BYTES: usize = 3_000_000;

/// A content root and a web app with known bytes, and a secret beside them that must never leak.
struct Fixture {
    dir: PathBuf,
    ctx: QuicContext,
    segment: Vec<u8>,
    big: Vec<u8>,
    index: Vec<u8>,
    asset: Vec<u8>,
}

impl Fixture {
    fn new() -> Self {
        let dir = std::env::temp_dir().join(format!("holoquic-http3-{}-{}", std::process::id(), rand::random::<u64>()));
        let random = |n: usize| (0..n).map(|_| rand::random::<u8>()).collect::<Vec<u8>>();
        let (segment, big, asset) = (random(100_000), random(BIG_FILE_BYTES), b"console.log('app')\n".to_vec());
        let index = b"<!doctype html><title>holoquic</title>\n".to_vec();
        for (path, bytes) in [
            ("content/scene/seg.v3c", &segment),
            ("content/scene/big.bin", &big),
            ("content/scene/manifest.mpd", &b"<MPD/>".to_vec()),
            ("web/index.html", &index),
            ("web/assets/app-1234.js", &asset),
            ("SECRET.txt", &b"SECRET".to_vec()),
        ] {
            std::fs::create_dir_all(dir.join(path).parent().unwrap()).unwrap();
            std::fs::write(dir.join(path), bytes).unwrap();
        }
        let arg = |p: &str| dir.join(p).to_str().unwrap().to_owned();
        let config = Config::parse_from(["x", "--content", &arg("content"), "--web", &arg("web")]).unwrap();
        let ctx = QuicContext::new(
            Arc::new(config),
            Arc::new(CertStore::generate(&dir.join("tls"), &[]).unwrap()),
            Arc::new(ContentStore::open(&dir.join("content"), 16 << 20).unwrap()),
            Arc::new(Metrics::default()),
            Some(Arc::new(crate::webfiles::WebFiles::open(&dir.join("web")).unwrap())),
        )
        .unwrap();
        Self { dir, ctx, segment, big, index, asset }
    }
}

impl Drop for Fixture {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// What a client received.
#[derive(Debug, Default)]
struct Answer {
    status: u16,
    headers: HashMap<String, String>,
    body: Vec<u8>,
}

enum Body {
    Exact(Vec<u8>),
    Contains(&'static str),
}

/// One request and what its answer must be: status, these header fields exactly, and the body.
struct Case {
    method: &'static str,
    target: &'static str,
    range: Option<String>,
    /// The `If-None-Match` header, when the request is conditional.
    if_none_match: Option<String>,
    status: u16,
    headers: Vec<(&'static str, String)>,
    body: Body,
}

fn case(method: &'static str, target: &'static str, range: Option<&str>, status: u16, headers: &[(&'static str, &str)], body: Body) -> Case {
    Case {
        method,
        target,
        range: range.map(str::to_owned),
        if_none_match: None,
        status,
        headers: headers.iter().map(|(n, v)| (*n, v.to_string())).collect(),
        body,
    }
}

fn cases(fixture: &Fixture) -> Vec<Case> {
    let (seg, n) = (&fixture.segment, fixture.segment.len());
    let len = |n: usize| n.to_string();
    let (seg_tag, index_tag) = (etag_of(fixture, "content/scene/seg.v3c"), etag_of(fixture, "web/index.html"));
    let object = [("content-type", "application/octet-stream"), ("cache-control", "public, max-age=3600"), ("accept-ranges", "bytes")];
    vec![
        case("GET", "/content/scene/seg.v3c", None, 200, &[object[0], object[1], object[2], ("content-length", &len(n))], Body::Exact(seg.clone())),
        case("GET", "/content/scene/big.bin", None, 200, &[("content-length", &len(BIG_FILE_BYTES))], Body::Exact(fixture.big.clone())),
        case("GET", "/content/scene/manifest.mpd?t=1", None, 200, &[("content-type", "application/dash+xml")], Body::Exact(b"<MPD/>".to_vec())),
        case("HEAD", "/content/scene/seg.v3c", None, 200, &[object[0], ("content-length", &len(n))], Body::Exact(Vec::new())),
        case(
            "GET",
            "/content/scene/seg.v3c",
            Some("bytes=100-199"),
            206,
            &[("content-range", &format!("bytes 100-199/{n}")), ("content-length", "100")],
            Body::Exact(seg[100..200].to_vec()),
        ),
        case(
            "GET",
            "/content/scene/seg.v3c",
            Some("bytes=-10"),
            206,
            &[("content-range", &format!("bytes {}-{}/{n}", n - 10, n - 1))],
            Body::Exact(seg[n - 10..].to_vec()),
        ),
        case("GET", "/content/scene/seg.v3c", Some("bytes=0-1,5-6"), 200, &[("content-length", &len(n))], Body::Exact(seg.clone())),
        case(
            "GET",
            "/content/scene/seg.v3c",
            Some(&format!("bytes={n}-")),
            416,
            &[("content-range", &format!("bytes */{n}"))],
            Body::Contains("range not satisfiable"),
        ),
        case("GET", "/content/scene/missing.v3c", None, 404, &[], Body::Contains("no such object")),
        case("GET", "/content/../SECRET.txt", None, 400, &[], Body::Contains("invalid")),
        case("GET", "/content/scene/../../SECRET.txt", None, 400, &[], Body::Contains("invalid")),
        case("GET", "/content/%2e%2e/SECRET.txt", None, 400, &[], Body::Contains("invalid")),
        case("GET", "/content/scene/..%2f..%2fSECRET.txt", None, 400, &[], Body::Contains("invalid")),
        case("GET", "/../SECRET.txt", None, 400, &[], Body::Contains("invalid")),
        case("GET", "/%2e%2e/SECRET.txt", None, 400, &[], Body::Contains("invalid")),
        case("GET", "/", None, 200, &[("content-type", "text/html; charset=utf-8"), ("cache-control", "no-cache")], Body::Exact(fixture.index.clone())),
        case("GET", "/assets/app-1234.js", None, 200, &[("cache-control", "public, max-age=31536000, immutable")], Body::Exact(fixture.asset.clone())),
        case("GET", "/nothing-here.html", None, 404, &[], Body::Contains("no such object")),
        case("GET", "/healthz", None, 200, &[("content-type", "text/plain; charset=utf-8")], Body::Exact(b"ok\n".to_vec())),
        case(
            "GET",
            "/config.json",
            None,
            200,
            &[("content-type", "application/json"), ("cache-control", "no-store")],
            Body::Contains("\"webtransportUrl\":\"https://localhost:"),
        ),
        case("GET", "/cert-hash", None, 200, &[("content-type", "application/json")], Body::Contains("\"algorithm\":\"sha-256\"")),
        case("DELETE", "/healthz", None, 405, &[("allow", "GET, HEAD")], Body::Contains("only GET and HEAD")),
        // Conditional requests (web.rs's one definition): the current ETag gets 304 and no body,
        // another one the file.
        Case { if_none_match: Some(seg_tag.clone()), ..case("GET", "/content/scene/seg.v3c", None, 304, &[("etag", &seg_tag)], Body::Exact(Vec::new())) },
        Case { if_none_match: Some(index_tag.clone()), ..case("GET", "/", None, 304, &[("etag", &index_tag)], Body::Exact(Vec::new())) },
        Case {
            if_none_match: Some("\"other\"".into()),
            ..case("GET", "/content/scene/seg.v3c", None, 200, &[("content-length", &len(n))], Body::Exact(seg.clone()))
        },
    ]
}

/// The ETag of the fixture's file `path` as the origin computes it.
fn etag_of(fixture: &Fixture, path: &str) -> String {
    crate::filecache::Version::of(&std::fs::metadata(fixture.dir.join(path)).unwrap()).etag()
}

/// Checks `answer` against `case`; `via` names the transport in failure messages.
fn check(case: &Case, answer: &Answer, via: &str) {
    let what = format!("{via}: {} {} (range {:?}, if-none-match {:?})", case.method, case.target, case.range, case.if_none_match);
    assert_eq!(answer.status, case.status, "{what}: status; body {:?}", String::from_utf8_lossy(&answer.body[..answer.body.len().min(200)]));
    for (name, value) in &case.headers {
        assert_eq!(answer.headers.get(*name), Some(value), "{what}: header {name}");
    }
    assert_eq!(answer.headers.get("x-content-type-options").map(String::as_str), Some("nosniff"), "{what}");
    match &case.body {
        Body::Exact(bytes) => assert!(answer.body == *bytes, "{what}: {} bytes, expected {}", answer.body.len(), bytes.len()),
        Body::Contains(text) => assert!(String::from_utf8_lossy(&answer.body).contains(text), "{what}: body {:?}", String::from_utf8_lossy(&answer.body)),
    }
    assert!(!answer.body.windows(6).any(|w| w == b"SECRET"), "{what}: the file outside the roots leaked");
}

/// quiche's HTTP/3 client against the origin's QUIC side, over quiche's test pipe.
struct H3 {
    pipe: Pipe,
    client: quiche::h3::Connection,
    origin: webtransport::Connection,
}

impl H3 {
    fn connect(fixture: &Fixture) -> Self {
        let mut server = quiche_config(&fixture.ctx).unwrap();
        let mut client = quiche::Config::new(quiche::PROTOCOL_VERSION).unwrap();
        client.verify_peer(false);
        client.set_application_protos(&[b"h3"]).unwrap();
        client.set_initial_max_data(16 << 20);
        client.set_initial_max_stream_data_bidi_local(CLIENT_STREAM_WINDOW);
        client.set_initial_max_stream_data_uni(1 << 20);
        client.set_initial_max_streams_bidi(100);
        client.set_initial_max_streams_uni(100);
        // The origin's SETTINGS enable HTTP/3 datagrams, which quiche's client accepts only
        // with the transport parameter.
        client.enable_dgram(true, 100, 100);
        let mut pipe = Pipe::with_client_and_server_config(&mut client, &mut server).unwrap();
        pipe.handshake().unwrap();
        let client = quiche::h3::Connection::with_transport(&mut pipe.client, &quiche::h3::Config::new().unwrap()).unwrap();
        Self { pipe, client, origin: webtransport::Connection::new() }
    }

    /// Sends a request (FIN with its HEADERS); returns its stream.
    fn send(&mut self, method: &str, target: &str, range: Option<&str>) -> u64 {
        self.send_conditional(method, target, range, None)
    }

    /// The same with an `If-None-Match` header when given.
    fn send_conditional(&mut self, method: &str, target: &str, range: Option<&str>, if_none_match: Option<&str>) -> u64 {
        let mut headers = vec![
            Header::new(b":method", method.as_bytes()),
            Header::new(b":scheme", b"https"),
            Header::new(b":authority", b"localhost:4433"),
            Header::new(b":path", target.as_bytes()),
        ];
        if let Some(range) = range {
            headers.push(Header::new(b"range", range.as_bytes()));
        }
        if let Some(tag) = if_none_match {
            headers.push(Header::new(b"if-none-match", tag.as_bytes()));
        }
        self.client.send_request(&mut self.pipe.client, &headers, true).unwrap()
    }

    /// One round: packets both ways, then the origin runs.
    fn turn(&mut self, ctx: &QuicContext) {
        self.pipe.advance().unwrap();
        self.origin.process(&mut self.pipe.server, ctx, Instant::now());
        assert!(self.origin.take_close().is_none(), "the origin closed the connection");
        self.pipe.advance().unwrap();
    }

    /// Runs rounds until every stream in `streams` has finished (at most `rounds`, not counting
    /// those spent waiting for the loader's workers, 30 s at most), reading bodies as they arrive
    /// unless `read_bodies` is false.
    fn collect(&mut self, ctx: &QuicContext, streams: &[u64], rounds: usize, read_bodies: bool) -> HashMap<u64, Answer> {
        let mut answers: HashMap<u64, Answer> = HashMap::new();
        let mut finished = 0;
        let mut buf = vec![0u8; 65_536];
        let (mut round, deadline) = (0, Instant::now() + Duration::from_secs(30));
        while round < rounds {
            self.turn(ctx);
            if self.origin.waits_for_loader() {
                assert!(Instant::now() < deadline, "the loader never answered");
                std::thread::sleep(Duration::from_micros(200));
            } else {
                round += 1;
            }
            loop {
                match self.client.poll(&mut self.pipe.client) {
                    Ok((id, Event::Headers { list, .. })) => {
                        let answer = answers.entry(id).or_default();
                        for h in list {
                            let (name, value) = (String::from_utf8_lossy(h.name()).into_owned(), String::from_utf8_lossy(h.value()).into_owned());
                            if name == ":status" {
                                answer.status = value.parse().unwrap();
                            } else {
                                answer.headers.insert(name, value);
                            }
                        }
                    }
                    Ok((id, Event::Data)) if read_bodies => {
                        while let Ok(n) = self.client.recv_body(&mut self.pipe.client, id, &mut buf) {
                            answers.entry(id).or_default().body.extend_from_slice(&buf[..n]);
                        }
                    }
                    Ok((_, Event::Finished)) => finished += 1,
                    Ok((id, Event::Reset(code))) => panic!("stream {id} reset with {code}"),
                    Ok(_) => {}
                    Err(quiche::h3::Error::Done) => break,
                    Err(e) => panic!("HTTP/3 client: {e}"),
                }
            }
            if finished == streams.len() {
                return answers;
            }
        }
        answers
    }
}

#[test]
fn http3_answers_every_case_as_the_table_says() {
    let fixture = Fixture::new();
    let mut h3 = H3::connect(&fixture);
    let cases = cases(&fixture);
    // All at once on one connection, as a browser loading a page asks.
    let streams: Vec<u64> = cases.iter().map(|c| h3.send_conditional(c.method, c.target, c.range.as_deref(), c.if_none_match.as_deref())).collect();
    let mut answers = h3.collect(&fixture.ctx, &streams, 2000, true);
    for (case, stream) in cases.iter().zip(&streams) {
        let answer = answers.remove(stream).unwrap_or_default();
        check(case, &answer, "HTTP/3");
        assert_eq!(answer.headers.get("alt-svc"), None, "HTTP/3 needs no Alt-Svc");
    }
    assert_eq!(fixture.ctx.metrics.http3_requests_total.load(Ordering::Relaxed), cases.len() as u64);
    assert_eq!(h3.origin.http3_backlog(), (0, 0), "nothing left waiting once all is delivered");
    assert!(BIG_FILE_BYTES as u64 > 10 * CLIENT_STREAM_WINDOW, "the large body must span many stream windows");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn https_answers_every_case_as_the_table_says() {
    let fixture = Fixture::new();
    let ctx = Arc::new(crate::https::HttpContext {
        config: Arc::clone(&fixture.ctx.config),
        certs: Arc::clone(&fixture.ctx.certs),
        content: Arc::clone(&fixture.ctx.content),
        metrics: Arc::clone(&fixture.ctx.metrics),
        quic_port: 4433,
        web: fixture.ctx.web.clone(),
        shutdown: Arc::new(crate::shutdown::Shutdown::default()),
    });
    let (addr, serve) = crate::https::bind_https(ctx, "127.0.0.1:0".parse().unwrap()).await.unwrap();
    let server = tokio::spawn(serve);

    // Trust exactly the origin's generated certificate; speak HTTP/2.
    let pem = std::fs::read(&fixture.ctx.certs.current().cert_pem).unwrap();
    let mut roots = rustls::RootCertStore::empty();
    for cert in rustls_pemfile::certs(&mut &pem[..]) {
        roots.add(cert.unwrap()).unwrap();
    }
    let mut tls = rustls::ClientConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_root_certificates(roots)
        .with_no_client_auth();
    tls.alpn_protocols = vec![b"h2".to_vec()];
    let tcp = tokio::net::TcpStream::connect(addr).await.unwrap();
    let name = rustls::pki_types::ServerName::try_from("localhost").unwrap();
    let stream = tokio_rustls::TlsConnector::from(Arc::new(tls)).connect(name, tcp).await.unwrap();
    let (client, connection) = h2::client::handshake(stream).await.unwrap();
    tokio::spawn(connection);

    for case in cases(&fixture) {
        let mut request = hyper::Request::builder().method(case.method).uri(format!("https://localhost:{}{}", addr.port(), case.target));
        if let Some(range) = &case.range {
            request = request.header("range", range.as_str());
        }
        if let Some(tag) = &case.if_none_match {
            request = request.header("if-none-match", tag.as_str());
        }
        let mut client = client.clone().ready().await.unwrap();
        let (response, _) = client.send_request(request.body(()).unwrap(), true).unwrap();
        let (parts, mut body) = response.await.unwrap().into_parts();
        let mut answer = Answer {
            status: parts.status.as_u16(),
            headers: parts.headers.iter().map(|(n, v)| (n.as_str().to_owned(), v.to_str().unwrap().to_owned())).collect(),
            body: Vec::new(),
        };
        while let Some(chunk) = body.data().await {
            let chunk = chunk.unwrap();
            let _ = body.flow_control().release_capacity(chunk.len());
            answer.body.extend_from_slice(&chunk);
        }
        check(&case, &answer, "HTTPS (HTTP/2)");
        assert_eq!(answer.headers.get("alt-svc").map(String::as_str), Some("h3=\":4433\"; ma=86400"), "HTTPS advertises HTTP/3");
    }
    server.abort();
}

#[test]
fn a_client_that_stops_a_response_frees_what_waits_for_it() {
    let fixture = Fixture::new();
    let mut h3 = H3::connect(&fixture);
    let stream = h3.send("GET", "/content/scene/big.bin", None);
    h3.collect(&fixture.ctx, &[stream], 5, false);
    let (waiting, bytes) = h3.origin.http3_backlog();
    assert_eq!(waiting, 1, "the body waits for a client that does not read");
    assert!(bytes > BIG_FILE_BYTES / 2, "most of it still queued ({bytes})");
    h3.pipe.client.stream_shutdown(stream, quiche::Shutdown::Read, 0x10c).unwrap();
    h3.collect(&fixture.ctx, &[], 5, false);
    assert_eq!(h3.origin.http3_backlog(), (0, 0));
}

#[test]
fn a_connection_that_reads_nothing_holds_at_most_its_budget() {
    let fixture = Fixture::new();
    let mut h3 = H3::connect(&fixture);
    let asked = CONNECTION_QUEUE_BYTES / BIG_FILE_BYTES + 3;
    let streams: Vec<u64> = (0..asked).map(|_| h3.send("GET", "/content/scene/big.bin", None)).collect();
    // Every answer's HEADERS arrive (the streams are answered one after the other, each up to
    // its window), while no body is read.
    let mut answers = HashMap::new();
    for _ in 0..500 {
        answers.extend(h3.collect(&fixture.ctx, &streams, 1, false));
        let (_, queued) = h3.origin.http3_backlog();
        assert!(queued <= CONNECTION_QUEUE_BYTES, "{queued} bytes queued");
        if answers.len() == streams.len() {
            break;
        }
    }
    let statuses: Vec<u16> = streams.iter().map(|s| answers.get(s).map_or(0, |a| a.status)).collect();
    let served = statuses.iter().filter(|s| **s == 200).count();
    assert!(served >= CONNECTION_QUEUE_BYTES / BIG_FILE_BYTES && served < asked - 1, "{statuses:?}");
    // Answers are computed by the loader's workers and start in the order they finish: which
    // ones found the queue full varies, not how many were served.
    assert!(statuses.iter().all(|s| *s == 200 || *s == 503), "the rest are told to come back: {statuses:?}");
    // Still usable: a small request on the same connection is answered.
    let health = h3.send("GET", "/healthz", None);
    assert_eq!(h3.collect(&fixture.ctx, &[health], 10, true)[&health].body, b"ok\n");
}

#[test]
fn priorities_follow_rfc_9218() {
    assert_eq!(super::priority(""), (3, false));
    assert_eq!(super::priority("u=0"), (0, false));
    assert_eq!(super::priority("u=1, i"), (1, true));
    assert_eq!(super::priority("i=?1, u=7"), (7, true));
    assert_eq!(super::priority("u=9, i=?0"), (3, false));
}
