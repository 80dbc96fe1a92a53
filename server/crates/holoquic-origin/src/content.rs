//! The content store: the packager's output directory, objects addressed by URL path.
//!
//! Every path is checked before it touches the file system: only `/content/<relative>` names
//! made of normal components resolve, and the resolved file must still lie inside the root once
//! symbolic links are followed. Small objects (segments, manifests) are kept in a bounded cache,
//! because a player asks for the same segment from several viewers and at several qualities.

use std::collections::{HashMap, VecDeque};
use std::path::{Component, Path, PathBuf};
use std::sync::Mutex;

use bytes::Bytes;

/// URL prefix of content paths.
pub const CONTENT_PREFIX: &str = "/content/";
/// Bytes the cache may hold.
const CACHE_BYTES: usize = 256 << 20;
/// Objects larger than this are read from disk every time instead of cached.
const CACHE_MAX_OBJECT: usize = 16 << 20;

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
}

pub struct ContentStore {
    root: PathBuf,
    max_object_bytes: u64,
    cache: Mutex<Cache>,
}

#[derive(Default)]
pub(crate) struct Cache {
    entries: HashMap<PathBuf, Bytes>,
    order: VecDeque<PathBuf>,
    bytes: usize,
}

impl ContentStore {
    pub fn open(root: &Path, max_object_bytes: u64) -> anyhow::Result<Self> {
        let root = root.canonicalize().map_err(|e| anyhow::anyhow!("content directory {}: {e}", root.display()))?;
        Ok(Self { root, max_object_bytes, cache: Mutex::new(Cache::default()) })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The bytes of the object at URL `path` (e.g. `/content/demo/manifest.mpd`).
    pub fn get(&self, path: &str) -> Result<Bytes, ContentError> {
        let relative = relative_path(path, CONTENT_PREFIX).ok_or(ContentError::BadPath)?;
        read_inside(&self.root, &relative, self.max_object_bytes, Some(&self.cache))
    }

    /// Forgets every cached object: the next request for each reads its file again (SIGHUP,
    /// after a scene was replaced in place).
    pub fn invalidate_all(&self) {
        *self.cache.lock().expect("cache lock") = Cache::default();
    }

    /// The media type of a path, by extension.
    pub fn content_type(path: &str) -> &'static str {
        content_type(path)
    }
}

/// Reads `relative` under `root` if it is a regular file inside it, optionally through `cache`.
pub(crate) fn read_inside(root: &Path, relative: &Path, limit: u64, cache: Option<&Mutex<Cache>>) -> Result<Bytes, ContentError> {
    let joined = root.join(relative);
    let resolved = match joined.canonicalize() {
        Ok(p) => p,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Err(ContentError::NotFound),
        Err(e) => return Err(ContentError::Io(e)),
    };
    // A symbolic link pointing out of the root is treated as absent, not as an error message
    // that would reveal the file system.
    if !resolved.starts_with(root) {
        return Err(ContentError::NotFound);
    }
    if let Some(cache) = cache {
        if let Some(hit) = cache.lock().expect("cache lock").entries.get(&resolved) {
            return Ok(hit.clone());
        }
    }
    let meta = std::fs::metadata(&resolved)?;
    if !meta.is_file() {
        return Err(ContentError::NotFound);
    }
    if meta.len() > limit {
        return Err(ContentError::TooLarge { limit });
    }
    let bytes = Bytes::from(std::fs::read(&resolved)?);
    if let Some(cache) = cache {
        if bytes.len() <= CACHE_MAX_OBJECT {
            let mut c = cache.lock().expect("cache lock");
            while c.bytes + bytes.len() > CACHE_BYTES {
                let Some(old) = c.order.pop_front() else { break };
                if let Some(b) = c.entries.remove(&old) {
                    c.bytes -= b.len();
                }
            }
            c.bytes += bytes.len();
            c.order.push_back(resolved.clone());
            c.entries.insert(resolved, bytes.clone());
        }
    }
    Ok(bytes)
}

/// The file-system path under a prefix for a URL path, or None when the path is not a plain
/// relative name: no `..`, `.`, empty segments, backslashes, NUL, percent-encoding or query, and
/// no hidden names (a segment starting with `.`: `.git`, `.env`, editors' swap files), which a
/// content or web directory may hold but nobody publishes.
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
