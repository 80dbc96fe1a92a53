//! The graceful drain seen from HTTPS, against the real origin binary, for both protocols a
//! browser or a tool may speak there. A response under way when SIGTERM arrives gets every byte,
//! and then its connection ends: HTTP/2 is told at once (GOAWAY); HTTP/1.1, whose response head
//! has left already, has its keep-alive ended (the origin closes the connection after the
//! response), and an idle keep-alive connection is closed at once. New TCP connections are
//! refused meanwhile; the process exits 0, all within the grace period. The clients read slowly
//! (HTTP/2 flow control, 64 KiB windows; a 64 KiB TCP receive buffer for HTTP/1.1), so the
//! response outlasts the signal by several seconds, as a large segment on a slow link does.

mod support;

use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::BodyExt;
use hyper_util::rt::TokioIo;
use support::https::Site;

const OBJECT_BYTES: usize = 8_000_000;
/// Read before the signal; the rest is read at [`READ_RATE`], about 6 s.
const READ_BEFORE_SIGNAL: usize = 1_000_000;
/// Bytes per second the client reads once the drain has begun.
const READ_RATE: f64 = 1_200_000.0;
const GRACE_SECONDS: u64 = 12;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_response_under_way_finishes_during_a_drain_then_the_connection_closes() {
    let (mut site, object) = site_with_a_large_object();

    let tls = site.tls(b"h2").await.unwrap();
    let (client, connection) =
        h2::client::Builder::new().initial_window_size(65_535).initial_connection_window_size(65_535).handshake::<_, Bytes>(tls).await.unwrap();
    let connection = tokio::spawn(connection);
    let mut client = client.ready().await.unwrap();
    let uri = format!("https://localhost:{}/content/demo/big.bin", site.https.port());
    let (response, _) = client.send_request(http::Request::get(uri).body(()).unwrap(), true).unwrap();
    let response = tokio::time::timeout(Duration::from_secs(10), response).await.expect("a response head").unwrap();
    assert_eq!(response.status(), 200);
    let mut body = response.into_body();

    // The first megabyte, then the signal; the rest is read slowly by a task of its own.
    let mut received = Vec::with_capacity(OBJECT_BYTES);
    while received.len() < READ_BEFORE_SIGNAL {
        let chunk = tokio::time::timeout(Duration::from_secs(10), body.data()).await.expect("body bytes").expect("more body").unwrap();
        let _ = body.flow_control().release_capacity(chunk.len());
        received.extend_from_slice(&chunk);
    }
    site.origin.signal(libc::SIGTERM);
    let signalled = Instant::now();
    let reader = tokio::spawn(async move {
        let paced_from = (Instant::now(), received.len());
        while let Some(chunk) = body.data().await {
            let chunk = chunk.map_err(|e| format!("the response was cut after {} bytes: {e}", received.len()))?;
            received.extend_from_slice(&chunk);
            let due = paced_from.0 + Duration::from_secs_f64((received.len() - paced_from.1) as f64 / READ_RATE);
            tokio::time::sleep_until(due.into()).await;
            let _ = body.flow_control().release_capacity(chunk.len());
        }
        Ok::<_, String>(received)
    });

    // Told at once: a GOAWAY (the client may open no new stream), while the response goes on.
    let goaway = loop {
        match client.clone().ready().await {
            Err(e) => break e,
            Ok(_) => {
                assert!(signalled.elapsed() < Duration::from_secs(3), "no GOAWAY within 3 s of SIGTERM");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    };
    assert!(goaway.is_go_away() && goaway.is_remote() && goaway.reason() == Some(h2::Reason::NO_ERROR), "{goaway:?}");
    assert!(!reader.is_finished(), "the response was still under way when the GOAWAY came");
    drop(client);
    new_connections_refused(&site, signalled).await;

    // Every byte of the response, then the connection's end, then the process's, within the grace.
    let grace = Duration::from_secs(GRACE_SECONDS);
    let received = tokio::time::timeout(grace, reader).await.expect("the response finished within the grace").unwrap().unwrap();
    whole_and_slow(&received, &object, signalled);
    let left = grace.saturating_sub(signalled.elapsed());
    let closed = tokio::time::timeout(left, connection).await.expect("the connection closed within the grace").unwrap();
    assert!(closed.is_ok(), "the connection ended with an error: {closed:?}");
    exits_0_within(&mut site, signalled + grace).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http1_response_under_way_finishes_during_a_drain_then_keep_alive_ends() {
    let (mut site, object) = site_with_a_large_object();

    // A keep-alive connection that has had its answer and sits idle when the drain begins.
    let (mut idle, idle_connection) = http1(&site).await;
    let manifest = idle.send_request(get(&site, "/content/demo/manifest.mpd")).await.unwrap();
    assert_eq!(manifest.status(), 200);
    assert!(manifest.headers().get(http::header::CONNECTION).is_none(), "keep-alive before the drain: {:?}", manifest.headers());
    manifest.into_body().collect().await.unwrap();

    let (mut download, connection) = http1(&site).await;
    let response =
        tokio::time::timeout(Duration::from_secs(10), download.send_request(get(&site, "/content/demo/big.bin"))).await.expect("a response head").unwrap();
    assert_eq!(response.status(), 200);
    assert_eq!(response.headers()[http::header::CONTENT_LENGTH], OBJECT_BYTES.to_string().as_str());
    let mut body = response.into_body();

    // The first megabyte, then the signal; the rest is read slowly by a task of its own.
    let mut received = Vec::with_capacity(OBJECT_BYTES);
    while received.len() < READ_BEFORE_SIGNAL {
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame()).await.expect("body bytes").expect("more body").unwrap();
        received.extend_from_slice(frame.data_ref().expect("a data frame"));
    }
    site.origin.signal(libc::SIGTERM);
    let signalled = Instant::now();
    let reader = tokio::spawn(async move {
        let paced_from = (Instant::now(), received.len());
        while let Some(frame) = body.frame().await {
            let frame = frame.map_err(|e| format!("the response was cut after {} bytes: {e}", received.len()))?;
            received.extend_from_slice(frame.data_ref().map_or(&[][..], |d| &d[..]));
            let due = paced_from.0 + Duration::from_secs_f64((received.len() - paced_from.1) as f64 / READ_RATE);
            tokio::time::sleep_until(due.into()).await;
        }
        Ok::<_, String>(received)
    });

    // The idle keep-alive connection is closed at once, cleanly; the download goes on.
    let idle_closed = tokio::time::timeout(Duration::from_secs(3), idle_connection).await.expect("the idle connection closed within 3 s of SIGTERM");
    assert!(idle_closed.unwrap().is_ok(), "the idle connection ended with an error");
    assert!(idle.ready().await.is_err(), "the idle connection takes no new request");
    assert!(!reader.is_finished(), "the response was still under way when the idle connection closed");
    new_connections_refused(&site, signalled).await;

    // Every byte of the response; then the origin ends the connection (no keep-alive after it),
    // cleanly; then the process ends, within the grace.
    let grace = Duration::from_secs(GRACE_SECONDS);
    let received = tokio::time::timeout(grace, reader).await.expect("the response finished within the grace").unwrap().unwrap();
    whole_and_slow(&received, &object, signalled);
    let closed = tokio::time::timeout(Duration::from_secs(2), connection).await.expect("the origin closed the connection within 2 s of the response").unwrap();
    assert!(closed.is_ok(), "the connection ended with an error: {closed:?}");
    assert!(download.ready().await.is_err(), "the connection takes no request after the response");
    exits_0_within(&mut site, signalled + grace).await;
}

/// The origin binary with a drain grace of [`GRACE_SECONDS`] and an object of [`OBJECT_BYTES`]
/// (a pattern that shows where bytes went missing or out of order) in its content.
fn site_with_a_large_object() -> (Site, Vec<u8>) {
    let grace = GRACE_SECONDS.to_string();
    let site = Site::start(&["--drain-grace", &grace]);
    let object: Vec<u8> = (0..OBJECT_BYTES).map(|i| (i * 7 + i / 4099) as u8).collect();
    site.write("content/demo/big.bin", &object);
    (site, object)
}

/// The response carried every byte of the object, and the slow read outlasted the signal by
/// several seconds (else the test would not have tested a drain).
fn whole_and_slow(received: &[u8], object: &[u8], signalled: Instant) {
    let finished = signalled.elapsed();
    assert!(received == object, "the response's bytes differ from the object's ({} of {OBJECT_BYTES} bytes)", received.len());
    assert!(finished > Duration::from_secs(4), "the slow read took {finished:?}: too fast to outlast the signal by much");
}

/// An HTTP/1.1 connection (ALPN `http/1.1`) to the origin over a TCP socket with a 64 KiB
/// receive buffer, so that what the client has not read holds the origin back.
async fn http1(site: &Site) -> (hyper::client::conn::http1::SendRequest<http_body_util::Empty<Bytes>>, tokio::task::JoinHandle<hyper::Result<()>>) {
    let socket = tokio::net::TcpSocket::new_v4().unwrap();
    socket.set_recv_buffer_size(64 * 1024).unwrap();
    let tcp = socket.connect(site.https).await.unwrap();
    let tls = site.tls_on(tcp, b"http/1.1").await.unwrap();
    assert_eq!(tls.get_ref().1.alpn_protocol(), Some(&b"http/1.1"[..]));
    let (sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(tls)).await.unwrap();
    (sender, tokio::spawn(connection))
}

fn get(site: &Site, path: &str) -> http::Request<http_body_util::Empty<Bytes>> {
    http::Request::get(path).header(http::header::HOST, format!("localhost:{}", site.https.port())).body(http_body_util::Empty::new()).unwrap()
}

/// New TCP connections are refused (the listener is closed) within 3 s of the signal.
async fn new_connections_refused(site: &Site, signalled: Instant) {
    loop {
        match tokio::net::TcpStream::connect(site.https).await {
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => return,
            other => {
                assert!(signalled.elapsed() < Duration::from_secs(3), "a new TCP connection was still accepted 3 s after SIGTERM: {other:?}");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }
}

/// The origin exits by itself, with 0, before `deadline`.
async fn exits_0_within(site: &mut Site, deadline: Instant) {
    let status = loop {
        if let Some(status) = site.origin.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < deadline, "the origin did not exit within the grace period");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "{status:?}");
}
