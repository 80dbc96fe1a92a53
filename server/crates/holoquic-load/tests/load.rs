//! `holoquic-load` against the real origin binary on loopback, over real quiche connections:
//! three sessions play the packed demo scene for three seconds and every object must arrive on
//! time, with a report whose numbers agree with each other and with the files served; with a
//! deadline no link can meet, the same run must report late and lost objects and fail `--strict`.
//!
//! The origin binary is the one `cargo build --release` put beside this crate's binary (`cargo
//! test --workspace` builds it). The scene is the packed demo the e2e tests use
//! (`.holoquic/e2e-content` or CTest's `test-content`); a checkout where nothing was packed yet
//! gets a scene of the same shape written here, four objects of random bytes.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

const LOAD: &str = env!("CARGO_BIN_EXE_holoquic-load");

/// A running origin, killed when dropped.
struct Origin {
    child: Child,
    quic: String,
}

impl Origin {
    fn start(content: &Path) -> Self {
        let bin = Path::new(LOAD).with_file_name("holoquic-origin");
        assert!(bin.exists(), "{} is missing: build it first (cargo build --release -p holoquic-origin)", bin.display());
        let mut child = Command::new(&bin)
            .args(["--listen", "127.0.0.1:0", "--access-log-format", "off", "--content"])
            .arg(content)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("start the origin");
        let (tx, rx) = std::sync::mpsc::channel();
        let out = child.stdout.take().unwrap();
        std::thread::spawn(move || {
            for line in BufReader::new(out).lines().map_while(Result::ok) {
                let _ = tx.send(line);
            }
        });
        // Generous: a loaded machine pages a large binary in slowly.
        let Ok(line) = rx.recv_timeout(Duration::from_secs(30)) else {
            let _ = child.kill();
            panic!("the origin did not start");
        };
        let quic = line.split(' ').find_map(|f| f.strip_prefix("quic=")).expect("quic= in the ready line").to_owned();
        Self { child, quic }
    }
}

impl Drop for Origin {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The content root holding `demo/manifest.mpd`: packed content when there is some, else a
/// written scene (kept alive by the returned directory).
fn demo_content() -> (PathBuf, Option<tempfile::TempDir>) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../..");
    for packed in [".holoquic/e2e-content", "wasm/build-native/test-content"] {
        let dir = root.join(packed);
        if dir.join("demo/manifest.mpd").is_file() {
            return (dir, None);
        }
    }
    let dir = tempfile::tempdir().unwrap();
    let demo = dir.path().join("demo");
    let mut sets = String::new();
    for (i, size) in [180_000usize, 120_000, 90_000, 150_000].into_iter().enumerate() {
        let rung = demo.join(format!("figure-{i}/0"));
        std::fs::create_dir_all(&rung).unwrap();
        std::fs::write(rung.join("seg-00000.v3c"), (0..size).map(|_| rand::random::<u8>()).collect::<Vec<_>>()).unwrap();
        sets += &format!(
            r#"<AdaptationSet id="{i}" hq:objectId="figure-{i}" hq:loopSegments="1" hq:playMode="pingpong"><BaseURL>figure-{i}/</BaseURL>
<SegmentTemplate timescale="30" duration="30" startNumber="0" media="$RepresentationID$/seg-$Number%05d$.v3c"/><Representation id="0" bandwidth="{}"/></AdaptationSet>"#,
            size * 8
        );
    }
    let mpd = format!(r#"<?xml version="1.0"?><MPD xmlns:hq="urn:holoquic:mpd:2026" mediaPresentationDuration="PT1S"><Period>{sets}</Period></MPD>"#);
    std::fs::write(demo.join("manifest.mpd"), mpd).unwrap();
    (dir.path().to_owned(), Some(dir))
}

/// Bytes of one segment of every object at the top rung (the demo loops one segment file).
fn segment_bytes_at_top(content: &Path) -> u64 {
    let demo = content.join("demo");
    let mpd = std::fs::read_to_string(demo.join("manifest.mpd")).unwrap();
    assert!(mpd.matches("hq:loopSegments=\"1\"").count() == 4, "the scene should loop one segment of four objects");
    let mut total = 0;
    for i in 0..4 {
        let object = demo.join(format!("figure-{i}"));
        let top = std::fs::read_dir(&object).unwrap().filter_map(|e| e.ok()?.file_name().to_str()?.parse::<u32>().ok()).max().unwrap();
        total += std::fs::metadata(object.join(format!("{top}/seg-00000.v3c"))).unwrap().len();
    }
    total
}

/// Runs the load client with `args`; its exit code and JSON report.
fn load(origin: &Origin, args: &[&str]) -> (i32, Value) {
    let pid = origin.child.id().to_string();
    let out =
        Command::new(LOAD).args(["--origin", &origin.quic, "--json", "--origin-pid", &pid, "--interval", "1"]).args(args).output().expect("run holoquic-load");
    let report = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("no JSON report ({e}): {}\n{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), report)
}

fn n(v: &Value, key: &str) -> u64 {
    v[key].as_u64().unwrap_or_else(|| panic!("{key} in {v}"))
}

fn f(v: &Value, key: &str) -> f64 {
    v[key].as_f64().unwrap_or_else(|| panic!("{key} in {v}"))
}

#[test]
fn three_sessions_get_every_object_on_time_and_the_report_adds_up() {
    let (content, _written) = demo_content();
    let origin = Origin::start(&content);
    let (code, report) = load(&origin, &["--sessions", "3", "--duration", "3", "--strict"]);
    let total = &report["total"];
    assert_eq!(code, 0, "{report:#}");
    assert_eq!((n(&report, "sessions_opened"), n(&report, "sessions_failed")), (3, 0));
    // 3 sessions × 3 one-second segments × 4 objects, all on time.
    assert_eq!((n(&report, "segments"), n(&report, "objects")), (3, 4));
    assert_eq!(n(total, "requested"), 36);
    assert_eq!((n(total, "on_time"), n(total, "late"), n(total, "lost")), (36, 0, 0), "{total:#}");
    // Every complete object is its file: 9 segments of the four objects at the top rung.
    assert_eq!(n(total, "object_bytes"), 9 * segment_bytes_at_top(&content));
    assert!(n(total, "payload_bytes") >= n(total, "object_bytes"));
    // The sessions add up to the total.
    let sessions = report["per_session"].as_array().unwrap();
    assert_eq!(sessions.len(), 3);
    for key in ["requested", "on_time", "payload_bytes", "object_bytes"] {
        assert_eq!(sessions.iter().map(|s| n(s, key)).sum::<u64>(), n(total, key), "{key}");
    }
    // Percentiles in order and within the deadline; throughput is bytes over time.
    let l = &total["latency_ms"];
    let (p50, p95, p99, max) = (f(l, "p50"), f(l, "p95"), f(l, "p99"), f(l, "max"));
    assert!(0.0 < p50 && p50 <= p95 && p95 <= p99 && p99 <= max && max <= f(&report, "deadline_ms"), "{l}");
    let expected_mbit_s = n(total, "payload_bytes") as f64 * 8.0 / f(total, "seconds") / 1e6;
    assert!((f(total, "throughput_mbit_s") - expected_mbit_s).abs() < 1e-6 * expected_mbit_s.max(1.0));
    assert!(n(&report["origin_memory"], "start_kb") > 0);
}

#[test]
fn an_impossible_deadline_is_reported_as_late_and_lost_objects() {
    let (content, _written) = demo_content();
    let origin = Origin::start(&content);
    // 1 ms for objects of 100 kB and more: reliable ones still arrive, late; datagram ones are
    // purged at their deadline and never complete.
    let (code, report) = load(&origin, &["--sessions", "3", "--duration", "2", "--deadline-ms", "1", "--strict"]);
    let total = &report["total"];
    assert_eq!(code, 3, "--strict fails the run: {total:#}");
    assert_eq!(n(total, "requested"), 24);
    assert!(n(total, "late") > 0 && n(total, "lost_deadline") > 0, "{total:#}");
    assert!(n(total, "on_time") < 24);
    assert_eq!(n(total, "on_time") + n(total, "late") + n(total, "lost"), 24);
}
