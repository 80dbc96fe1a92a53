// Bisection of a rung's quantiser pair for its target bit rate (rate_target.h). Rate falls
// monotonically with the quantiser, so the smallest geometry QP whose rate is at or below the
// target is found in log2(range) encodes; that QP and the one below it bracket the target, and
// the nearer of the two in ratio (|log(rate / target)|) is kept, so the fit is within half a QP
// step (about 6 % of rate for x264 and x265, whose rate roughly doubles every 6 QP) of the
// target on the measured segment.
#include "rate_target.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <exception>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

#include "encode_scene.h"

namespace holoquic {
namespace {

/// Runs task(i) for i in [0, count) on up to `threads` threads; rethrows the first failure as
/// it was thrown (an input error stays one).
void runTasks(size_t count, unsigned threads, const std::function<void(size_t)>& task) {
  std::atomic<size_t> next{0};
  std::exception_ptr failure;
  std::mutex lock;
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, std::min<unsigned>(threads, unsigned(count))); ++t)
    pool.emplace_back([&] {
      for (size_t i; (i = next++) < count;) {
        try {
          task(i);
        } catch (...) {
          std::lock_guard<std::mutex> guard(lock);
          if (!failure) failure = std::current_exception();
          next = count;
        }
      }
    });
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

}  // namespace

RateFit fitRungToRate(const Rung& rung, const std::function<double(const Rung&)>& measureMbps) {
  if (!(rung.targetMbps > 0)) throw std::invalid_argument("fitRungToRate: the rung has no target rate");
  // Geometry QPs that keep both quantisers within 0 … 51.
  const int lowest = std::max(0, -rung.attributeQpOffset), highest = std::min(51, 51 - rung.attributeQpOffset);
  if (lowest > highest) throw std::invalid_argument("fitRungToRate: attribute QP offset outside −51 … 51");
  std::map<int, double> rates;  // geometry QP → measured Mbit/s
  auto withQp = [&](int qp) {
    Rung r = rung;
    r.geometryQp = qp;
    r.attributeQp = qp + rung.attributeQpOffset;
    return r;
  };
  auto rate = [&](int qp) {
    auto it = rates.find(qp);
    if (it == rates.end()) it = rates.emplace(qp, measureMbps(withQp(qp))).first;
    return it->second;
  };
  // Smallest QP in [lo, hi] whose rate is at or below the target (hi when none is).
  int lo = lowest, hi = highest;
  while (lo < hi) {
    const int mid = lo + (hi - lo) / 2;
    if (rate(mid) > rung.targetMbps) lo = mid + 1;
    else hi = mid;
  }
  int best = lo;
  const double at = rate(lo);
  // lo's rate is at or below the target unless lo is the highest QP; the QP below brackets it.
  if (lo > lowest && at <= rung.targetMbps) {
    const double above = rate(lo - 1);
    if (std::fabs(std::log(above / rung.targetMbps)) < std::fabs(std::log(at / rung.targetMbps))) best = lo - 1;
  }
  RateFit fit;
  fit.rung = withQp(best);
  fit.mbps = rate(best);
  fit.trials = unsigned(rates.size());
  // Out of reach: even the finest quantisers stay below the target, or the coarsest above it.
  fit.reached = !((best == lowest && fit.mbps < rung.targetMbps) || (best == highest && fit.mbps > rung.targetMbps));
  return fit;
}

std::vector<std::vector<Rung>> fitLadders(const ScenePlan& plan, const std::vector<Source>& sources) {
  std::vector<std::vector<Rung>> ladders(sources.size(), plan.ladder);
  std::vector<std::pair<size_t, size_t>> fits;  // (object, rung) with a target
  std::vector<size_t> objects;                  // objects with any
  for (size_t o = 0; o < sources.size(); ++o)
    for (size_t q = 0; q < plan.ladder.size(); ++q)
      if (plan.ladder[q].targetMbps > 0) {
        if (objects.empty() || objects.back() != o) objects.push_back(o);
        fits.emplace_back(o, q);
      }
  if (fits.empty()) return ladders;
  std::fprintf(stderr, "holoquic-pack: fitting %zu rungs to their target rates on each object's first segment (at most %u encodes each)\n",
               fits.size(), kMaxRateTrials);
  const double segmentSeconds = double(plan.framesPerSegment()) / plan.frameRate;
  std::vector<std::vector<vpcc::InputFrame>> firstSegment(sources.size());
  runTasks(objects.size(), plan.threads, [&](size_t i) { firstSegment[objects[i]] = sources[objects[i]].segment(0); });
  std::vector<RateFit> results(fits.size());
  runTasks(fits.size(), plan.threads, [&](size_t i) {
    const auto [o, q] = fits[i];
    auto video = vpcc::makeLibavEncoder();
    results[i] = fitRungToRate(plan.ladder[q], [&](const Rung& candidate) {
      const auto bytes = vpcc::encodeSequence(firstSegment[o], rungConfig(plan, candidate, sources[o].bits), *video);
      return double(bytes.size()) * 8 / segmentSeconds / 1e6;
    });
  });
  for (size_t i = 0; i < fits.size(); ++i) {
    const auto [o, q] = fits[i];
    const RateFit& fit = results[i];
    ladders[o][q] = fit.rung;
    std::fprintf(stderr, "holoquic-pack: %s quality %zu: target %.3g Mbit/s → geometry QP %d, attribute QP %d: %.3g Mbit/s on segment 0 (%u encodes)%s\n",
                 sources[o].id.c_str(), q, fit.rung.targetMbps, fit.rung.geometryQp, fit.rung.attributeQp, fit.mbps, fit.trials,
                 fit.reached ? "" : fit.mbps < fit.rung.targetMbps ? " — the finest quantisers give no more" : " — the coarsest quantisers give no less");
  }
  return ladders;
}

}  // namespace holoquic
