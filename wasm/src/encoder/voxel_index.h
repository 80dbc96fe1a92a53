// Exact nearest-neighbour queries between voxelized point clouds, as the encoder's colour
// transfer asks them: hundreds of thousands of queries per frame whose answer is almost always
// the same voxel or one a voxel or two away.
//
// Points sit in 4³-voxel bricks found through a hash (built without sorting); a brick holds an
// occupancy mask and the points of each of its voxels, so neighbouring voxels share cache lines.
// A query walks the voxels around it in shells of growing squared distance (0, 1, 2, … 12),
// looking each of the ≤ 27 bricks it touches up once: a neighbour at distance 0–3 costs a few
// look-ups and mask tests and no distance arithmetic. Only a query with nothing that close falls
// back to a ring search over 4³ cells (or, far from everything, a scan of all points). All points
// at the smallest distance are reported (ties), in a fixed order, so results are deterministic.
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
    // The bricks the shells reach (at most 3 per axis around q's brick), each looked up once,
    // when first needed.
    const int32_t base[3] = {(q[0] >> kBrickShift) - 1, (q[1] >> kBrickShift) - 1, (q[2] >> kBrickShift) - 1};
    uint32_t brickIds[27];
    std::fill(brickIds, brickIds + 27, kUnknown);
    for (const Shell& shell : shells()) {
      bool found = false;
      for (uint32_t o = shell.begin; o < shell.end; ++o) {
        const auto& d = offsets()[o];
        const int32_t x = q[0] + d[0], y = q[1] + d[1], z = q[2] + d[2];
        const int32_t bx = (x >> kBrickShift) - base[0], by = (y >> kBrickShift) - base[1], bz = (z >> kBrickShift) - base[2];
        uint32_t& brick = brickIds[bx + 3 * by + 9 * bz];
        if (brick == kUnknown) brick = bricks_.find(x >> kBrickShift, y >> kBrickShift, z >> kBrickShift);
        if (brick == kEnd) continue;
        const uint32_t local = uint32_t((x & 3) | (y & 3) << 2 | (z & 3) << 4);
        if (!(brickMasks_[brick] >> local & 1)) continue;
        for (uint32_t i = brickHeads_[size_t(brick) * 64 + local]; i != kEnd; i = voxelNext_[i]) {
          fn(i);
          found = true;
        }
      }
      if (found) return shell.squaredDistance;
    }
    return ringSearch(q, fn);
  }

 private:
  static constexpr int kShellLimit = 12;  // squared distance the voxel shells cover (offsets ≤ 3 < one brick)
  static constexpr int kBrickShift = 2;   // voxels are grouped in 4³ bricks: nearby voxels share cache lines
  static constexpr int kCellShift = 2;    // fallback cells of 4³ voxels (a few surface points each)
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

  /// Open-addressing hash from a voxel (or cell) key to the chain of its points.
  struct ChainHash {
    std::vector<uint64_t> keys;
    std::vector<uint32_t> heads;
    std::vector<uint32_t> ids;   // dense number of each occupied slot (0 … count − 1)
    std::vector<uint32_t> next;  // next point of the same key, or kEnd
    size_t mask = 0;
    uint32_t count = 0;

    void build(const std::vector<std::array<int32_t, 3>>& points, int shift) {
      size_t capacity = 16;
      while (capacity < 2 * points.size()) capacity *= 2;
      mask = capacity - 1;
      keys.assign(capacity, kEmpty);
      heads.assign(capacity, kEnd);
      ids.assign(capacity, kEnd);
      next.assign(points.size(), kEnd);
      count = 0;
      for (size_t i = points.size(); i-- > 0;) {  // backwards: each chain lists its points in index order
        const uint64_t key = voxelKey(points[i][0] >> shift, points[i][1] >> shift, points[i][2] >> shift);
        size_t slot = mix(key) & mask;
        while (keys[slot] != kEmpty && keys[slot] != key) slot = (slot + 1) & mask;
        if (keys[slot] == kEmpty) ids[slot] = count++;
        keys[slot] = key;
        next[i] = heads[slot];
        heads[slot] = uint32_t(i);
      }
    }
    /// Slot of (x, y, z) (in units of the key's shift), or mask + 1 when absent.
    size_t slotOf(int32_t x, int32_t y, int32_t z) const {
      if (!inRange(x) || !inRange(y) || !inRange(z)) return mask + 1;
      const uint64_t key = voxelKey(x, y, z);
      for (size_t slot = mix(key) & mask;; slot = (slot + 1) & mask) {
        if (keys[slot] == key) return slot;
        if (keys[slot] == kEmpty) return mask + 1;
      }
    }
    /// First point under (x, y, z), or kEnd.
    uint32_t head(int32_t x, int32_t y, int32_t z) const {
      const size_t slot = slotOf(x, y, z);
      return slot > mask ? kEnd : heads[slot];
    }
    /// Dense id of (x, y, z), or kEnd.
    uint32_t find(int32_t x, int32_t y, int32_t z) const {
      const size_t slot = slotOf(x, y, z);
      return slot > mask ? kEnd : ids[slot];
    }
  };

  /// Bricks of 4³ voxels: per brick an occupancy mask and the head of each voxel's chain.
  void buildVoxelHash() {
    bricks_.build(points_, kBrickShift);
    voxelNext_.assign(points_.size(), kEnd);
    brickMasks_.assign(bricks_.count, 0);
    brickHeads_.assign(size_t(bricks_.count) * 64, kEnd);
    for (size_t i = points_.size(); i-- > 0;) {  // backwards: each chain lists its points in index order
      const auto& p = points_[i];
      const uint32_t brick = bricks_.find(p[0] >> kBrickShift, p[1] >> kBrickShift, p[2] >> kBrickShift);
      const uint32_t local = uint32_t((p[0] & 3) | (p[1] & 3) << 2 | (p[2] & 3) << 4);
      brickMasks_[brick] |= uint64_t(1) << local;
      voxelNext_[i] = brickHeads_[size_t(brick) * 64 + local];
      brickHeads_[size_t(brick) * 64 + local] = uint32_t(i);
    }
  }

  /// Fallback cells; built on the first query that needs them (few do).
  const ChainHash& cells() const {
    std::call_once(cellsBuilt_, [this] { cells_.build(points_, kCellShift); });
    return cells_;
  }

  /// Cells in growing Chebyshev rings around the query's cell until no unvisited cell can hold a
  /// point as near as the best found (a point beyond ring r is at least 4·r + 1 voxels away).
  template <typename Fn>
  int64_t ringSearch(const int32_t q[3], Fn& fn) const {
    const int32_t c[3] = {q[0] >> kCellShift, q[1] >> kCellShift, q[2] >> kCellShift};
    int64_t best = std::numeric_limits<int64_t>::max();
    const ChainHash& cellHash = cells();
    std::vector<uint32_t> tied;
    for (int32_t ring = 0; ring <= (0xffff >> kCellShift) + 1; ++ring) {
      // Far from everything (a sparse cloud, an outlier): scanning every point is cheaper than
      // visiting more cells than there are points.
      const int64_t side = 2 * int64_t(ring) + 1;
      if (side * side * side > int64_t(points_.size())) return bruteForce(q, fn);
      for (int32_t dz = -ring; dz <= ring; ++dz)
        for (int32_t dy = -ring; dy <= ring; ++dy)
          for (int32_t dx = -ring; dx <= ring; ++dx) {
            if (std::max({std::abs(dx), std::abs(dy), std::abs(dz)}) != ring) continue;
            const int32_t x = c[0] + dx, y = c[1] + dy, z = c[2] + dz;
            if (!inRange(x) || !inRange(y) || !inRange(z)) continue;
            for (uint32_t i = cellHash.head(x, y, z); i != kEnd; i = cellHash.next[i]) {
              const auto& p = points_[i];
              const int64_t ex = p[0] - q[0], ey = p[1] - q[1], ez = p[2] - q[2];
              const int64_t d = ex * ex + ey * ey + ez * ez;
              if (d < best) best = d, tied.clear();
              if (d == best) tied.push_back(i);
            }
          }
      const int64_t bound = int64_t(ring) * (1 << kCellShift) + 1;
      if (!tied.empty() && best < bound * bound) break;
    }
    std::sort(tied.begin(), tied.end());
    for (uint32_t i : tied) fn(i);
    return best;
  }

  template <typename Fn>
  int64_t bruteForce(const int32_t q[3], Fn& fn) const {
    int64_t best = std::numeric_limits<int64_t>::max();
    for (const auto& p : points_) {
      const int64_t ex = p[0] - q[0], ey = p[1] - q[1], ez = p[2] - q[2];
      best = std::min(best, ex * ex + ey * ey + ez * ez);
    }
    for (uint32_t i = 0; i < points_.size(); ++i) {
      const auto& p = points_[i];
      const int64_t ex = p[0] - q[0], ey = p[1] - q[1], ez = p[2] - q[2];
      if (ex * ex + ey * ey + ez * ez == best) fn(i);
    }
    return best;
  }

  static constexpr uint64_t kEmpty = ~uint64_t(0);
  static constexpr uint32_t kEnd = ~uint32_t(0);
  static constexpr uint32_t kUnknown = kEnd - 1;
  std::vector<std::array<int32_t, 3>> points_;
  ChainHash bricks_;                  // brick → dense brick id
  std::vector<uint64_t> brickMasks_;  // per brick: which of its 64 voxels hold points
  std::vector<uint32_t> brickHeads_;  // per brick × 64 voxels: first point, or kEnd
  std::vector<uint32_t> voxelNext_;   // next point of the same voxel, or kEnd
  mutable std::once_flag cellsBuilt_;
  mutable ChainHash cells_;
};

}  // namespace vpcc
