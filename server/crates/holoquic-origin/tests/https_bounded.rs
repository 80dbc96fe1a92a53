//! The HTTPS listener under abuse, against the real origin binary on 127.0.0.1: slow and idle
//! clients are timed out without stopping real ones, the connection cap holds and frees up,
//! accepting backs off when file descriptors run out, and HTTP/2 limits are what the flags say.

mod support;

use std::time::{Duration, Instant};

use support::https::{client_hello, closed_within, h2_get, Site};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// 300 connections that never finish: idle TCP, half a ClientHello, half an HTTP/1.1 request
/// head, and HTTP/2 with no request. A browser-like client still gets its answer at once, and each
/// of the 300 is closed once its own timeout has passed (2 s for handshakes and request heads,
/// well before the 6-s idle timeout that would close them too).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slow_and_idle_clients_do_not_stop_a_real_one_and_are_timed_out() {
    let origin = Site::start(&["--https-handshake-timeout", "2", "--https-header-timeout", "2", "--https-idle-timeout", "6"]);
    let hello = client_hello();
    let mut idle_tcp = Vec::new();
    let mut half_hello = Vec::new();
    for _ in 0..100 {
        idle_tcp.push(TcpStream::connect(origin.https).await.unwrap());
        let mut tcp = TcpStream::connect(origin.https).await.unwrap();
        tcp.write_all(&hello[..hello.len() / 2]).await.unwrap();
        half_hello.push(tcp);
    }
    let mut half_head = Vec::new();
    let mut idle_h2 = Vec::new();
    for _ in 0..50 {
        let mut tls = origin.tls(b"http/1.1").await.unwrap();
        tls.write_all(b"GET /content/demo/manifest.mpd HTTP/1.1\r\nHost: localhost\r\nX-Slow: ").await.unwrap();
        tls.flush().await.unwrap();
        half_head.push(tls);
        let mut tls = origin.tls(b"h2").await.unwrap();
        tls.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00").await.unwrap();
        tls.flush().await.unwrap();
        idle_h2.push(tls);
    }
    let opened = Instant::now();

    let answer = tokio::time::timeout(Duration::from_secs(2), origin.fetch("/content/demo/manifest.mpd", &[])).await;
    let answer = answer.expect("the real client is answered within 2 s").unwrap();
    assert_eq!((answer.status, &answer.body[..]), (200, &b"<MPD generation=\"1\"/>"[..]));
    assert!(origin.metric("https_connections_active").await >= 300);

    // Handshake and header timeouts are 2 s: closed by 2 s + a margin.
    let left = |deadline: Instant| deadline.saturating_duration_since(Instant::now());
    let deadline = opened + Duration::from_millis(4500);
    for tcp in idle_tcp.iter_mut().chain(half_hello.iter_mut()) {
        assert!(closed_within(tcp, left(deadline)).await, "a TCP connection stalled in the TLS handshake was not closed");
    }
    for tls in half_head.iter_mut() {
        assert!(closed_within(tls, left(deadline)).await, "a half-sent request head was not timed out");
    }
    // Idle 6 s, after which an HTTP/2 peer that does not acknowledge the GOAWAY's PING has 5 s
    // more: closed by 11 s + a margin.
    let deadline = opened + Duration::from_secs(13);
    for tls in idle_h2.iter_mut() {
        assert!(closed_within(tls, left(deadline)).await, "an idle HTTP/2 connection was not closed");
    }
    assert!(origin.metric("https_timeouts_total").await >= 300);
    // None is left (the metric is read on the admin listener, which is not counted).
    assert_eq!(origin.metric("https_connections_active").await, 0);
}

/// Beyond `--https-max-connections` a new connection is reset at once; when one closes, the
/// next client gets its place.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_connection_cap_holds_and_frees_up() {
    let origin = Site::start(&["--https-max-connections", "4", "--https-handshake-timeout", "30"]);
    let mut held = Vec::new();
    for _ in 0..4 {
        held.push(TcpStream::connect(origin.https).await.unwrap());
    }
    // Let the origin accept them (the kernel completed the TCP handshakes already).
    tokio::time::sleep(Duration::from_millis(300)).await;
    // The reset may come so soon that `connect` reports it.
    if let Ok(mut fifth) = TcpStream::connect(origin.https).await {
        assert!(closed_within(&mut fifth, Duration::from_secs(1)).await, "the fifth connection was not closed at once");
    }
    assert!(origin.fetch("/healthz", &[]).await.is_err(), "a real client beyond the cap is refused too");
    assert_eq!(origin.metric("https_connections_refused_total").await, 2);

    drop(held.pop());
    tokio::time::sleep(Duration::from_millis(300)).await;
    let answer = origin.fetch("/healthz", &[]).await.expect("a place freed up");
    assert_eq!(answer.status, 200);
    assert!(closed_within(&mut held[0], Duration::from_millis(100)).await.eq(&false), "the held ones stay open");
}

/// With no file descriptor left, `accept` fails while connections wait: the origin backs off
/// instead of spinning on it, and serves again once descriptors are free.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accept_backs_off_when_file_descriptors_run_out() {
    let origin = Site::start_limited(&["--https-handshake-timeout", "60"], Some(48));
    let mut clients = Vec::new();
    for _ in 0..80 {
        clients.push(TcpStream::connect(origin.https).await.unwrap());
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    let cpu_before = origin.cpu_seconds();
    tokio::time::sleep(Duration::from_secs(2)).await;
    let cpu = origin.cpu_seconds() - cpu_before;
    eprintln!("origin CPU while out of file descriptors: {cpu:.2} s in 2 s");
    assert!(cpu < 0.3, "the origin used {cpu:.2} s of CPU in 2 s while out of file descriptors");

    drop(clients);
    let start = Instant::now();
    let answer = loop {
        match origin.fetch("/healthz", &[]).await {
            Ok(answer) => break answer,
            Err(_) if start.elapsed() < Duration::from_secs(5) => tokio::time::sleep(Duration::from_millis(100)).await,
            Err(e) => panic!("not serving 5 s after descriptors were freed: {e}; stderr:\n{}", origin.origin.stderr.lock().unwrap()),
        }
    };
    assert_eq!(answer.status, 200);
    // Read now: /metrics is served on a TCP listener too, so not while descriptors ran out.
    assert!(origin.metric("https_accept_errors_total").await > 0, "accept never failed: the test proves nothing");
}

/// HTTP/2 settings and keepalive: the stream limit is announced, a peer that stops answering
/// PINGs is dropped after interval + timeout, and an idle real client is closed (GOAWAY).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn http2_streams_keepalive_and_idle_close() {
    let origin =
        Site::start(&["--https-max-streams", "7", "--https-keepalive-interval", "0.5", "--https-keepalive-timeout", "0.5", "--https-idle-timeout", "1.5"]);

    let tls = origin.tls(b"h2").await.unwrap();
    let (client, mut connection) = h2::client::handshake(tls).await.unwrap();
    let uri = format!("https://localhost:{}/healthz", origin.https.port());
    // A client connection ends by itself once no handle to it is left: keep one.
    let _keep = client.clone();
    let answer = tokio::select! {
        answer = h2_get(client, &uri, &[]) => answer.unwrap(),
        _ = &mut connection => panic!("the connection ended before the answer"),
    };
    assert_eq!(answer.status, 200);
    assert_eq!(connection.max_concurrent_send_streams(), 7);
    let idle_since = Instant::now();
    let ended = tokio::time::timeout(Duration::from_secs(4), connection).await;
    assert!(ended.is_ok(), "an idle HTTP/2 connection stayed open");
    let idle = idle_since.elapsed();
    assert!(idle >= Duration::from_millis(1200), "closed after {idle:?}, before the idle timeout");

    // A peer that sends the preface and then reads nothing more of what it gets, never
    // acknowledging a PING: gone well before the idle timeout would act.
    let origin = Site::start(&["--https-keepalive-interval", "0.5", "--https-keepalive-timeout", "0.5", "--https-idle-timeout", "30"]);
    let mut tls = origin.tls(b"h2").await.unwrap();
    tls.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00").await.unwrap();
    tls.flush().await.unwrap();
    assert!(closed_within(&mut tls, Duration::from_secs(5)).await, "a peer that never answers PINGs was kept");
}

/// HTTPS answers while 1 000 idle connections are held (docs/benchmarks.md, "HTTPS under idle
/// connections"): `cargo test --release -p holoquic-origin --test https_bounded idle_connections_held
/// -- --ignored --nocapture`.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a check"]
async fn idle_connections_held() {
    // This process holds 1 000 sockets too.
    let mut limit = libc::rlimit { rlim_cur: 0, rlim_max: 0 };
    // SAFETY: getrlimit/setrlimit only read and write the struct passed.
    unsafe {
        libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit);
        limit.rlim_cur = limit.rlim_max;
        libc::setrlimit(libc::RLIMIT_NOFILE, &limit);
    }
    let origin = Site::start(&["--https-idle-timeout", "600", "--https-handshake-timeout", "600"]);
    let measure = |label: &'static str| {
        let origin = &origin;
        async move {
            let mut times = Vec::new();
            for _ in 0..200 {
                let start = Instant::now();
                let answer = origin.fetch("/content/demo/manifest.mpd", &[]).await.unwrap();
                assert_eq!(answer.status, 200);
                times.push(start.elapsed());
            }
            times.sort();
            println!("{label}: new connection + TLS + h2 GET, p50 {:?}, p99 {:?}, max {:?}", times[100], times[198], times[199]);
        }
    };
    measure("no idle connections").await;
    let (mut bare, mut idle_h2) = (Vec::new(), Vec::new());
    for _ in 0..500 {
        bare.push(TcpStream::connect(origin.https).await.unwrap());
        let mut tls = origin.tls(b"h2").await.unwrap();
        tls.write_all(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n\x00\x00\x00\x04\x00\x00\x00\x00\x00").await.unwrap();
        idle_h2.push(tls);
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    println!("held: {} connections open at the origin", origin.metric("https_connections_active").await);
    let cpu = origin.cpu_seconds();
    measure("1000 idle connections held (500 bare TCP, 500 idle HTTP/2)").await;
    println!("origin CPU for the 200 fetches: {:.2} s", origin.cpu_seconds() - cpu);
    let rss = std::fs::read_to_string(format!("/proc/{}/status", origin.pid())).unwrap();
    println!("origin {}", rss.lines().find(|l| l.starts_with("VmRSS")).unwrap());
    drop((bare, idle_h2));
}
