//! What the content store counts about its backend (the content directory, or the bucket of
//! `--content s3://…`), for the admin listener's `/metrics`: every read of an object by how the
//! backend was involved, how long the backend took and how many bytes it sent, and what the
//! content cache holds. With a bucket these say what the store costs (requests, bytes, latency)
//! and how much the cache saves; with a directory, the same of the disk.
//!
//! One [`ContentMetrics`] belongs to each [`ContentStore`](crate::content::ContentStore); the
//! backends record into it, and `/metrics` renders it beside the origin's own [`Metrics`](crate::metrics::Metrics).

use std::fmt::Write;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::histogram::Histogram;

/// How one read of an object was answered, as far as the backend is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// From the cache: a bucket's object within its revalidation interval (the store not asked),
    /// or a file whose `stat` matched the cached version.
    Hit,
    /// The store confirmed the cached copy (a conditional GET answered 304: no body).
    NotModified,
    /// The body was read from the backend: a miss, or a changed object or file.
    Fetched,
    /// The backend has no such object (404).
    NotFound,
    /// The backend failed (I/O error, the store refused, failed or did not answer in time; a
    /// cached copy was then served as it was, else 500/502/504), or the object is over
    /// `--max-object-bytes`.
    Error,
}

impl Outcome {
    const ALL: [Outcome; 5] = [Outcome::Hit, Outcome::NotModified, Outcome::Fetched, Outcome::NotFound, Outcome::Error];

    fn label(self) -> &'static str {
        match self {
            Self::Hit => "hit",
            Self::NotModified => "not_modified",
            Self::Fetched => "fetched",
            Self::NotFound => "not_found",
            Self::Error => "error",
        }
    }
}

/// Backend latency buckets, seconds: a cached disk read (tens of µs) to a store at its timeout.
const BACKEND_BUCKETS: &[f64] = &[0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0];

/// The counters of one content store (relaxed atomics: exact totals, no ordering between them).
#[derive(Debug)]
pub struct ContentMetrics {
    reads: [AtomicU64; 5],
    backend_bytes: AtomicU64,
    backend_latency: Histogram,
}

impl Default for ContentMetrics {
    fn default() -> Self {
        Self { reads: Default::default(), backend_bytes: AtomicU64::new(0), backend_latency: Histogram::new(BACKEND_BUCKETS) }
    }
}

/// The read counts at one moment, by outcome.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReadCounts {
    pub hit: u64,
    pub not_modified: u64,
    pub fetched: u64,
    pub not_found: u64,
    pub error: u64,
}

impl ReadCounts {
    /// Reads answered without the object's bytes crossing from the backend: hits and 304s,
    /// against those and the bodies fetched (docs/benchmarks.md: the cache hit ratio).
    pub fn hit_ratio(&self) -> f64 {
        let hits = self.hit + self.not_modified;
        hits as f64 / (hits + self.fetched).max(1) as f64
    }
}

impl ContentMetrics {
    /// One read answered from the cache, without asking the backend.
    pub fn hit(&self) {
        self.count(Outcome::Hit);
    }

    /// One read that asked the backend: its outcome, how long the backend took, and the body
    /// bytes it sent (0 for a 304, a 404 or an error).
    pub fn asked_backend(&self, outcome: Outcome, took: Duration, bytes: u64) {
        self.count(outcome);
        self.backend_latency.observe(took.as_secs_f64());
        self.backend_bytes.fetch_add(bytes, Ordering::Relaxed);
    }

    fn count(&self, outcome: Outcome) {
        self.reads[outcome as usize].fetch_add(1, Ordering::Relaxed);
    }

    pub fn counts(&self) -> ReadCounts {
        let [hit, not_modified, fetched, not_found, error] = self.reads.each_ref().map(|c| c.load(Ordering::Relaxed));
        ReadCounts { hit, not_modified, fetched, not_found, error }
    }

    /// Requests the backend answered (or failed to), as the latency histogram counts them.
    pub fn backend_requests(&self) -> u64 {
        self.backend_latency.count()
    }

    pub fn backend_bytes(&self) -> u64 {
        self.backend_bytes.load(Ordering::Relaxed)
    }

    /// The Prometheus text of these metrics and of the cache's use (`entries`, `bytes`), for a
    /// backend of kind `backend` (`directory` or `s3`).
    pub fn render(&self, out: &mut String, backend: &str, (entries, bytes): (usize, usize)) {
        let reads = "holoquic_content_reads_total";
        let _ = writeln!(
            out,
            "# HELP {reads} Reads of content objects by how the backend answered: hit (from the cache), not_modified (the store confirmed the cached copy), fetched (the body read from the backend), not_found, error.\n# TYPE {reads} counter"
        );
        for outcome in Outcome::ALL {
            let _ = writeln!(out, "{reads}{{backend=\"{backend}\",outcome=\"{}\"}} {}", outcome.label(), self.reads[outcome as usize].load(Ordering::Relaxed));
        }
        let label = format!("backend=\"{backend}\"");
        Histogram::render_family(
            out,
            "holoquic_content_backend_seconds",
            "Time of each request to the content backend (a file read, or a GET of the store with its body).",
            &[(&label, &self.backend_latency)],
        );
        let gauges = [
            ("content_backend_bytes_total", "counter", "Body bytes read from the content backend.", self.backend_bytes() as usize),
            ("content_cache_entries", "gauge", "Objects held in the content cache.", entries),
            ("content_cache_bytes", "gauge", "Bytes of the objects held in the content cache.", bytes),
        ];
        for (name, kind, help, value) in gauges {
            let _ = writeln!(out, "# HELP holoquic_{name} {help}\n# TYPE holoquic_{name} {kind}\nholoquic_{name}{{{label}}} {value}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_latency_bytes_and_the_cache_render_as_prometheus_text() {
        let m = ContentMetrics::default();
        m.hit();
        m.hit();
        m.asked_backend(Outcome::Fetched, Duration::from_millis(20), 5000);
        m.asked_backend(Outcome::NotModified, Duration::from_millis(3), 0);
        assert_eq!(m.counts(), ReadCounts { hit: 2, not_modified: 1, fetched: 1, not_found: 0, error: 0 });
        assert!((m.counts().hit_ratio() - 0.75).abs() < 1e-9);
        let mut text = String::new();
        m.render(&mut text, "s3", (1, 5000));
        assert!(text.contains("holoquic_content_reads_total{backend=\"s3\",outcome=\"hit\"} 2\n"), "{text}");
        assert!(text.contains("holoquic_content_reads_total{backend=\"s3\",outcome=\"error\"} 0\n"));
        assert!(text.contains("holoquic_content_backend_seconds_bucket{backend=\"s3\",le=\"0.005\"} 1\n"));
        assert!(text.contains("holoquic_content_backend_seconds_count{backend=\"s3\"} 2\n"));
        assert!(text.contains("holoquic_content_backend_bytes_total{backend=\"s3\"} 5000\n"));
        assert!(text.contains("# TYPE holoquic_content_cache_bytes gauge\nholoquic_content_cache_bytes{backend=\"s3\"} 5000\n"));
        for line in text.lines().filter(|l| !l.starts_with('#')) {
            let (name, value) = line.rsplit_once(' ').unwrap();
            assert!(name.starts_with("holoquic_content_"), "{line}");
            value.parse::<f64>().unwrap();
        }
    }
}
