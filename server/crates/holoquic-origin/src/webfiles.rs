//! The web app (`--web`): files of the built player served at `/`, through a [`FileCache`].
//!
//! The app is small (a few MiB), so every file is kept after its first request and stat-checked
//! on each later one: a rebuilt `dist/` is served at once. HTTPS and HTTP/3 share one
//! [`WebFiles`], so both answer the same bytes with the same caching policy.

use std::path::{Path, PathBuf};

use bytes::Bytes;

use crate::content::{content_type, relative_path, resolve_inside, ContentError};
use crate::filecache::{CacheLimits, FileCache, Version};

/// Largest web-app file served.
const MAX_FILE_BYTES: u64 = 64 << 20;
/// What the web-app cache may hold: all of a built app, with room to spare.
const CACHE_LIMITS: CacheLimits = CacheLimits { total_bytes: 64 << 20, max_entry_bytes: 16 << 20 };

/// One file of the app, ready to answer.
#[derive(Debug, Clone)]
pub struct WebFile {
    pub bytes: Bytes,
    pub version: Version,
    pub media_type: &'static str,
    /// Hashed asset names (Vite's `assets/`) never change and are cached for good; everything
    /// else (pages) must be revalidated.
    pub cache_control: &'static str,
}

pub struct WebFiles {
    root: PathBuf,
    cache: FileCache,
}

impl WebFiles {
    pub fn open(root: &Path) -> anyhow::Result<Self> {
        let root = root.canonicalize().map_err(|e| anyhow::anyhow!("web app directory {}: {e}", root.display()))?;
        Ok(Self { root, cache: FileCache::new(CACHE_LIMITS) })
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// The file at URL `path` (`/` is `/index.html`).
    pub fn get(&self, path: &str) -> Result<WebFile, ContentError> {
        let path = if path == "/" { "/index.html" } else { path };
        let relative = relative_path(path, "/").ok_or(ContentError::BadPath)?;
        let snapshot = self.cache.read(&resolve_inside(&self.root, &relative)?, MAX_FILE_BYTES)?;
        Ok(WebFile {
            bytes: snapshot.bytes,
            version: snapshot.version,
            media_type: content_type(path),
            cache_control: if path.starts_with("/assets/") { "public, max-age=31536000, immutable" } else { "no-cache" },
        })
    }

    /// Files cached and their bytes.
    pub fn cache_usage(&self) -> (usize, usize) {
        self.cache.usage()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serves_the_app_with_its_policy_and_picks_up_a_rebuild() {
        let dir = std::env::temp_dir().join(format!("holoquic-web-{}-{}", std::process::id(), rand::random::<u64>()));
        std::fs::create_dir_all(dir.join("app/assets")).unwrap();
        std::fs::write(dir.join("app/index.html"), b"<p>one</p>").unwrap();
        std::fs::write(dir.join("app/assets/main-abc.js"), b"1").unwrap();
        std::fs::write(dir.join("secret"), b"no").unwrap();
        std::os::unix::fs::symlink(dir.join("secret"), dir.join("app/leak")).unwrap();
        let web = WebFiles::open(&dir.join("app")).unwrap();

        let index = web.get("/").unwrap();
        assert_eq!((&index.bytes[..], index.media_type, index.cache_control), (&b"<p>one</p>"[..], "text/html; charset=utf-8", "no-cache"));
        assert_eq!(web.get("/assets/main-abc.js").unwrap().cache_control, "public, max-age=31536000, immutable");
        assert_eq!(web.cache_usage(), (2, 11));

        std::fs::write(dir.join("app/index.html"), b"<p>two!</p>").unwrap();
        assert_eq!(&web.get("/index.html").unwrap().bytes[..], b"<p>two!</p>");
        assert_eq!(web.cache_usage(), (2, 12));

        assert!(matches!(web.get("/leak"), Err(ContentError::NotFound)));
        assert!(matches!(web.get("/../secret"), Err(ContentError::BadPath)));
        assert!(matches!(web.get("/missing.js"), Err(ContentError::NotFound)));
        std::fs::remove_dir_all(dir).unwrap();
    }
}
