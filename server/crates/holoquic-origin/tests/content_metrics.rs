//! The content store's view in the admin listener's `/metrics`, from the real origin binary and
//! HTTPS (HTTP/2) requests: reads by outcome (hit, not_modified, fetched, not_found, error), the
//! backend's time per request and bytes sent, and what the cache holds — over a content
//! directory, and over a real S3 store (SeaweedFS), where revalidation (304) and a store that is
//! down happen.

mod support;

use std::time::Duration;

use object_store::{ObjectStoreExt, PutPayload};
use support::https::Site;
use support::seaweed::{Seaweed, BUCKET};

/// The content metrics of one backend, read from `/metrics`.
struct Content<'a> {
    site: &'a Site,
    backend: &'static str,
}

impl Content<'_> {
    async fn reads(&self, outcome: &str) -> u64 {
        self.site.metric(&format!("content_reads_total{{backend=\"{}\",outcome=\"{outcome}\"}}", self.backend)).await
    }

    /// Every read outcome, in the order hit, not_modified, fetched, not_found, error.
    async fn all_reads(&self) -> [u64; 5] {
        let mut all = [0; 5];
        for (count, outcome) in all.iter_mut().zip(["hit", "not_modified", "fetched", "not_found", "error"]) {
            *count = self.reads(outcome).await;
        }
        all
    }

    async fn value(&self, name: &str) -> u64 {
        self.site.metric(&format!("{name}{{backend=\"{}\"}}", self.backend)).await
    }

    /// Requests the backend answered (the latency histogram's count), body bytes it sent, and the
    /// cache's entries and bytes.
    async fn backend_and_cache(&self) -> (u64, u64, u64, u64) {
        (
            self.value("content_backend_seconds_count").await,
            self.value("content_backend_bytes_total").await,
            self.value("content_cache_entries").await,
            self.value("content_cache_bytes").await,
        )
    }
}

async fn status(site: &Site, path: &str) -> u16 {
    site.fetch(path, &[]).await.unwrap().status
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_content_directory_counts_disk_reads_hits_and_the_cache() {
    let site = Site::start(&[]);
    let content = Content { site: &site, backend: "directory" };
    let manifest = b"<MPD generation=\"1\"/>".len() as u64; // what Site::start wrote
    let segment: Vec<u8> = (0..100_000u32).map(|i| i as u8).collect();
    site.write("content/demo/seg.bin", &segment);
    assert_eq!(content.all_reads().await, [0; 5]);

    assert_eq!(status(&site, "/content/demo/manifest.mpd").await, 200);
    assert_eq!(status(&site, "/content/demo/manifest.mpd").await, 200);
    assert_eq!(status(&site, "/content/demo/seg.bin").await, 200);
    assert_eq!(status(&site, "/content/demo/missing.bin").await, 404);
    assert_eq!(content.all_reads().await, [1, 0, 2, 1, 0], "hit, not_modified, fetched, not_found, error");
    let disk = manifest + segment.len() as u64;
    assert_eq!(content.backend_and_cache().await, (3, disk, 2, disk), "backend requests and bytes, cache entries and bytes");

    // A file replaced by a rename is read again; the cache holds the new version only.
    site.replace("content/demo/manifest.mpd", b"<MPD generation=\"2\"/>");
    assert_eq!(status(&site, "/content/demo/manifest.mpd").await, 200);
    assert_eq!(content.all_reads().await, [1, 0, 3, 1, 0]);
    assert_eq!(content.backend_and_cache().await, (4, disk + manifest, 2, disk));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bucket_counts_store_requests_by_answer_latency_bytes_and_the_cache() {
    let Some(mut store) = Seaweed::start_or_skip("a_bucket_counts_store_requests_by_answer_latency_bytes_and_the_cache") else { return };
    let segment: Vec<u8> = (0..300_000u32).map(|i| (i * 31) as u8).collect();
    let client = store.client();
    for (key, bytes) in [("content/demo/seg.bin", segment.clone()), ("content/demo/manifest.mpd", b"<MPD/>".to_vec())] {
        client.put(&key.into(), PutPayload::from(bytes)).await.unwrap();
    }
    // Revalidated after 2 s: a read right after another is a hit, one 2.5 s later asks the store.
    let mut flags = store.flags();
    flags.extend(["--s3-revalidate".into(), "2".into(), "--s3-timeout".into(), "2".into()]);
    let flags: Vec<&str> = flags.iter().map(String::as_str).collect();
    let site = Site::start_serving(&format!("s3://{BUCKET}/content"), &flags, &store.env());
    let content = Content { site: &site, backend: "s3" };

    let served = site.fetch("/content/demo/seg.bin", &[]).await.unwrap();
    assert!(served.status == 200 && served.body[..] == segment[..]);
    assert_eq!(status(&site, "/content/demo/seg.bin").await, 200);
    assert_eq!(status(&site, "/content/demo/missing.bin").await, 404);
    assert_eq!(content.all_reads().await, [1, 0, 1, 1, 0], "hit, not_modified, fetched, not_found, error");
    let bytes = segment.len() as u64;
    assert_eq!(content.backend_and_cache().await, (2, bytes, 1, bytes), "store requests and bytes, cache entries and bytes");
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(status(&site, "/content/demo/seg.bin").await, 200);
    assert_eq!(content.all_reads().await, [1, 1, 1, 1, 0], "a conditional GET answered 304");
    assert_eq!(content.backend_and_cache().await, (3, bytes, 1, bytes), "no body for a 304");

    // The store dies: the cached segment is served as it was, the manifest never read is 502/504;
    // both count as errors of the store.
    store.stop();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(status(&site, "/content/demo/seg.bin").await, 200);
    assert!(matches!(status(&site, "/content/demo/manifest.mpd").await, 502 | 504));
    assert_eq!(content.all_reads().await, [1, 1, 1, 1, 2]);
    assert_eq!(content.backend_and_cache().await, (5, bytes, 1, bytes));
    // Each within the timeout (2 s), so under the 2.5-s bucket.
    assert_eq!(site.metric("content_backend_seconds_bucket{backend=\"s3\",le=\"2.5\"}").await, 5);
}
