//! The origin's heap trimming (`heap.rs`) against glibc's real allocator, in a process of its
//! own so that nothing else allocates meanwhile: memory freed between chunks that stay live is
//! kept by the allocator until trimmed, and the trim gives it back.

use holoquic_origin::heap;

/// The burst: as an overload leaves quiche's stream buffers, 4-KiB chunks, here 96 MiB of them.
const CHUNK: usize = 4096;
const BURST_BYTES: usize = 96 << 20;
/// Every this many chunks a small allocation stays live (the requests and buffers of sessions
/// that go on playing), so the freed chunks are holes, not the top of a heap.
const PINNED_EVERY: usize = 64;

/// Allocates the burst on a thread of its own (as the QUIC loop allocates in an arena of its
/// own), frees it but for the pins, and returns the pins.
fn burst_with_pins() -> Vec<Vec<u8>> {
    std::thread::spawn(|| {
        let mut chunks = Vec::with_capacity(BURST_BYTES / CHUNK);
        let mut pins = Vec::new();
        for i in 0..BURST_BYTES / CHUNK {
            chunks.push(vec![i as u8 | 1; CHUNK]);
            if i % PINNED_EVERY == 0 {
                pins.push(vec![1u8; 64]);
            }
        }
        drop(chunks);
        pins
    })
    .join()
    .unwrap()
}

#[test]
fn memory_freed_after_a_burst_goes_back_to_the_system() {
    let mb = |b: u64| b as f64 / (1 << 20) as f64;
    let before = heap::resident_bytes().unwrap();
    let pins = burst_with_pins();
    let after_burst = heap::resident_bytes().unwrap();
    // What the origin saw: the burst is freed, yet the process keeps it.
    assert!(
        after_burst > before + (BURST_BYTES as u64) * 3 / 4,
        "the allocator gave the freed burst back by itself (resident {:.1} → {:.1} MB): nothing left to trim",
        mb(before),
        mb(after_burst)
    );
    let trim = heap::trim_if_above(heap::TRIM_ABOVE_FREE_BYTES).expect("the free burst is above the trimming threshold");
    let after_trim = heap::resident_bytes().unwrap();
    eprintln!(
        "resident {:.1} MB before, {:.1} MB after the burst was freed, {:.1} MB after the trim ({:.1} MB free in the heap, trimmed in {:?})",
        mb(before),
        mb(after_burst),
        mb(after_trim),
        mb(trim.free_bytes),
        trim.took
    );
    assert!(after_trim < before + (BURST_BYTES as u64) / 4, "the trim left {:.1} MB resident ({:.1} MB before the burst)", mb(after_trim), mb(before));
    assert!(trim.released_bytes >= (BURST_BYTES as u64) / 2, "released {:.1} MB", mb(trim.released_bytes));
    // Below the threshold nothing is trimmed: a steady load's churn is left alone.
    assert!(heap::trim_if_above(u64::MAX).is_none());
    drop(pins);
}
