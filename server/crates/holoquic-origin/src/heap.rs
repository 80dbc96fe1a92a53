//! Giving freed heap memory back to the system, so the origin's memory comes back down after an
//! overload.
//!
//! Why: glibc's malloc keeps the pages of freed memory for reuse and returns them only from the
//! top of a heap. An overload (objects queued while the machine is busy) fills the heap with
//! quiche's 4-KiB stream-buffer chunks and object copies; freed again, they leave holes between
//! the chunks still live, none at a heap's top, so the process kept its peak size for good — the
//! "steps" of the 30-minute run (docs/benchmarks.md → "Origin under load"). Measured after such
//! an overload, once the sessions had ended: 212 MB resident, of which `malloc_trim(0)` gave
//! 195 MB back at once (17 MB left): free memory held by the allocator, not live buffers.
//!
//! So a thread checks the heap every [`CHECK_INTERVAL`] and, when it holds more than
//! [`TRIM_ABOVE_FREE_BYTES`] free, calls `malloc_trim(0)`, which hands the free pages of every
//! arena — between live chunks too — back to the kernel (`MADV_DONTNEED`). The threshold keeps
//! it from trimming the few megabytes a steady load frees and allocates again every second. It
//! runs beside the QUIC loop, never on it: a trim locks each arena while it hands its pages back
//! (0.34 s for 96 MB freed in 4-KiB chunks on the busy 2-core VM, `tests/heap_trim.rs`), and an
//! allocation in that arena waits meanwhile — which is why it waits for a real surplus and is
//! not run every round.
//!
//! glibc only (the `libc` crate's bindings); under another allocator or C library there is
//! nothing to do and no thread is started.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::metrics::Metrics;

/// How often the heap is checked.
pub const CHECK_INTERVAL: Duration = Duration::from_secs(10);

/// Free heap bytes above which a check trims: a few seconds of the demo's objects at 100
/// sessions are churned through the heap without returning anything, an overload's backlog is
/// given back.
pub const TRIM_ABOVE_FREE_BYTES: u64 = 16 << 20;

/// What one trim did.
#[derive(Debug, Clone, Copy)]
pub struct Trim {
    /// Free heap bytes before the trim (glibc's count; freed pages still count as free after it).
    pub free_bytes: u64,
    /// How much the process's resident set shrank.
    pub released_bytes: u64,
    pub took: Duration,
}

/// Bytes the allocator holds free in its heaps (glibc's `mallinfo2().fordblks`), if known.
pub fn free_bytes() -> Option<u64> {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    {
        // SAFETY: mallinfo2 takes no arguments and only reads the allocator's state.
        let info = unsafe { libc::mallinfo2() };
        Some(info.fordblks as u64)
    }
    #[cfg(not(all(target_os = "linux", target_env = "gnu")))]
    None
}

/// Trims the heap when it holds more than `threshold` bytes free; returns what the trim did, or
/// None when there was nothing worth giving back (or no glibc).
pub fn trim_if_above(threshold: u64) -> Option<Trim> {
    let free = free_bytes()?;
    if free <= threshold {
        return None;
    }
    let before = resident_bytes();
    let start = Instant::now();
    release_free_pages();
    let took = start.elapsed();
    let released = before.zip(resident_bytes()).map_or(0, |(b, a)| b.saturating_sub(a));
    Some(Trim { free_bytes: free, released_bytes: released, took })
}

/// Hands the free pages of every arena back to the kernel (glibc's `malloc_trim(0)`).
fn release_free_pages() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only rearranges the allocator's free memory; 0 keeps no padding.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// The process's resident set in bytes (`/proc/self/statm`), if readable.
pub fn resident_bytes() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: sysconf has no preconditions.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok()?)
}

/// Starts the thread that checks and trims the heap every `CHECK_INTERVAL` for as long as the
/// process lives, counting into `metrics` (`heap_free_bytes`, `heap_trims_total`,
/// `heap_released_bytes_total`). Does nothing where the allocator is not glibc's.
pub fn spawn_trimmer(metrics: Arc<Metrics>) -> std::io::Result<()> {
    if free_bytes().is_none() {
        return Ok(());
    }
    std::thread::Builder::new().name("heap-trim".into()).spawn(move || loop {
        std::thread::sleep(CHECK_INTERVAL);
        check(&metrics);
    })?;
    Ok(())
}

/// One check of the trimming thread.
fn check(metrics: &Metrics) {
    let trim = trim_if_above(TRIM_ABOVE_FREE_BYTES);
    if let Some(free) = free_bytes() {
        metrics.heap_free_bytes.store(free, std::sync::atomic::Ordering::Relaxed);
    }
    if let Some(t) = trim {
        Metrics::inc(&metrics.heap_trims_total);
        Metrics::add(&metrics.heap_released_bytes_total, t.released_bytes);
        let (free_mb, released_mb, took_ms) = (t.free_bytes >> 20, t.released_bytes >> 20, t.took.as_millis() as u64);
        // Worth a line when it gave back what an overload left; the small ones are routine.
        if t.released_bytes > TRIM_ABOVE_FREE_BYTES {
            tracing::info!(free_mb, released_mb, took_ms, "gave freed heap memory back to the system");
        } else {
            tracing::debug!(free_mb, released_mb, took_ms, "trimmed the heap");
        }
    }
}
