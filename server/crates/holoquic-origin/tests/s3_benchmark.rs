//! Measurements of the bucket backend (docs/benchmarks.md, "Content in a bucket"), not checks:
//! `cargo test --release -p holoquic-origin --test s3_benchmark -- --ignored --nocapture`.
//! Needs the SeaweedFS binary (scripts/setup.sh) and, for realistic sizes, the e2e suite's packed
//! demo scene.

mod support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use holoquic_origin::content::{ContentSource, ContentStore};
use support::https::Site;
use support::seaweed::{Seaweed, BUCKET};

const PLAYERS: usize = 10;

/// Time to the response head (first byte) of each segment over one HTTP/2 connection: the first
/// request (the origin fetches from the store), at once again (from its cache), and after the
/// revalidation interval (a conditional GET answered 304).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a check"]
async fn first_byte_cold_warm_and_revalidated() {
    let Some(store) = Seaweed::start_or_skip("first_byte_cold_warm_and_revalidated") else { return };
    let (generation, segments) = published_scene(&store);
    let flags = store.flags();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let origin = Site::start_serving(&format!("s3://{BUCKET}/content"), &flags, &store.env());
    let tls = origin.tls(b"h2").await.unwrap();
    let (mut client, connection) = h2::client::handshake(tls).await.unwrap();
    tokio::spawn(connection);
    let (mut cold, mut warm, mut revalidated) = (Vec::new(), Vec::new(), Vec::new());
    for segment in &segments {
        let uri = format!("https://localhost:{}/content/demo/{generation}/{segment}", origin.https.port());
        cold.push(first_byte(&mut client, &uri).await);
        warm.push(first_byte(&mut client, &uri).await);
    }
    tokio::time::sleep(Duration::from_millis(1100)).await;
    for segment in &segments {
        let uri = format!("https://localhost:{}/content/demo/{generation}/{segment}", origin.https.port());
        revalidated.push(first_byte(&mut client, &uri).await);
    }
    println!("{} segments, first byte over HTTPS (HTTP/2, one connection), ms:", segments.len());
    for (name, mut times) in [("cold (store)", cold), ("warm (cache)", warm), ("revalidated (304)", revalidated)] {
        times.sort_by(f64::total_cmp);
        println!("  {name:18} median {:.2}  p95 {:.2}  max {:.2}", times[times.len() / 2], times[times.len() * 95 / 100], times[times.len() - 1]);
    }
}

/// Ten players of one scene, started together, each reading every segment of one quality in
/// order at its own pace (1–20 ms between requests) through one content store over the bucket:
/// how many reads the cache answered.
#[test]
#[ignore = "a measurement, not a check"]
fn cache_hit_ratio_of_ten_players() {
    let Some(store) = Seaweed::start_or_skip("cache_hit_ratio_of_ten_players") else { return };
    let (generation, segments) = published_scene(&store);
    let source = ContentSource::Bucket { bucket: BUCKET.into(), prefix: "content".into() };
    let content = Arc::new(ContentStore::open_source(&source, &store.settings(), 64 << 20).unwrap());
    let start = Instant::now();
    let players: Vec<_> = (0..PLAYERS)
        .map(|player| {
            let (content, segments, generation) = (Arc::clone(&content), segments.clone(), generation.clone());
            std::thread::spawn(move || {
                for (n, segment) in segments.iter().enumerate() {
                    content.get(&format!("/content/demo/{generation}/{segment}")).unwrap();
                    std::thread::sleep(Duration::from_millis(1 + ((player * 7 + n * 3) % 20) as u64));
                }
            })
        })
        .collect();
    for player in players {
        player.join().unwrap();
    }
    let counts = content.metrics().counts();
    println!(
        "{PLAYERS} players × {} segments in {:.2} s: {counts:?}, hit ratio {:.3} (store bodies {} for {} distinct segments)",
        segments.len(),
        start.elapsed().as_secs_f64(),
        counts.hit_ratio(),
        counts.fetched,
        segments.len()
    );
}

/// Publishes the packed demo (or the test scene) and returns its generation and segment paths.
fn published_scene(store: &Seaweed) -> (String, Vec<String>) {
    let packed = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../.holoquic/e2e-content/demo");
    assert!(packed.join("manifest.mpd").is_file(), "the benchmark needs the packed e2e scene (run an e2e test once)");
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_holoquic-publish"))
        .arg(&packed)
        .arg(format!("s3://{BUCKET}/content/demo"))
        .args(store.flags())
        .envs(store.env())
        .output()
        .unwrap();
    assert!(output.status.success(), "{}", String::from_utf8_lossy(&output.stderr));
    let stdout = String::from_utf8_lossy(&output.stdout);
    let generation = stdout.split("generation ").nth(1).unwrap().split_whitespace().next().unwrap().to_owned();
    let mut segments = Vec::new();
    for object in std::fs::read_dir(&packed).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()) {
        for quality in std::fs::read_dir(&object).unwrap().map(|e| e.unwrap().path()) {
            for segment in std::fs::read_dir(&quality).unwrap().map(|e| e.unwrap().path()) {
                segments.push(segment.strip_prefix(&packed).unwrap().to_str().unwrap().to_owned());
            }
        }
    }
    segments.sort();
    (generation, segments)
}

/// Milliseconds to the response head of `GET uri` (the body is then read and dropped).
async fn first_byte(client: &mut h2::client::SendRequest<bytes::Bytes>, uri: &str) -> f64 {
    let ready = client.clone().ready().await.unwrap();
    *client = ready;
    let start = Instant::now();
    let (response, _) = client.send_request(http::Request::get(uri).body(()).unwrap(), true).unwrap();
    let response = response.await.unwrap();
    let elapsed = start.elapsed().as_secs_f64() * 1e3;
    assert_eq!(response.status(), 200, "{uri}");
    let mut body = response.into_body();
    while let Some(chunk) = body.data().await {
        let _ = body.flow_control().release_capacity(chunk.unwrap().len());
    }
    elapsed
}
