use std::sync::{Arc, Barrier};

use super::*;

/// A temporary directory removed on drop.
struct Dir(PathBuf);

impl Dir {
    fn new() -> Self {
        let p = std::env::temp_dir().join(format!("holoquic-filecache-{}-{}", std::process::id(), rand::random::<u64>()));
        std::fs::create_dir_all(&p).unwrap();
        Self(p.canonicalize().unwrap())
    }

    fn write(&self, name: &str, bytes: &[u8]) -> PathBuf {
        let path = self.0.join(name);
        std::fs::write(&path, bytes).unwrap();
        path
    }
}

impl Drop for Dir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

fn cache(total_bytes: usize, max_entry_bytes: usize) -> FileCache {
    FileCache::new(CacheLimits { total_bytes, max_entry_bytes })
}

#[test]
fn a_file_rewritten_in_place_is_read_again() {
    let dir = Dir::new();
    let path = dir.write("manifest.mpd", b"generation 1");
    let cache = cache(1 << 20, 1 << 20);
    let first = cache.read(&path, 1 << 20).unwrap();
    assert_eq!(&first.bytes[..], b"generation 1");
    assert_eq!(cache.usage(), (1, 12));
    // Same size, other bytes: only the modification time (and the bytes) differ.
    std::fs::write(&path, b"generation 2").unwrap();
    let second = cache.read(&path, 1 << 20).unwrap();
    assert_eq!(&second.bytes[..], b"generation 2");
    assert_ne!(first.version.etag(), second.version.etag());
    assert_eq!(cache.usage(), (1, 12), "the new version replaced the old one");
    cache.check_accounting();
}

#[test]
fn a_file_replaced_by_a_rename_is_read_again() {
    let dir = Dir::new();
    let path = dir.write("seg-00001.v3c", b"old");
    let cache = cache(1 << 20, 1 << 20);
    assert_eq!(&cache.read(&path, 1 << 20).unwrap().bytes[..], b"old");
    let staged = dir.write(".seg-00001.v3c.tmp", b"newer bytes");
    std::fs::rename(&staged, &path).unwrap();
    let after = cache.read(&path, 1 << 20).unwrap();
    assert_eq!(&after.bytes[..], b"newer bytes");
    assert_eq!(cache.usage(), (1, 11));
    std::fs::remove_file(&path).unwrap();
    assert!(matches!(cache.read(&path, 1 << 20), Err(ContentError::NotFound)));
    cache.check_accounting();
}

#[test]
fn the_least_recently_used_file_is_evicted() {
    let dir = Dir::new();
    let [a, b, c] = ["a", "b", "c"].map(|name| dir.write(name, b"1234"));
    let cache = cache(10, 10);
    for path in [&a, &b, &a, &c] {
        cache.read(path, 100).unwrap();
    }
    assert_eq!(cache.usage(), (2, 8));
    // a was used after b, so b went; a is still a hit (its version unchanged), b is read again.
    let before = cache.usage();
    cache.read(&a, 100).unwrap();
    assert_eq!(cache.usage(), before, "a hit changes nothing");
    cache.read(&b, 100).unwrap();
    assert_eq!(cache.usage(), (2, 8));
    cache.check_accounting();
}

#[test]
fn large_files_are_served_but_not_cached_and_limits_hold() {
    let dir = Dir::new();
    let big = dir.write("big", &[7; 100]);
    let cache = cache(1000, 50);
    assert_eq!(cache.read(&big, 1000).unwrap().bytes.len(), 100);
    assert_eq!(cache.usage(), (0, 0));
    assert!(matches!(cache.read(&big, 99), Err(ContentError::TooLarge { limit: 99 })));
    assert!(matches!(cache.read(&dir.0, 1000), Err(ContentError::NotFound)), "a directory is not a file");
}

#[test]
fn versions_carry_size_and_modification_time() {
    let dir = Dir::new();
    let path = dir.write("x", b"12345");
    let snapshot = cache(100, 100).read(&path, 100).unwrap();
    assert_eq!(snapshot.version.size(), 5);
    assert_eq!(snapshot.version.modified(), std::fs::metadata(&path).unwrap().modified().unwrap());
    let etag = snapshot.version.etag();
    assert!(etag.starts_with('"') && etag.ends_with('"') && etag.len() > 6, "{etag}");
}

/// Many threads miss on the same files at once, on different files, while a writer replaces
/// some of them: the byte count always equals the entries and stays within the budget.
#[test]
fn the_byte_count_is_exact_under_racing_misses() {
    const THREADS: usize = 8;
    let dir = Dir::new();
    let files: Vec<PathBuf> = (0..24).map(|i| dir.write(&format!("f{i}"), &vec![i as u8; 100 + 37 * i])).collect();
    let total: usize = (0..24).map(|i| 100 + 37 * i).sum();
    let cache = Arc::new(cache(total / 3, 1000));

    // Round 1: every thread misses on the same file at the same moment.
    let start = Arc::new(Barrier::new(THREADS));
    let threads: Vec<_> = (0..THREADS)
        .map(|_| {
            let (cache, start, path) = (Arc::clone(&cache), Arc::clone(&start), files[5].clone());
            std::thread::spawn(move || {
                start.wait();
                cache.read(&path, 1 << 20).unwrap().bytes.len()
            })
        })
        .collect();
    for t in threads {
        assert_eq!(t.join().unwrap(), 100 + 37 * 5);
    }
    assert_eq!(cache.usage(), (1, 100 + 37 * 5), "one entry, counted once");
    cache.check_accounting();

    // Round 2: different and same keys, evictions, and files changing size underneath.
    let start = Arc::new(Barrier::new(THREADS + 1));
    let readers: Vec<_> = (0..THREADS)
        .map(|t| {
            let (cache, start, files) = (Arc::clone(&cache), Arc::clone(&start), files.clone());
            std::thread::spawn(move || {
                start.wait();
                for i in 0..2000 {
                    let path = &files[(i * (t + 1) + t) % files.len()];
                    let _ = cache.read(path, 1 << 20);
                    if i % 100 == 0 {
                        cache.check_accounting();
                    }
                }
            })
        })
        .collect();
    let writer = {
        let (start, files) = (Arc::clone(&start), files.clone());
        std::thread::spawn(move || {
            start.wait();
            for round in 0..200usize {
                let i = round % 6;
                let staged = files[i].with_extension("tmp");
                std::fs::write(&staged, vec![round as u8; 50 + 10 * (round % 17)]).unwrap();
                std::fs::rename(&staged, &files[i]).unwrap();
            }
        })
    };
    for t in readers {
        t.join().unwrap();
    }
    writer.join().unwrap();
    cache.check_accounting();
    let (entries, bytes) = cache.usage();
    assert!(entries > 0 && bytes <= total / 3);
}
