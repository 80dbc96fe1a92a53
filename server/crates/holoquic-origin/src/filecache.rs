//! A bounded cache of whole files (or objects of a bucket) that stays correct while they change.
//!
//! Both the content store (`/content/…`) and the web app (`/`) serve small files many times, so
//! each keeps one [`FileCache`]. Three promises:
//!
//! - **Byte-accurate.** The byte count is the sum of the entries' sizes and never exceeds the
//!   budget, however many threads miss on the same file at once: a load happens outside the lock,
//!   and the insert that follows is an insert-if-absent under it, so a racing second copy is
//!   dropped instead of being counted twice.
//! - **Fresh.** Every access stats the file and compares its [`Version`] — device, inode, size,
//!   modification time — to the cached one (one `stat`, about 2 µs, some 15 % of a hit:
//!   docs/benchmarks.md, "HTTPS under idle connections, and the content cache's revalidation").
//!   A file rewritten in place or replaced by a rename is read again; no restart and no signal
//!   are needed. Objects of a bucket (`bucket.rs`) cannot be stat-ed for free: their entries
//!   remember when the store last confirmed them, and the bucket asks again (a conditional GET
//!   on the store's ETag) once that is older than its revalidation interval.
//! - **Whole versions.** A file is read through one descriptor, checked before and after the
//!   read; bytes that changed under the reader are retried, and never cached.

use std::collections::{BTreeMap, HashMap};
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use bytes::Bytes;

use crate::content::ContentError;

/// How often a file that keeps changing while it is read is read again before it is served
/// uncached as last read.
const READ_ATTEMPTS: usize = 3;

/// What identifies one version of a file or object: a writer that changes the bytes changes at
/// least one of these (a rename brings a new inode; an in-place write a new modification time, in
/// nanoseconds on the file systems the origin runs on; a store a new ETag).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Version {
    identity: Identity,
    size: u64,
    modified_ns: i128,
}

#[derive(Debug, Clone, PartialEq, Eq, Hash)]
enum Identity {
    File {
        device: u64,
        inode: u64,
    },
    /// The store's entity tag, as it sent it (quoted).
    Object {
        etag: Arc<str>,
    },
}

impl Version {
    pub fn of(meta: &std::fs::Metadata) -> Self {
        Self {
            identity: Identity::File { device: meta.dev(), inode: meta.ino() },
            size: meta.size(),
            modified_ns: i128::from(meta.mtime()) * 1_000_000_000 + i128::from(meta.mtime_nsec()),
        }
    }

    /// The version of an object a store describes by its ETag (quoted here when it was not).
    pub fn of_object(etag: &str, size: u64, modified: SystemTime) -> Self {
        let etag: Arc<str> = if etag.ends_with('"') { etag.into() } else { format!("\"{etag}\"").into() };
        let modified_ns = modified.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_nanos() as i128);
        Self { identity: Identity::Object { etag }, size, modified_ns }
    }

    /// A strong entity tag (RFC 9110 §8.8.3), quoted: it changes whenever the version does, so a
    /// client holding a manifest can tell whether a segment still belongs to it. An object's is
    /// the store's own, so every origin serving one bucket answers with the same tag.
    pub fn etag(&self) -> String {
        match &self.identity {
            Identity::File { inode, .. } => format!("\"{:x}-{:x}-{:x}\"", inode, self.size, self.modified_ns),
            Identity::Object { etag } => etag.to_string(),
        }
    }

    /// The store's ETag of an object (for a conditional GET); None for a file.
    pub fn store_etag(&self) -> Option<&str> {
        match &self.identity {
            Identity::Object { etag } => Some(etag),
            Identity::File { .. } => None,
        }
    }

    /// The modification time (for `Last-Modified`).
    pub fn modified(&self) -> SystemTime {
        let ns = self.modified_ns.max(0);
        UNIX_EPOCH + Duration::new((ns / 1_000_000_000) as u64, (ns % 1_000_000_000) as u32)
    }

    pub fn size(&self) -> u64 {
        self.size
    }
}

/// The bytes of one version of a file.
#[derive(Debug, Clone)]
pub struct Snapshot {
    pub bytes: Bytes,
    pub version: Version,
}

/// How much a [`FileCache`] may hold.
#[derive(Debug, Clone, Copy)]
pub struct CacheLimits {
    /// Bytes of all entries together.
    pub total_bytes: usize,
    /// Larger files are read every time and never cached.
    pub max_entry_bytes: usize,
}

pub struct FileCache {
    limits: CacheLimits,
    state: Mutex<State>,
}

/// Entries and their least-recently-used order: `recency` maps a use tick to the entry used then,
/// so the oldest is its first key.
#[derive(Default)]
struct State {
    entries: HashMap<PathBuf, Entry>,
    recency: BTreeMap<u64, PathBuf>,
    tick: u64,
    bytes: usize,
}

struct Entry {
    snapshot: Snapshot,
    used: u64,
    /// When the version was last known current (read, or confirmed by the store).
    checked: Instant,
}

impl FileCache {
    pub fn new(limits: CacheLimits) -> Self {
        Self { limits, state: Mutex::new(State::default()) }
    }

    /// The current bytes of `path`, a regular file the caller has already resolved and checked
    /// (canonical, inside its root), from the cache when its version is unchanged. Files larger
    /// than `limit` are refused.
    pub fn read(&self, path: &Path, limit: u64) -> Result<Snapshot, ContentError> {
        self.read_timed(path, limit).map(|(snapshot, _)| snapshot)
    }

    /// [`FileCache::read`], also saying whether the file was read from disk and how long that
    /// took (None: a cache hit).
    pub fn read_timed(&self, path: &Path, limit: u64) -> Result<(Snapshot, Option<Duration>), ContentError> {
        let meta = std::fs::metadata(path).map_err(not_found_or_io)?;
        check_file(&meta, limit)?;
        if let Some(hit) = self.lookup(path, &Version::of(&meta)) {
            return Ok((hit, None));
        }
        let started = Instant::now();
        for _ in 1..READ_ATTEMPTS {
            let (snapshot, stable) = read_once(path, limit)?;
            if stable {
                return Ok((self.insert(path, snapshot), Some(started.elapsed())));
            }
        }
        Ok((read_once(path, limit)?.0, Some(started.elapsed())))
    }

    /// Forgets every entry (the next access of each file reads it again).
    pub fn clear(&self) {
        let mut state = self.lock();
        *state = State::default();
    }

    /// Entries held and their bytes.
    pub fn usage(&self) -> (usize, usize) {
        let state = self.lock();
        (state.entries.len(), state.bytes)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        // The state is consistent after every statement that can panic (none can while it is
        // held but allocation), so a poisoned lock is still usable.
        self.state.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn lookup(&self, path: &Path, version: &Version) -> Option<Snapshot> {
        self.cached(path).filter(|(snapshot, _)| snapshot.version == *version).map(|(snapshot, _)| snapshot)
    }

    /// What is cached under `key`, whatever its version, and when it was last known current;
    /// counts as a use.
    pub(crate) fn cached(&self, key: &Path) -> Option<(Snapshot, Instant)> {
        let mut state = self.lock();
        let state = &mut *state;
        let entry = state.entries.get_mut(key)?;
        state.tick += 1;
        state.recency.remove(&entry.used);
        entry.used = state.tick;
        state.recency.insert(state.tick, key.to_owned());
        Some((entry.snapshot.clone(), entry.checked))
    }

    /// Records that `version` of `key` was just confirmed current (or that asking failed, so the
    /// next request does not ask again at once).
    pub(crate) fn confirm(&self, key: &Path, version: &Version) {
        let mut state = self.lock();
        if let Some(entry) = state.entries.get_mut(key).filter(|e| e.snapshot.version == *version) {
            entry.checked = Instant::now();
        }
    }

    /// Drops the entry of `key` (its object is gone).
    pub(crate) fn forget(&self, key: &Path) {
        let mut state = self.lock();
        if let Some(old) = state.entries.remove(key) {
            state.recency.remove(&old.used);
            state.bytes -= old.snapshot.bytes.len();
        }
    }

    /// Inserts `snapshot` unless the same version is already cached (a racing load won), and
    /// returns what the cache now serves for that version.
    pub(crate) fn insert(&self, path: &Path, snapshot: Snapshot) -> Snapshot {
        let size = snapshot.bytes.len();
        let mut state = self.lock();
        let state = &mut *state;
        if let Some(existing) = state.entries.get(path) {
            if existing.snapshot.version == snapshot.version {
                let served = existing.snapshot.clone();
                state.entries.get_mut(path).expect("present").checked = Instant::now();
                return served;
            }
            // An older version: replaced below (or dropped, if the new one is not cached).
            let old = state.entries.remove(path).expect("present");
            state.recency.remove(&old.used);
            state.bytes -= old.snapshot.bytes.len();
        }
        if size > self.limits.max_entry_bytes || size > self.limits.total_bytes {
            return snapshot;
        }
        while state.bytes + size > self.limits.total_bytes {
            let Some((_, oldest)) = state.recency.pop_first() else { break };
            if let Some(evicted) = state.entries.remove(&oldest) {
                state.bytes -= evicted.snapshot.bytes.len();
            }
        }
        state.tick += 1;
        state.recency.insert(state.tick, path.to_owned());
        state.entries.insert(path.to_owned(), Entry { snapshot: snapshot.clone(), used: state.tick, checked: Instant::now() });
        state.bytes += size;
        snapshot
    }

    /// Panics unless the byte count is the sum of the entries and within the budget, and the
    /// recency order names exactly the entries.
    #[cfg(test)]
    pub(crate) fn check_accounting(&self) {
        let state = self.lock();
        let sum: usize = state.entries.values().map(|e| e.snapshot.bytes.len()).sum();
        assert_eq!(state.bytes, sum, "byte count drifted from the entries");
        assert!(state.bytes <= self.limits.total_bytes, "over budget: {} > {}", state.bytes, self.limits.total_bytes);
        assert_eq!(state.recency.len(), state.entries.len());
        assert!(state.recency.iter().all(|(tick, path)| state.entries.get(path).is_some_and(|e| e.used == *tick)));
    }
}

/// Reads the file through one descriptor; `stable` says its version was the same before and
/// after the read and the byte count matches it.
fn read_once(path: &Path, limit: u64) -> Result<(Snapshot, bool), ContentError> {
    let mut file = std::fs::File::open(path).map_err(not_found_or_io)?;
    let before = file.metadata()?;
    check_file(&before, limit)?;
    let mut buf = Vec::with_capacity(before.len() as usize);
    // One byte past the limit is enough to know it grew beyond it.
    (&mut file).take(limit + 1).read_to_end(&mut buf)?;
    if buf.len() as u64 > limit {
        return Err(ContentError::TooLarge { limit });
    }
    let version = Version::of(&before);
    let stable = Version::of(&file.metadata()?) == version && buf.len() as u64 == version.size;
    Ok((Snapshot { bytes: Bytes::from(buf), version }, stable))
}

fn check_file(meta: &std::fs::Metadata, limit: u64) -> Result<(), ContentError> {
    if !meta.is_file() {
        return Err(ContentError::NotFound);
    }
    if meta.len() > limit {
        return Err(ContentError::TooLarge { limit });
    }
    Ok(())
}

fn not_found_or_io(e: std::io::Error) -> ContentError {
    if e.kind() == std::io::ErrorKind::NotFound {
        ContentError::NotFound
    } else {
        ContentError::Io(e)
    }
}

#[cfg(test)]
#[path = "filecache_tests.rs"]
mod tests;
