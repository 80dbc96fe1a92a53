// Exact nearest-neighbour queries between voxelized point clouds, as the encoder's colour
// transfer asks them: hundreds of thousands of queries per frame whose answer is almost always
// the same voxel or one a voxel or two away.
//
// Points sit in a hash of voxels (built without sorting). A query walks the voxels around it in shells of growing
// squared distance (0, 1, 2, … 12), so a neighbour at distance 0–3 costs a handful of look-ups
// and no distance arithmetic; only a query with nothing that close falls back to a ring search
// over 16³ cells. All points at the smallest distance are reported (ties), in a fixed order, so
// results are deterministic.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <mutex>
#include <vector>

namespace vpcc {

class VoxelIndex {
 public:
  /// Indexes `count` points given as x, y, z triples of any integer type (coordinates 0–65535).
  template <typename Coordinate>
  VoxelIndex(const Coordinate* xyz, size_t count) : points_(count) {
    for (size_t i = 0; i < count; ++i)
      for (int d = 0; d < 3; ++d) points_[i][d] = int32_t(xyz[i * 3 + d]);
    buildVoxelHash();
  }

  size_t size() const { return points_.size(); }

  /// Calls fn(index) for each point at the smallest distance from q (several when tied) and
  /// returns that squared distance; −1 when the index is empty.
  template <typename Fn>
  int64_t nearest(const int32_t q[3], Fn&& fn) const {
    if (points_.empty()) return -1;
    for (const Shell& shell : shells()) {
      bool found = false;
      for (uint32_t o = shell.begin; o < shell.end; ++o) {
        const auto& d = offsets()[o];
        for (uint32_t i = headOf(q[0] + d[0], q[1] + d[1], q[2] + d[2]); i != kEnd; i = next_[i]) {
          fn(i);
          found = true;
        }
      }
      if (found) return shell.squaredDistance;
    }
    return ringSearch(q, fn);
  }

 private:
  static constexpr int kShellLimit = 12;  // squared distance the voxel shells cover
  static constexpr int kCellShift = 4;    // fallback cells of 16³ voxels
  struct Shell {
    int64_t squaredDistance;
    uint32_t begin, end;  // range of offsets()
  };

  static uint64_t voxelKey(int32_t x, int32_t y, int32_t z) {
    return uint64_t(uint16_t(x)) | uint64_t(uint16_t(y)) << 16 | uint64_t(uint16_t(z)) << 32;
  }
  static bool inRange(int32_t v) { return v >= 0 && v <= 0xffff; }
  static uint64_t mix(uint64_t k) {  // spreads neighbouring voxels over the table
    k ^= k >> 29;
    k *= 0xbf58476d1ce4e5b9ull;
    return k ^ (k >> 32);
  }

  /// Integer offsets with squared length ≤ kShellLimit, sorted by length (then lexicographically).
  static const std::vector<std::array<int32_t, 3>>& offsets() {
    static const std::vector<std::array<int32_t, 3>> list = [] {
      std::vector<std::array<int32_t, 3>> l;
      for (int32_t x = -3; x <= 3; ++x)
        for (int32_t y = -3; y <= 3; ++y)
          for (int32_t z = -3; z <= 3; ++z)
            if (x * x + y * y + z * z <= kShellLimit) l.push_back({x, y, z});
      std::stable_sort(l.begin(), l.end(), [](const auto& a, const auto& b) { return length2(a) < length2(b); });
      return l;
    }();
    return list;
  }
  static const std::vector<Shell>& shells() {
    static const std::vector<Shell> list = [] {
      std::vector<Shell> s;
      const auto& o = offsets();
      for (uint32_t i = 0; i < o.size(); ++i) {
        if (s.empty() || s.back().squaredDistance != length2(o[i])) s.push_back({length2(o[i]), i, i});
        s.back().end = i + 1;
      }
      return s;
    }();
    return list;
  }
  static int64_t length2(const std::array<int32_t, 3>& v) { return int64_t(v[0]) * v[0] + int64_t(v[1]) * v[1] + int64_t(v[2]) * v[2]; }

  /// Open-addressing hash of occupied voxels; the points of one voxel form a chain (next_).
  void buildVoxelHash() {
    const size_t n = points_.size();
    size_t capacity = 16;
    while (capacity < 2 * n) capacity *= 2;
    mask_ = capacity - 1;
    slots_.assign(capacity, Slot{kEmpty, kEnd});
    next_.assign(n, kEnd);
    for (size_t i = n; i-- > 0;) {  // backwards, so that each chain lists its points in index order
      const uint64_t key = voxelKey(points_[i][0], points_[i][1], points_[i][2]);
      size_t slot = mix(key) & mask_;
      while (slots_[slot].key != kEmpty && slots_[slot].key != key) slot = (slot + 1) & mask_;
      slots_[slot].key = key;
      next_[i] = slots_[slot].head;
      slots_[slot].head = uint32_t(i);
    }
  }

  /// First point of voxel (x, y, z), or kEnd.
  uint32_t headOf(int32_t x, int32_t y, int32_t z) const {
    if (!inRange(x) || !inRange(y) || !inRange(z)) return kEnd;
    const uint64_t key = voxelKey(x, y, z);
    for (size_t slot = mix(key) & mask_;; slot = (slot + 1) & mask_) {
      if (slots_[slot].key == key) return slots_[slot].head;
      if (slots_[slot].key == kEmpty) return kEnd;
    }
  }

  /// Fallback cells, sorted by key; built on the first query that needs them (few do).
  const std::vector<std::pair<uint64_t, uint32_t>>& cells() const {
    std::call_once(cellsBuilt_, [this] {
      cells_.resize(points_.size());
      for (size_t i = 0; i < points_.size(); ++i)
        cells_[i] = {voxelKey(points_[i][0] >> kCellShift, points_[i][1] >> kCellShift, points_[i][2] >> kCellShift), uint32_t(i)};
      std::sort(cells_.begin(), cells_.end());
    });
    return cells_;
  }

  /// Cells in growing Chebyshev rings around the query's cell until no unvisited cell can hold a
  /// point as near as the best found (a point beyond ring r is at least 16·r + 1 voxels away).
  template <typename Fn>
  int64_t ringSearch(const int32_t q[3], Fn& fn) const {
    const int32_t c[3] = {q[0] >> kCellShift, q[1] >> kCellShift, q[2] >> kCellShift};
    int64_t best = std::numeric_limits<int64_t>::max();
    const auto& cellList = cells();
    std::vector<uint32_t> tied;
    for (int32_t ring = 0; ring <= (0xffff >> kCellShift) + 1; ++ring) {
      for (int32_t dz = -ring; dz <= ring; ++dz)
        for (int32_t dy = -ring; dy <= ring; ++dy)
          for (int32_t dx = -ring; dx <= ring; ++dx) {
            if (std::max({std::abs(dx), std::abs(dy), std::abs(dz)}) != ring) continue;
            const int32_t x = c[0] + dx, y = c[1] + dy, z = c[2] + dz;
            if (!inRange(x) || !inRange(y) || !inRange(z)) continue;
            const uint64_t key = voxelKey(x, y, z);
            auto it = std::lower_bound(cellList.begin(), cellList.end(), std::make_pair(key, uint32_t(0)));
            for (; it != cellList.end() && it->first == key; ++it) {
              const auto& p = points_[it->second];
              const int64_t ex = p[0] - q[0], ey = p[1] - q[1], ez = p[2] - q[2];
              const int64_t d = ex * ex + ey * ey + ez * ez;
              if (d < best) best = d, tied.clear();
              if (d == best) tied.push_back(it->second);
            }
          }
      const int64_t bound = int64_t(ring) * (1 << kCellShift) + 1;
      if (!tied.empty() && best < bound * bound) break;
    }
    std::sort(tied.begin(), tied.end());
    for (uint32_t i : tied) fn(i);
    return best;
  }

  static constexpr uint64_t kEmpty = ~uint64_t(0);
  static constexpr uint32_t kEnd = ~uint32_t(0);
  struct Slot {
    uint64_t key;
    uint32_t head;
  };
  std::vector<std::array<int32_t, 3>> points_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> next_;  // next point of the same voxel, or kEnd
  size_t mask_ = 0;
  mutable std::once_flag cellsBuilt_;
  mutable std::vector<std::pair<uint64_t, uint32_t>> cells_;  // (cell key, point), sorted
};

}  // namespace vpcc
