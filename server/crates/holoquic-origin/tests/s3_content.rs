//! Content in S3-compatible object storage, end to end on 127.0.0.1: a real SeaweedFS, the real
//! `holoquic-publish` and `holoquic-origin` binaries, HTTPS (HTTP/2) and HTTP/3 clients. A packed
//! scene is published to the bucket and served byte for byte; a re-published scene reaches
//! players as a whole generation, never mixed with the old one; with the store killed the origin
//! serves what it cached and answers the rest with a clear status, and recovers when the store
//! returns.

mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use support::https::Site;
use support::seaweed::{Seaweed, BUCKET};

const PUBLISH: &str = env!("CARGO_BIN_EXE_holoquic-publish");
/// The origin's revalidation interval in these tests (the default is 1 s).
const REVALIDATE: &str = "0.3";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_published_scene_is_served_from_the_bucket_whole_and_through_an_outage() {
    let Some(mut store) = Seaweed::start_or_skip("a_published_scene_is_served_from_the_bucket_whole_and_through_an_outage") else { return };
    let work = tempfile::tempdir().unwrap();
    let scene = scene_copy(&work.path().join("demo"));
    let first = publish(&store, &scene);

    let mut flags = store.flags();
    flags.extend(["--s3-revalidate".into(), REVALIDATE.into()]);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let origin = Site::start_serving(&format!("s3://{BUCKET}/content"), &flags, &store.env());

    // The manifest names the generation's segments; each is the packed file, byte for byte, over
    // HTTPS and over HTTP/3.
    let manifest = origin.fetch("/content/demo/manifest.mpd", &[]).await.unwrap();
    assert_eq!(manifest.status, 200, "{:?}", manifest.body);
    let original = std::fs::read_to_string(scene.join("manifest.mpd")).unwrap();
    assert_eq!(std::str::from_utf8(&manifest.body).unwrap(), holoquic_origin::publish::rebase_manifest(&original, &first).unwrap());
    assert_eq!(manifest.header("cache-control"), "no-cache");
    assert_eq!(generation_of(&manifest.body), first);
    let segments = segment_files(&scene);
    let (seen, unseen) = (&segments[0], &segments[segments.len() - 1]);
    let url = |generation: &str, relative: &str| format!("/content/demo/{generation}/{relative}");
    let expected = std::fs::read(scene.join(seen)).unwrap();
    let over_h2 = origin.fetch(&url(&first, seen), &[]).await.unwrap();
    assert_eq!((over_h2.status, over_h2.body.len()), (200, expected.len()));
    assert!(over_h2.body[..] == expected[..], "HTTPS: the bytes of {seen}");
    let over_h3 = support::h3::get(origin.origin.quic, &url(&first, seen));
    assert_eq!((over_h3.status, over_h3.body.len()), (200, expected.len()));
    assert!(over_h3.body == expected, "HTTP/3: the bytes of {seen}");
    assert_eq!(over_h3.header("etag"), over_h2.header("etag"), "one version, one tag");
    assert_eq!(origin.fetch("/content/demo/missing.mpd", &[]).await.unwrap().status, 404);

    // Re-published with a changed segment: a new generation. The old one stays for players that
    // hold its manifest; the new manifest reaches the origin within its revalidation interval.
    let mut changed = expected.clone();
    changed.extend_from_slice(b"generation two");
    std::fs::write(scene.join(seen), &changed).unwrap();
    let second = publish(&store, &scene);
    assert_ne!(second, first);
    let old = origin.fetch(&url(&first, seen), &[]).await.unwrap();
    assert!(old.status == 200 && old.body[..] == expected[..], "the old generation is still whole");
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        // Whichever manifest the origin serves, its segment is of the same generation.
        let answer = origin.fetch("/content/demo/manifest.mpd", &[]).await.unwrap();
        let generation = generation_of(&answer.body);
        let segment = origin.fetch(&url(&generation, seen), &[]).await.unwrap();
        let bytes = if generation == first { &expected } else { &changed };
        assert!(segment.status == 200 && segment.body[..] == bytes[..], "manifest of {generation}, segment of another");
        if generation == second {
            break;
        }
        assert!(Instant::now() < deadline, "the re-published manifest never reached the origin");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let cached = origin.fetch(&url(&second, seen), &[]).await.unwrap();

    // The store hangs (connections open, no answers), past the revalidation interval: a cached
    // segment of a generation comes at once — it never changes, so it is not revalidated — instead
    // of after the store's timeout (5 s).
    store.hang();
    tokio::time::sleep(Duration::from_millis(600)).await;
    let asked = Instant::now();
    let during_hang = origin.fetch(&url(&second, seen), &[]).await.unwrap();
    let waited = asked.elapsed();
    store.unhang();
    assert!(during_hang.status == 200 && during_hang.body == cached.body, "the cached segment while the store hangs");
    assert!(waited < Duration::from_millis(2500), "a cached immutable segment waited {waited:?} for a hung store");

    // The store dies: what the origin holds is served past its revalidation (the store cannot
    // confirm it), what it never read is a clear 502/504 — over HTTP/3 too — and the origin lives.
    store.stop();
    tokio::time::sleep(Duration::from_millis(600)).await;
    for _ in 0..3 {
        let manifest = origin.fetch("/content/demo/manifest.mpd", &[]).await.unwrap();
        assert_eq!((manifest.status, generation_of(&manifest.body)), (200, second.clone()), "the cached manifest");
        let segment = origin.fetch(&url(&second, seen), &[]).await.unwrap();
        assert!(segment.status == 200 && segment.body == cached.body, "the cached segment");
    }
    let missing = origin.fetch(&url(&second, unseen), &[]).await.unwrap();
    assert!(matches!(missing.status, 502 | 504), "an uncached object without its store: {} {:?}", missing.status, missing.body);
    let reason = std::str::from_utf8(&missing.body).unwrap();
    assert!(reason.contains("object store"), "{reason:?}");
    // The client learns that the store failed, not where it is or how the bucket is laid out.
    assert!(!reason.contains("127.0.0.1") && !reason.contains(BUCKET) && !reason.contains(unseen), "the store's details leak: {reason:?}");
    assert_eq!(missing.header("retry-after"), "1");
    let missing_h3 = support::h3::get(origin.origin.quic, &url(&second, unseen));
    assert!(matches!(missing_h3.status, 502 | 504), "over HTTP/3: {}", missing_h3.status);

    // The store returns: the object it could not serve is served, exactly.
    store.resume();
    let unseen_bytes = std::fs::read(scene.join(unseen)).unwrap();
    let back = origin.fetch(&url(&second, unseen), &[]).await.unwrap();
    assert!(back.status == 200 && back.body[..] == unseen_bytes[..], "after the store came back: {}", back.status);
    let back_h3 = support::h3::get(origin.origin.quic, &url(&second, seen));
    assert!(back_h3.status == 200 && back_h3.body == changed);
}

#[test]
fn publishing_refuses_what_is_not_a_scene_and_names_the_problem() {
    let Some(store) = Seaweed::start_or_skip("publishing_refuses_what_is_not_a_scene_and_names_the_problem") else { return };
    let empty = tempfile::tempdir().unwrap();
    let run = |args: &[&str]| Command::new(PUBLISH).args(args).envs(store.env()).output().unwrap();
    let flags = store.flags();
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let not_a_scene = run(&[&[empty.path().to_str().unwrap(), &format!("s3://{BUCKET}/content/x")], &flags[..]].concat());
    assert!(!not_a_scene.status.success());
    assert!(String::from_utf8_lossy(&not_a_scene.stderr).contains("no manifest"), "{}", String::from_utf8_lossy(&not_a_scene.stderr));
    let not_a_bucket = run(&[empty.path().to_str().unwrap(), "/srv/content/x"]);
    assert!(String::from_utf8_lossy(&not_a_bucket.stderr).contains("not a bucket URL"));
    // A plain-http endpoint must be allowed explicitly.
    let endpoint = store.endpoint();
    let plain = run(&[empty.path().to_str().unwrap(), "s3://holoquic/x", "--s3-endpoint", &endpoint]);
    assert!(String::from_utf8_lossy(&plain.stderr).contains("--s3-allow-http"), "{}", String::from_utf8_lossy(&plain.stderr));
}

/// Runs `holoquic-publish scene s3://BUCKET/content/demo`; the generation it published.
fn publish(store: &Seaweed, scene: &Path) -> String {
    let flags = store.flags();
    let output = Command::new(PUBLISH).arg(scene).arg(format!("s3://{BUCKET}/content/demo")).args(&flags).envs(store.env()).output().unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "holoquic-publish failed:\n{stdout}\n{}", String::from_utf8_lossy(&output.stderr));
    let generation = stdout.split("generation ").nth(1).and_then(|rest| rest.split_whitespace().next()).unwrap_or_else(|| panic!("{stdout}"));
    generation.to_owned()
}

/// The generation a served manifest names (the first folder of its first BaseURL).
fn generation_of(manifest: &[u8]) -> String {
    let text = std::str::from_utf8(manifest).unwrap();
    let start = text.find("<BaseURL>").expect("a BaseURL") + "<BaseURL>".len();
    text[start..].split('/').next().unwrap().trim().to_owned()
}

/// A writable copy of a packed scene at `to`: the e2e suite's packed demo when it has been made
/// (`.holoquic/e2e-content/demo`), else a scene of the packager's layout with random segments.
fn scene_copy(to: &Path) -> PathBuf {
    let packed = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../.holoquic/e2e-content/demo");
    if packed.join("manifest.mpd").is_file() {
        eprintln!("publishing the packed e2e scene {}", packed.display());
        copy_tree(&packed, to);
        return to.to_owned();
    }
    eprintln!("no packed e2e scene yet: publishing a scene of the packager's layout with random segments");
    let mut sets = String::new();
    for object in 0..2 {
        sets.push_str(&format!(
            "<AdaptationSet id=\"{object}\" hq:objectId=\"figure-{object}\"><BaseURL>figure-{object}/</BaseURL>\
             <SegmentTemplate timescale=\"30\" duration=\"30\" startNumber=\"0\" media=\"$RepresentationID$/seg-$Number%05d$.v3c\"/>\
             <Representation id=\"0\" bandwidth=\"500000\"/><Representation id=\"1\" bandwidth=\"900000\"/></AdaptationSet>\n"
        ));
        for quality in 0..2 {
            let bytes: Vec<u8> = (0..60_000 + 20_000 * quality).map(|_| rand::random()).collect();
            std::fs::create_dir_all(to.join(format!("figure-{object}/{quality}"))).unwrap();
            std::fs::write(to.join(format!("figure-{object}/{quality}/seg-00000.v3c")), bytes).unwrap();
        }
    }
    let mpd = format!("<?xml version=\"1.0\"?>\n<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" hq:scene=\"demo\">\n<Period id=\"0\">\n{sets}</Period>\n</MPD>\n");
    std::fs::write(to.join("manifest.mpd"), mpd).unwrap();
    to.to_owned()
}

fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let target = to.join(entry.file_name());
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), target).unwrap();
        }
    }
}

/// The segment files of a scene, relative and sorted.
fn segment_files(scene: &Path) -> Vec<String> {
    let mut found = Vec::new();
    for object in std::fs::read_dir(scene).unwrap().map(|e| e.unwrap().path()).filter(|p| p.is_dir()) {
        for quality in std::fs::read_dir(&object).unwrap().map(|e| e.unwrap().path()) {
            for segment in std::fs::read_dir(&quality).unwrap().map(|e| e.unwrap().path()) {
                found.push(segment.strip_prefix(scene).unwrap().to_str().unwrap().to_owned());
            }
        }
    }
    found.sort();
    assert!(found.len() >= 2, "a scene with at least two segments");
    found
}
