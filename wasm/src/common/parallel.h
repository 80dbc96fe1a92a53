// The decoder's worker threads: a small fixed pool that runs independent pieces of one frame's
// work side by side (the threaded wasm module, and natively when asked), or inline on the
// calling thread when the pool has no helpers (the single-threaded wasm module, the default).
//
// Every parallel stage writes only its own outputs (one slot per item, or state owned by one
// task) and reads only what was final before the stage began, so the result never depends on
// how many threads ran it or how the items were split: both modules give the same frames, bit
// for bit (the conformance tests check each module against the same MD5s).
#pragma once

#include <cstddef>
#include <functional>

namespace vpcc::parallel {

/// Helper threads this process uses besides the calling thread (0: everything runs inline).
/// The default is 0 in the single-threaded module and natively (there the environment variable
/// VPCC_THREADS=N asks for N − 1); the threaded module picks min(logical cores − 1,
/// kMaxHelpers), at least 1. Call between frames, never during one.
void setHelpers(unsigned helpers);
unsigned helpers();

/// The most helper threads the pool ever starts (the threaded module pre-spawns this many
/// Web Workers: a thread cannot start a worker while it blocks).
constexpr unsigned kMaxHelpers = 3;

/// Runs both functions, side by side when there is a helper, and returns when both have
/// finished. An exception thrown by either is rethrown here (the first task's first). Parallel
/// calls made inside either function (or inside a forRanges body) run inline on its thread.
void runBoth(const std::function<void()>& first, const std::function<void()>& second);

/// Calls body(begin, end) over consecutive sub-ranges of [0, count) of at least `grain` items
/// each, on the calling thread and the helpers; returns when all have finished (rethrowing the
/// first exception, if any).
void forRanges(size_t count, size_t grain, const std::function<void(size_t begin, size_t end)>& body);

#if !defined(__EMSCRIPTEN__)
/// Natively, for benchmarks on a shared machine: the calling thread's CPU time so far (ms), each
/// parallel job it ran counted as its busiest thread's CPU time in that job instead of its own —
/// what the work would take on idle cores, whatever waiting for a core cost here. Compare two
/// readings. (Plain CPU time adds the threads' work up; wall time counts the waits.)
double criticalPathMs();
#endif

}  // namespace vpcc::parallel
