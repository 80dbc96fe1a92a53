//! The graceful drain seen from HTTPS, against the real origin binary: an HTTP/2 connection with
//! a response under way when SIGTERM arrives is told at once (GOAWAY), gets every byte of that
//! response, and is then closed; new TCP connections are refused meanwhile; the process exits 0,
//! all within the grace period. The client reads slowly (HTTP/2 flow control, 64 KiB windows),
//! so the response outlasts the signal by several seconds, as a large segment on a slow link does.

mod support;

use std::time::{Duration, Instant};

use bytes::Bytes;
use support::https::Site;

const OBJECT_BYTES: usize = 8_000_000;
/// Read before the signal; the rest is read at [`READ_RATE`], about 6 s.
const READ_BEFORE_SIGNAL: usize = 1_000_000;
/// Bytes per second the client reads once the drain has begun.
const READ_RATE: f64 = 1_200_000.0;
const GRACE_SECONDS: u64 = 12;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_http2_response_under_way_finishes_during_a_drain_then_the_connection_closes() {
    let grace = GRACE_SECONDS.to_string();
    let mut site = Site::start(&["--drain-grace", &grace]);
    let object: Vec<u8> = (0..OBJECT_BYTES).map(|i| (i * 7 + i / 4099) as u8).collect();
    site.write("content/demo/big.bin", &object);

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
    // New TCP connections are refused (the listener is closed).
    loop {
        match tokio::net::TcpStream::connect(site.https).await {
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionRefused => break,
            other => {
                assert!(signalled.elapsed() < Duration::from_secs(3), "a new TCP connection was still accepted 3 s after SIGTERM: {other:?}");
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        }
    }

    // Every byte of the response, then the connection's end, then the process's, within the grace.
    let grace = Duration::from_secs(GRACE_SECONDS);
    let received = tokio::time::timeout(grace, reader).await.expect("the response finished within the grace").unwrap().unwrap();
    let finished = signalled.elapsed();
    assert!(received == object, "the response's bytes differ from the object's ({} of {OBJECT_BYTES} bytes)", received.len());
    assert!(finished > Duration::from_secs(4), "the slow read took {finished:?}: too fast to outlast the signal by much");
    let left = grace.saturating_sub(signalled.elapsed());
    let closed = tokio::time::timeout(left, connection).await.expect("the connection closed within the grace").unwrap();
    assert!(closed.is_ok(), "the connection ended with an error: {closed:?}");
    let status = loop {
        if let Some(status) = site.origin.child.try_wait().unwrap() {
            break status;
        }
        assert!(signalled.elapsed() < grace, "the origin did not exit within the grace period");
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(status.success(), "{status:?}");
}
