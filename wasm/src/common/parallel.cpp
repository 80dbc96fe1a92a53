// The decoder's worker threads (parallel.h): helpers started once and kept, each waiting for
// the next job; a job is a count of items that the caller and the helpers claim one at a time.
#include "common/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <cstdlib>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>
#if !defined(__EMSCRIPTEN__)
#include <time.h>
#endif

#if defined(__EMSCRIPTEN_PTHREADS__)
#include <emscripten.h>
#include <emscripten/threading.h>

// Memory grown by a helper (a vector allocated inside a task) replaces the buffer behind the
// module's shared memory; the calling thread's JavaScript views (Module.HEAPU8, which the
// player reads after each call) would still show the old, shorter one. Renew them after every
// job, before control returns to JavaScript.
EM_JS(void, vpcc_renew_heap_views, (), {
  if (wasmMemory.buffer != buffer) updateGlobalBufferAndViews(wasmMemory.buffer);
});
#endif

namespace vpcc::parallel {

#if defined(__EMSCRIPTEN__) && !defined(__EMSCRIPTEN_PTHREADS__)
// The single-threaded wasm module: no threads to start, everything inline.
void setHelpers(unsigned) {}
unsigned helpers() { return 0; }
void runBoth(const std::function<void()>& first, const std::function<void()>& second) {
  first();
  second();
}
void forRanges(size_t count, size_t, const std::function<void(size_t, size_t)>& body) {
  if (count) body(0, count);
}
#else
namespace {

// Whether this thread is running an item of a job: a parallel call made from inside one (a
// stage that splits its own work, run as one side of runBoth) runs inline on that thread, since
// the pool runs one job at a time.
thread_local bool insideJob = false;

#if defined(__EMSCRIPTEN__)
double threadCpuMs() { return 0; }
#else
double threadCpuMs() {
  timespec t;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return double(t.tv_sec) * 1e3 + double(t.tv_nsec) / 1e6;
}
#endif

#if defined(__EMSCRIPTEN_PTHREADS__)
unsigned defaultHelpers() {
  const int cores = emscripten_num_logical_cores();
  return std::max(1u, std::min(kMaxHelpers, unsigned(cores > 1 ? cores - 1 : 1)));
}
#else
// Natively the tools decode on one thread unless VPCC_THREADS names a count (tests and
// benchmarks of the threaded stages).
unsigned defaultHelpers() {
  const char* threads = std::getenv("VPCC_THREADS");
  const int count = threads ? std::atoi(threads) : 1;
  return count > 1 ? std::min(kMaxHelpers, unsigned(count - 1)) : 0;
}
#endif

class Pool {
 public:
  ~Pool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
  }

  unsigned helpers = defaultHelpers();
  /// Since the pool started: the calling thread's CPU time in jobs, and each job's busiest
  /// participant's CPU time in it, added up (ms; natively only).
  double callerInJobsMs_ = 0, busiestInJobsMs_ = 0;

  /// Calls item(i) for every i in [0, count), on the caller and up to `helpers` threads.
  void run(size_t count, const std::function<void(size_t)>& item) {
    const unsigned wanted = insideJob ? 0 : unsigned(std::min<size_t>(helpers, count > 0 ? count - 1 : 0));
    if (wanted == 0) {
      for (size_t i = 0; i < count; ++i) item(i);
      return;
    }
    start(wanted);
    errors_.assign(count, nullptr);
    jobCpuMs_.assign(wanted + 1, 0.0);
    {
      std::lock_guard<std::mutex> lock(mutex_);
      item_ = &item;
      count_ = count;
      next_.store(0);
      participants_ = wanted;
      busy_ = wanted;
      ++generation_;
    }
    wake_.notify_all();
    work(0);
    {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, [&] { return busy_ == 0; });
      item_ = nullptr;
    }
    // (the caller is the only thread that reads these)
    callerInJobsMs_ += jobCpuMs_[0];
    busiestInJobsMs_ += *std::max_element(jobCpuMs_.begin(), jobCpuMs_.end());
#if defined(__EMSCRIPTEN_PTHREADS__)
    vpcc_renew_heap_views();
#endif
    for (std::exception_ptr& e : errors_)
      if (e) std::rethrow_exception(e);
  }

 private:
  // Starts helper threads up to `count` (never stopped before the process ends).
  void start(unsigned count) {
    while (threads_.size() < count) {
      const unsigned id = unsigned(threads_.size());
      threads_.emplace_back([this, id] { helperLoop(id); });
    }
  }

  // Claims items until none is left; an item's exception is kept for the caller. Participant 0
  // is the caller, helper h is h + 1.
  void work(unsigned participant) {
    const double cpuAtStart = threadCpuMs();
    insideJob = true;
    for (size_t i; (i = next_.fetch_add(1)) < count_;) {
      try {
        (*item_)(i);
      } catch (...) {
        errors_[i] = std::current_exception();
      }
    }
    insideJob = false;
    jobCpuMs_[participant] = threadCpuMs() - cpuAtStart;
  }

  void helperLoop(unsigned id) {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock<std::mutex> lock(mutex_);
        wake_.wait(lock, [&] { return stopping_ || generation_ != seen; });
        if (stopping_) return;
        seen = generation_;
        if (id >= participants_) continue;  // this job needs fewer helpers
      }
      work(id + 1);
      std::lock_guard<std::mutex> lock(mutex_);
      if (--busy_ == 0) done_.notify_one();
    }
  }

  std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(size_t)>* item_ = nullptr;
  size_t count_ = 0;
  std::atomic<size_t> next_{0};
  std::vector<std::exception_ptr> errors_;
  std::vector<double> jobCpuMs_;  // per participant, this job
  unsigned participants_ = 0, busy_ = 0;
  uint64_t generation_ = 0;
  bool stopping_ = false;
};

Pool& pool() {
  static Pool instance;
  return instance;
}

}  // namespace

void setHelpers(unsigned count) { pool().helpers = std::min(count, kMaxHelpers); }
unsigned helpers() { return pool().helpers; }

#if !defined(__EMSCRIPTEN__)
double criticalPathMs() { return threadCpuMs() - pool().callerInJobsMs_ + pool().busiestInJobsMs_; }
#endif

void runBoth(const std::function<void()>& first, const std::function<void()>& second) {
  pool().run(2, [&](size_t i) { i == 0 ? first() : second(); });
}

void forRanges(size_t count, size_t grain, const std::function<void(size_t, size_t)>& body) {
  if (count == 0) return;
  grain = std::max<size_t>(grain, 1);
  // A few pieces per thread, so that one slow piece does not hold the others up.
  const size_t threads = size_t(helpers()) + 1;
  const size_t pieces = std::max<size_t>(1, std::min((count + grain - 1) / grain, threads * 4));
  const size_t step = (count + pieces - 1) / pieces;
  pool().run(pieces, [&](size_t piece) {
    const size_t begin = piece * step, end = std::min(count, begin + step);
    if (begin < end) body(begin, end);
  });
}

#endif

}  // namespace vpcc::parallel
