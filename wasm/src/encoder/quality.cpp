#include "vpcc/quality.h"

#include "eigen.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <vector>

namespace vpcc {
namespace {

/// Nearest-neighbour search on integer points: a sorted grid of 8³ cells searched in growing
/// rings until no closer point can exist.
class Grid {
 public:
  explicit Grid(const CloudView& c) : cloud_(c) {
    entries_.resize(c.count);
    for (size_t i = 0; i < c.count; ++i) entries_[i] = {key(cell(c.positions + i * 3)), uint32_t(i)};
    std::sort(entries_.begin(), entries_.end());
  }
  /// Index of the nearest point to p and its squared distance.
  std::pair<uint32_t, int64_t> nearest(const int32_t* p) const {
    const std::array<int64_t, 3> c = cell(p);
    int64_t best = std::numeric_limits<int64_t>::max();
    uint32_t bestIndex = 0;
    for (int64_t ring = 0;; ++ring) {
      for (int64_t dz = -ring; dz <= ring; ++dz)
        for (int64_t dy = -ring; dy <= ring; ++dy)
          for (int64_t dx = -ring; dx <= ring; ++dx) {
            if (std::max({std::abs(dx), std::abs(dy), std::abs(dz)}) != ring) continue;
            const std::array<int64_t, 3> n = {c[0] + dx, c[1] + dy, c[2] + dz};
            if (n[0] < 0 || n[1] < 0 || n[2] < 0) continue;
            const uint64_t k = key(n);
            auto it = std::lower_bound(entries_.begin(), entries_.end(), std::make_pair(k, uint32_t(0)));
            for (; it != entries_.end() && it->first == k; ++it) {
              const int32_t* q = cloud_.positions + size_t(it->second) * 3;
              const int64_t d = sq(q[0] - p[0]) + sq(q[1] - p[1]) + sq(q[2] - p[2]);
              if (d < best) best = d, bestIndex = it->second;
            }
          }
      // Every unvisited cell is at least ring·8 voxels away.
      if (best != std::numeric_limits<int64_t>::max() && best <= sq(ring * kCell)) break;
      if (ring > 1024) break;
    }
    return {bestIndex, best};
  }

 private:
  static constexpr int64_t kCell = 8;
  static int64_t sq(int64_t v) { return v * v; }
  static std::array<int64_t, 3> cell(const int32_t* p) { return {p[0] / kCell, p[1] / kCell, p[2] / kCell}; }
  static uint64_t key(const std::array<int64_t, 3>& c) { return uint64_t(c[0]) | uint64_t(c[1]) << 21 | uint64_t(c[2]) << 42; }
  const CloudView& cloud_;
  std::vector<std::pair<uint64_t, uint32_t>> entries_;
};

/// Unit normals of a cloud from the covariance of each point's 24 nearest grid neighbours
/// (approximated by the points of its cell ring), used for D2.
std::vector<std::array<double, 3>> normals(const CloudView& c) {
  std::vector<std::array<double, 3>> out(c.count, {0, 0, 1});
  // Covariance of the 3×3×3 cells of 4 voxels around each point.
  std::vector<std::pair<uint64_t, uint32_t>> keyed(c.count);
  auto key = [](int64_t x, int64_t y, int64_t z) { return uint64_t(x) | uint64_t(y) << 21 | uint64_t(z) << 42; };
  for (size_t i = 0; i < c.count; ++i) {
    const int32_t* p = c.positions + i * 3;
    keyed[i] = {key(p[0] >> 2, p[1] >> 2, p[2] >> 2), uint32_t(i)};
  }
  std::sort(keyed.begin(), keyed.end());
  std::vector<uint64_t> cellKeys;
  std::vector<std::array<double, 10>> sums;  // n x y z xx xy xz yy yz zz
  for (const auto& [k, i] : keyed) {
    if (cellKeys.empty() || cellKeys.back() != k) cellKeys.push_back(k), sums.push_back({});
    const int32_t* p = c.positions + size_t(i) * 3;
    auto& s = sums.back();
    const double x = p[0], y = p[1], z = p[2];
    s[0] += 1, s[1] += x, s[2] += y, s[3] += z, s[4] += x * x, s[5] += x * y, s[6] += x * z, s[7] += y * y, s[8] += y * z, s[9] += z * z;
  }
  for (size_t i = 0; i < c.count; ++i) {
    const int32_t* p = c.positions + i * 3;
    std::array<double, 10> s{};
    for (int dz = -1; dz <= 1; ++dz)
      for (int dy = -1; dy <= 1; ++dy)
        for (int dx = -1; dx <= 1; ++dx) {
          const int64_t cx = (p[0] >> 2) + dx, cy = (p[1] >> 2) + dy, cz = (p[2] >> 2) + dz;
          if (cx < 0 || cy < 0 || cz < 0) continue;
          const auto it = std::lower_bound(cellKeys.begin(), cellKeys.end(), key(cx, cy, cz));
          if (it == cellKeys.end() || *it != key(cx, cy, cz)) continue;
          const auto& o = sums[size_t(it - cellKeys.begin())];
          for (int k = 0; k < 10; ++k) s[k] += o[k];
        }
    const double n = s[0], mx = s[1] / n, my = s[2] / n, mz = s[3] / n;
    const double a = s[4] / n - mx * mx, b = s[5] / n - mx * my, cc = s[6] / n - mx * mz, d = s[7] / n - my * my,
                 e = s[8] / n - my * mz, f = s[9] / n - mz * mz;
    double cov[3][3] = {{a, b, cc}, {b, d, e}, {cc, e, f}};
    out[i] = smallestEigenvector(cov);
  }
  return out;
}

struct OneWay {
  double d1 = 0, d2 = 0, y = 0, u = 0, v = 0;
};

void yuv(const uint8_t* rgb, double out[3]) {
  const double r = rgb[0], g = rgb[1], b = rgb[2];
  out[0] = 0.2126 * r + 0.7152 * g + 0.0722 * b;
  out[1] = (b - out[0]) / 1.8556 + 128;
  out[2] = (r - out[0]) / 1.5748 + 128;
}

/// Mean squared errors from every point of `a` to its nearest point in `b`.
OneWay oneWay(const CloudView& a, const CloudView& b, const Grid& gridB, const std::vector<std::array<double, 3>>& normalsB) {
  OneWay o;
  for (size_t i = 0; i < a.count; ++i) {
    const int32_t* p = a.positions + i * 3;
    const auto [j, d] = gridB.nearest(p);
    o.d1 += double(d);
    const int32_t* q = b.positions + size_t(j) * 3;
    const auto& n = normalsB[j];
    const double proj = (p[0] - q[0]) * n[0] + (p[1] - q[1]) * n[1] + (p[2] - q[2]) * n[2];
    o.d2 += proj * proj;
    double ca[3], cb[3];
    yuv(a.colors + i * 3, ca);
    yuv(b.colors + size_t(j) * 3, cb);
    o.y += (ca[0] - cb[0]) * (ca[0] - cb[0]);
    o.u += (ca[1] - cb[1]) * (ca[1] - cb[1]);
    o.v += (ca[2] - cb[2]) * (ca[2] - cb[2]);
  }
  const double n = double(std::max<size_t>(a.count, 1));
  o.d1 /= n, o.d2 /= n, o.y /= n, o.u /= n, o.v /= n;
  return o;
}

double psnr(double mse, double peak, double factor) {
  if (mse <= 0) return 999.0;  // identical
  return 10 * std::log10(factor * peak * peak / mse);
}

}  // namespace

Quality measureQuality(const CloudView& source, const CloudView& decoded, unsigned bits) {
  Quality q;
  if (source.count == 0 || decoded.count == 0) return q;
  const Grid gridSource(source), gridDecoded(decoded);
  const auto normalsSource = normals(source), normalsDecoded = normals(decoded);
  const OneWay forward = oneWay(source, decoded, gridDecoded, normalsDecoded);
  const OneWay backward = oneWay(decoded, source, gridSource, normalsSource);
  const double peak = double((1u << bits) - 1);
  q.d1Mse = std::max(forward.d1, backward.d1);
  q.d2Mse = std::max(forward.d2, backward.d2);
  // pc_error's geometry PSNR uses 3·peak² (the squared diagonal of a voxel's range per axis).
  q.d1Psnr = psnr(q.d1Mse, peak, 3);
  q.d2Psnr = psnr(q.d2Mse, peak, 3);
  q.yPsnr = psnr(std::max(forward.y, backward.y), 255, 1);
  q.uPsnr = psnr(std::max(forward.u, backward.u), 255, 1);
  q.vPsnr = psnr(std::max(forward.v, backward.v), 255, 1);
  return q;
}

}  // namespace vpcc
