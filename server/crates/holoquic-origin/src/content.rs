//! The content store: objects addressed by URL path, from the packager's output directory (the
//! default) or from an S3-compatible bucket (`--content s3://bucket/prefix`, `bucket.rs`).
//!
//! Every path is checked before it touches the file system or the store: only
//! `/content/<relative>` names made of normal components resolve, and a resolved file must still
//! lie inside the root once symbolic links are followed. Objects up to 16 MiB (segments,
//! manifests) are kept in a bounded [`FileCache`], because a player asks for the same segment
//! from several viewers and at several qualities; the cache checks each file's version on every
//! access (an object's, at most once per revalidation interval), so a re-packed scene is served
//! at once, without a restart.

use std::path::{Component, Path, PathBuf};
use std::time::Instant;

use bytes::Bytes;

use crate::bucket::Bucket;
use crate::bucket_client::BucketSettings;
use crate::content_metrics::{ContentMetrics, Outcome};
use crate::filecache::{CacheLimits, FileCache, Snapshot};

/// URL prefix of content paths.
pub const CONTENT_PREFIX: &str = "/content/";
/// What the content cache may hold.
const CACHE_LIMITS: CacheLimits = CacheLimits { total_bytes: 256 << 20, max_entry_bytes: 16 << 20 };

#[derive(Debug, thiserror::Error)]
pub enum ContentError {
    #[error("no such object")]
    NotFound,
    #[error("invalid object path")]
    BadPath,
    #[error("object larger than {limit} bytes")]
    TooLarge { limit: u64 },
    #[error("reading the object failed: {0}")]
    Io(#[from] std::io::Error),
    /// The object store failed to answer (unreachable, an error status, or too slow) and no copy
    /// was cached.
    #[error("the object store {}: {reason}", if *.timed_out { "did not answer in time" } else { "failed" })]
    Upstream { timed_out: bool, reason: String },
}

impl ContentError {
    /// The HTTP status of the error (both HTTPS and WebTransport answer with it).
    pub fn status(&self) -> u16 {
        match self {
            Self::NotFound => 404,
            Self::BadPath => 400,
            Self::TooLarge { .. } => 413,
            Self::Io(_) => 500,
            Self::Upstream { timed_out: false, .. } => 502,
            Self::Upstream { timed_out: true, .. } => 504,
        }
    }

    /// What a client is told for an object-store failure: whether the store failed or was too
    /// slow, never its address, bucket or key (the full error goes to the log).
    pub fn upstream_reason_for_client(timed_out: bool) -> &'static str {
        if timed_out {
            "the object store did not answer in time"
        } else {
            "the object store failed"
        }
    }
}

/// Where the content comes from: `--content DIR` or `--content s3://BUCKET/PREFIX`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ContentSource {
    Directory(PathBuf),
    Bucket { bucket: String, prefix: String },
}

impl ContentSource {
    /// `s3://bucket/prefix` (the prefix may be empty) names a bucket; anything else a directory.
    pub fn parse(value: &str) -> Result<Self, String> {
        let Some(rest) = value.strip_prefix("s3://") else { return Ok(Self::Directory(PathBuf::from(value))) };
        let (bucket, prefix) = rest.split_once('/').unwrap_or((rest, ""));
        let valid_bucket = (3..=63).contains(&bucket.len()) && bucket.bytes().all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'.' || b == b'-');
        if !valid_bucket {
            return Err(format!("{value}: the bucket name must be 3–63 characters of a–z, 0–9, '.' and '-'"));
        }
        let prefix = prefix.trim_end_matches('/');
        if !prefix.is_empty() && relative_path(&format!("/{prefix}"), "/").is_none() {
            return Err(format!("{value}: the prefix must be plain names separated by '/'"));
        }
        Ok(Self::Bucket { bucket: bucket.to_owned(), prefix: prefix.to_owned() })
    }
}

impl std::fmt::Display for ContentSource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::Directory(dir) => write!(f, "{}", dir.display()),
            Self::Bucket { bucket, prefix } => write!(f, "s3://{bucket}/{prefix}"),
        }
    }
}

pub struct ContentStore {
    source: Source,
    max_object_bytes: u64,
    cache: FileCache,
    metrics: ContentMetrics,
}

enum Source {
    /// A canonical directory.
    Directory(PathBuf),
    Bucket(Box<Bucket>),
}

impl ContentStore {
    pub fn open(root: &Path, max_object_bytes: u64) -> anyhow::Result<Self> {
        let root = root.canonicalize().map_err(|e| anyhow::anyhow!("content directory {}: {e}", root.display()))?;
        Ok(Self::over(Source::Directory(root), max_object_bytes))
    }

    /// The store `source` names; a bucket with `settings` (its client is made, nothing is asked
    /// of the store yet: an origin starts while its store is down).
    pub fn open_source(source: &ContentSource, settings: &BucketSettings, max_object_bytes: u64) -> anyhow::Result<Self> {
        match source {
            ContentSource::Directory(dir) => Self::open(dir, max_object_bytes),
            ContentSource::Bucket { bucket, prefix } => {
                let bucket = Bucket::open(bucket, prefix, settings)?;
                Ok(Self::over(Source::Bucket(Box::new(bucket)), max_object_bytes))
            }
        }
    }

    fn over(source: Source, max_object_bytes: u64) -> Self {
        Self { source, max_object_bytes, cache: FileCache::new(CACHE_LIMITS), metrics: ContentMetrics::default() }
    }

    /// The content directory; None for a bucket.
    pub fn root(&self) -> Option<&Path> {
        match &self.source {
            Source::Directory(root) => Some(root),
            Source::Bucket(_) => None,
        }
    }

    /// How its reads were answered, what the backend took and sent (`content_metrics.rs`).
    pub fn metrics(&self) -> &ContentMetrics {
        &self.metrics
    }

    /// The Prometheus text of [`ContentStore::metrics`] and of the cache's use (`/metrics`).
    pub fn render_metrics(&self, out: &mut String) {
        let backend = if self.is_remote() { "s3" } else { "directory" };
        self.metrics.render(out, backend, self.cache_usage());
    }

    /// Whether reads go over the network (a bucket): the loader then runs more of them at once.
    pub fn is_remote(&self) -> bool {
        matches!(self.source, Source::Bucket(_))
    }

    /// The bytes of the object at URL `path` (e.g. `/content/demo/manifest.mpd`).
    pub fn get(&self, path: &str) -> Result<Bytes, ContentError> {
        self.get_with_meta(path).map(|snapshot| snapshot.bytes)
    }

    /// The object at URL `path` with its version (for `ETag` and `Last-Modified`).
    pub fn get_with_meta(&self, path: &str) -> Result<Snapshot, ContentError> {
        let relative = relative_path(path, CONTENT_PREFIX).ok_or(ContentError::BadPath)?;
        match &self.source {
            Source::Directory(root) => self.read_file(root, &relative),
            Source::Bucket(bucket) => bucket.read(&relative, self.max_object_bytes, &self.cache, &self.metrics),
        }
    }

    /// A file of the content directory through the cache, its read counted as the bucket's are:
    /// a hit when its `stat` matched the cached version, else a fetch from disk (or not found, or
    /// an error) with the time it took.
    fn read_file(&self, root: &Path, relative: &Path) -> Result<Snapshot, ContentError> {
        let started = Instant::now();
        match resolve_inside(root, relative).and_then(|path| self.cache.read_timed(&path, self.max_object_bytes)) {
            Ok((snapshot, None)) => {
                self.metrics.hit();
                Ok(snapshot)
            }
            Ok((snapshot, Some(took))) => {
                self.metrics.asked_backend(Outcome::Fetched, took, snapshot.bytes.len() as u64);
                Ok(snapshot)
            }
            // A name the file system cannot hold is the client's mistake, not the disk's.
            Err(e @ ContentError::BadPath) => Err(e),
            Err(e) => {
                let outcome = if matches!(e, ContentError::NotFound) { Outcome::NotFound } else { Outcome::Error };
                self.metrics.asked_backend(outcome, started.elapsed(), 0);
                Err(e)
            }
        }
    }

    /// Objects cached and their bytes.
    pub fn cache_usage(&self) -> (usize, usize) {
        self.cache.usage()
    }

    /// Forgets every cached object: the next request for each reads its file again (SIGHUP).
    /// Never needed for correctness, since each access revalidates; it returns the memory at
    /// once, e.g. after a scene was removed.
    pub fn invalidate_all(&self) {
        self.cache.clear();
    }

    /// The media type of a path, by extension.
    pub fn content_type(path: &str) -> &'static str {
        content_type(path)
    }
}

/// The canonical path of `relative` under `root` (itself canonical), if it exists and lies inside
/// the root once symbolic links are followed.
pub(crate) fn resolve_inside(root: &Path, relative: &Path) -> Result<PathBuf, ContentError> {
    let resolved = match root.join(relative).canonicalize() {
        Ok(p) => p,
        Err(e) => return Err(path_error(e)),
    };
    // A symbolic link pointing out of the root is treated as absent, not as an error message
    // that would reveal the file system.
    if !resolved.starts_with(root) {
        return Err(ContentError::NotFound);
    }
    Ok(resolved)
}

/// The file-system path under a prefix for a URL path, or None when the path is not a plain
/// relative name: no `..`, `.`, empty segments, backslashes, NUL, percent-encoding or query, and
/// no hidden names (a segment starting with `.`: `.git`, `.env`, editors' swap files), which a
/// content or web directory may hold but nobody publishes.
/// What a failed lookup of a requested path means: a path through a file (`a.bin/x`) names
/// nothing, and a name the file system cannot hold (a component over its length limit) is a bad
/// request; both come from the client, so neither is the server's error (500).
fn path_error(e: std::io::Error) -> ContentError {
    match e.kind() {
        std::io::ErrorKind::NotFound | std::io::ErrorKind::NotADirectory => ContentError::NotFound,
        std::io::ErrorKind::InvalidFilename | std::io::ErrorKind::InvalidInput => ContentError::BadPath,
        _ => ContentError::Io(e),
    }
}

pub fn relative_path(url_path: &str, prefix: &str) -> Option<PathBuf> {
    let rest = url_path.strip_prefix(prefix)?;
    if rest.is_empty() || rest.len() > 1024 {
        return None;
    }
    if rest.bytes().any(|b| b == b'\\' || b == 0 || b == b'%' || b == b'?' || b == b'#' || b < 0x20) {
        return None;
    }
    let mut out = PathBuf::new();
    for segment in rest.split('/') {
        if segment.is_empty() || segment.starts_with('.') {
            return None;
        }
        out.push(segment);
    }
    // Belt and braces: every component must be a normal one.
    out.components().all(|c| matches!(c, Component::Normal(_))).then_some(out)
}

pub fn content_type(path: &str) -> &'static str {
    let ext = path.rsplit_once('.').map(|(_, e)| e.to_ascii_lowercase()).unwrap_or_default();
    match ext.as_str() {
        "mpd" => "application/dash+xml",
        "v3c" | "bin" => "application/octet-stream",
        "html" | "htm" => "text/html; charset=utf-8",
        "js" | "mjs" => "text/javascript; charset=utf-8",
        "css" => "text/css; charset=utf-8",
        "json" | "map" => "application/json",
        "wasm" => "application/wasm",
        "svg" => "image/svg+xml",
        "png" => "image/png",
        "jpg" | "jpeg" => "image/jpeg",
        "ico" => "image/x-icon",
        "glb" => "model/gltf-binary",
        "csv" => "text/csv; charset=utf-8",
        "txt" | "md" => "text/plain; charset=utf-8",
        _ => "application/octet-stream",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn tmp() -> PathBuf {
        let d = std::env::temp_dir().join(format!("holoquic-content-{}-{}", std::process::id(), rand::random::<u64>()));
        std::fs::create_dir_all(d.join("root/demo")).unwrap();
        std::fs::write(d.join("root/demo/manifest.mpd"), b"<MPD/>").unwrap();
        std::fs::write(d.join("secret.txt"), b"secret").unwrap();
        d
    }

    #[test]
    fn serves_files_inside_the_root() {
        let d = tmp();
        let store = ContentStore::open(&d.join("root"), 1 << 20).unwrap();
        assert_eq!(&store.get("/content/demo/manifest.mpd").unwrap()[..], b"<MPD/>");
        // Cached the second time (same bytes).
        assert_eq!(&store.get("/content/demo/manifest.mpd").unwrap()[..], b"<MPD/>");
        assert!(matches!(store.get("/content/demo/missing.v3c"), Err(ContentError::NotFound)));
        assert!(matches!(store.get("/content/demo"), Err(ContentError::NotFound)), "directories are not objects");
        std::fs::remove_dir_all(d).unwrap();
    }

    /// Paths a client can send that the file system refuses are the client's error, never a 500.
    #[test]
    fn a_path_through_a_file_or_with_an_overlong_name_is_not_a_server_error() {
        let d = tmp();
        let store = ContentStore::open(&d.join("root"), 1 << 20).unwrap();
        assert!(matches!(store.get("/content/demo/manifest.mpd/x"), Err(ContentError::NotFound)), "through a file");
        let long = format!("/content/demo/{}", "a".repeat(300));
        assert!(matches!(store.get(&long), Err(ContentError::BadPath)), "a name over the file system's limit");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn rejects_traversal_and_symlinks_out_of_the_root() {
        let d = tmp();
        std::os::unix::fs::symlink(d.join("secret.txt"), d.join("root/demo/link")).unwrap();
        let store = ContentStore::open(&d.join("root"), 1 << 20).unwrap();
        for bad in [
            "/content/../secret.txt",
            "/content/demo/../../secret.txt",
            "/content/%2e%2e/secret.txt",
            "/content//etc/passwd",
            "/content/demo\\..\\..\\secret.txt",
            "/other/demo/manifest.mpd",
            "/content/",
            "/content/a\0b",
            "/content/./demo/manifest.mpd",
            "/content/.git/config",
            "/content/demo/.env",
            "/content/demo/.manifest.mpd.swp",
        ] {
            assert!(matches!(store.get(bad), Err(ContentError::BadPath)), "{bad}");
        }
        assert!(matches!(store.get("/content/demo/link"), Err(ContentError::NotFound)));
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_repacked_scene_is_served_without_a_restart() {
        let d = tmp();
        let store = ContentStore::open(&d.join("root"), 1 << 20).unwrap();
        let first = store.get_with_meta("/content/demo/manifest.mpd").unwrap();
        assert_eq!(&first.bytes[..], b"<MPD/>");
        // Rewritten in place...
        std::fs::write(d.join("root/demo/manifest.mpd"), b"<MPD g=2/>").unwrap();
        let second = store.get_with_meta("/content/demo/manifest.mpd").unwrap();
        assert_eq!(&second.bytes[..], b"<MPD g=2/>");
        assert_ne!(first.version.etag(), second.version.etag());
        // ...and replaced by a rename, as the packager does.
        std::fs::write(d.join("root/demo/.manifest.tmp"), b"<MPD g=3/>").unwrap();
        std::fs::rename(d.join("root/demo/.manifest.tmp"), d.join("root/demo/manifest.mpd")).unwrap();
        assert_eq!(&store.get("/content/demo/manifest.mpd").unwrap()[..], b"<MPD g=3/>");
        assert_eq!(store.cache_usage(), (1, 10));
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn a_cached_object_replaced_by_a_link_out_of_the_root_is_refused() {
        let d = tmp();
        let store = ContentStore::open(&d.join("root"), 1 << 20).unwrap();
        store.get("/content/demo/manifest.mpd").unwrap();
        std::fs::remove_file(d.join("root/demo/manifest.mpd")).unwrap();
        std::os::unix::fs::symlink(d.join("secret.txt"), d.join("root/demo/manifest.mpd")).unwrap();
        assert!(matches!(store.get("/content/demo/manifest.mpd"), Err(ContentError::NotFound)));
        std::fs::remove_dir_all(d).unwrap();
    }

    /// What a cache hit costs now that it stats the file (docs/benchmarks.md, "HTTPS under idle
    /// connections, and the content cache's revalidation"):
    /// `cargo test --release -p holoquic-origin --lib cache_hit_cost -- --ignored --nocapture`.
    #[test]
    #[ignore = "a measurement, not a check"]
    fn cache_hit_cost() {
        let d = tmp();
        std::fs::create_dir_all(d.join("root/demo/obj-1/2")).unwrap();
        std::fs::write(d.join("root/demo/obj-1/2/seg-00001.v3c"), vec![0u8; 200_000]).unwrap();
        let store = ContentStore::open(&d.join("root"), 1 << 20).unwrap();
        let (url, file) = ("/content/demo/obj-1/2/seg-00001.v3c", d.join("root/demo/obj-1/2/seg-00001.v3c"));
        store.get(url).unwrap();
        let per_call = |f: &mut dyn FnMut()| {
            let start = std::time::Instant::now();
            for _ in 0..100_000 {
                f();
            }
            start.elapsed().as_secs_f64() * 1e6 / 100_000.0 // µs per call
        };
        let get = per_call(&mut || drop(std::hint::black_box(store.get(url).unwrap())));
        let canonicalize = per_call(&mut || drop(std::hint::black_box(file.canonicalize().unwrap())));
        let stat = per_call(&mut || {
            std::hint::black_box(std::fs::metadata(&file).unwrap());
        });
        println!("cache hit {get:.2} µs = canonicalize {canonicalize:.2} µs + stat {stat:.2} µs + lookup");
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn enforces_the_size_limit() {
        let d = tmp();
        let store = ContentStore::open(&d.join("root"), 3).unwrap();
        assert!(matches!(store.get("/content/demo/manifest.mpd"), Err(ContentError::TooLarge { limit: 3 })));
        std::fs::remove_dir_all(d).unwrap();
    }

    #[test]
    fn content_types() {
        assert_eq!(content_type("/a/manifest.mpd"), "application/dash+xml");
        assert_eq!(content_type("/a/x.WASM"), "application/wasm");
        assert_eq!(content_type("/noext"), "application/octet-stream");
    }

    proptest! {
        /// Whatever the input, an accepted path has only normal components and no traversal.
        #[test]
        fn accepted_paths_stay_relative(s in "\\PC{0,64}") {
            if let Some(p) = relative_path(&format!("/content/{s}"), CONTENT_PREFIX) {
                prop_assert!(p.components().all(|c| matches!(c, Component::Normal(n) if !n.to_string_lossy().starts_with('.'))));
                prop_assert!(Path::new("/root").join(&p).starts_with("/root"));
            }
        }
    }
}
