// Nearest-neighbour search shared by reconstruction (colours of points no attribute pixel
// carries) and post-processing (colour transfer to smoothed points).
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>
#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#elif defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace vpcc {

// k-nearest-neighbour search over integer points that returns exactly the neighbours the
// reference decoder's k-d tree returns, including which of several equally distant points win
// and in which order they are listed. That depends on the tree layout and visiting order, so
// this tree is built by the same rules: leaves of at most 10 points; a node splits the axis of
// largest spread among the axes of largest box extent, at the middle of its (inherited) box
// clamped to the points' range, partitioning the point list in place by a two-ended swap scan
// (below / equal / above the cut) and choosing the split position nearest the middle that keeps
// the partition; children record the real extent of their points on the split axis. A query
// descends into the nearer child first; a candidate enters the result only when strictly closer
// than the current k-th, after any equally distant entries. The reference also visits the other
// child when its box distance equals the current k-th distance; this tree skips it, with the
// same result: every point in that box is at least that far, so none could enter.
// Nodes are split lazily, the first time a query reaches them: a node's split depends only on
// its own points and inherited box, so the result is the same as building everything up front,
// and the regions no query visits (most of a frame) are never partitioned. For the same reason
// a thread with nothing else to do may split nodes ahead of the queries (splitAhead): which
// nodes were split before a search changes how long it takes, never what it finds.
class NeighbourTree {
 public:
  NeighbourTree(const int16_t* positions, size_t count) {
    points_.resize(count);
    index_.resize(count);
    for (size_t i = 0; i < count; ++i) {
      for (int d = 0; d < 3; ++d) points_[i].c[d] = positions[i * 3 + d];
      points_[i].c[3] = 0;
      index_[i] = uint32_t(i);
    }
    nodes_.reserve(1024);
    bounds_.reserve(1024);
    if (count == 0) return;
    Node root;
    root.right = uint32_t(count);
    Bounds rootBounds;
    extent(root, rootBounds);
    for (int d = 0; d < 3; ++d) {
      rootBounds.box.low[d] = rootBounds.minV[d];
      rootBounds.box.high[d] = rootBounds.maxV[d];
    }
    nodes_.push_back(root);
    bounds_.push_back(rootBounds);
  }

  /// Splits nodes of more than `minPoints` points, top levels first (the nodes in the order they
  /// were made: breadth first), until none is left or `stop` is set — work a search would
  /// otherwise do, done while another thread is busy with something else. Not concurrently with
  /// a search of this tree.
  void splitAhead(const std::atomic<bool>& stop, size_t minPoints) {
    for (uint32_t id = 0; id < nodes_.size() && !stop.load(std::memory_order_relaxed); ++id)
      if (!nodes_[id].split && nodes_[id].right - nodes_[id].left > minPoints) split(id);
  }

  /// Up to k nearest points of `query`: indices and squared distances, nearest first.
  size_t search(const int16_t query[3], size_t k, uint32_t* indices, double* dists) {
    if (index_.empty() || k == 0) return 0;
    Result r{indices, dists, k, 0};
    dists[k - 1] = std::numeric_limits<double>::max();
    double axisDist[3] = {0, 0, 0};
    double minDist = 0;
    const Bounds& root = bounds_[0];
    for (int d = 0; d < 3; ++d) {
      if (query[d] < root.minV[d]) {
        axisDist[d] = sq(double(query[d]) - root.minV[d]);
        minDist += axisDist[d];
      }
      if (query[d] > root.maxV[d]) {
        axisDist[d] = sq(double(query[d]) - root.maxV[d]);
        minDist += axisDist[d];
      }
    }
    descend(r, query, 0, minDist, axisDist);
    return r.count;
  }

 private:
  // x, y, z and 0: one 8-byte record per point, so that a swap moves it in one piece and SIMD
  // compares and min/max take two points at a time.
  struct Point {
    int16_t c[4];
  };
  struct Box {
    int16_t low[3], high[3];
  };
  // What a search reads, kept small (16 bytes) so that a descent touches few cache lines.
  struct Node {
    uint32_t left = 0, right = 0;  // range of the point arrays
    uint32_t children = 0;         // first of the two (consecutive) children; 0: leaf or not split yet
    int16_t low = 0, high = 0;     // inner: extent of child 1's points / child 2's points on `axis`
    uint8_t axis = 0;
    bool split = false;
  };
  // What only splitting reads, per node.
  struct Bounds {
    Box box{};                                          // inherited from the parent (the split rule's box)
    int16_t minV[3] = {0, 0, 0}, maxV[3] = {0, 0, 0};  // real extent of the node's points
  };
  struct Result {
    uint32_t* indices;
    double* dists;
    size_t capacity, count;
    double worst() const { return dists[capacity - 1]; }
    void add(double dist, uint32_t index) {
      size_t i = count;
      for (; i > 0 && dists[i - 1] > dist; --i)
        if (i < capacity) {
          dists[i] = dists[i - 1];
          indices[i] = indices[i - 1];
        }
      if (i < capacity) {
        dists[i] = dist;
        indices[i] = index;
      }
      if (count < capacity) ++count;
    }
  };

  static double sq(double v) { return v * v; }

  // Min and max per axis of a node's points, two points (eight 16-bit lanes) per SIMD min and
  // max where the target has them: this pass over every node's points is a large part of
  // building the tree.
  void extent(const Node& node, Bounds& bounds) const {
    typedef int16_t Lanes __attribute__((vector_size(16)));
    const Point* points = points_.data() + node.left;
    const size_t count = node.right - node.left;
    Lanes low, high;
    std::memcpy(&low, points[0].c, sizeof(Point));
    std::memcpy(reinterpret_cast<char*>(&low) + sizeof(Point), points[count - 1].c, sizeof(Point));
    high = low;
    for (size_t i = 0; i + 2 <= count; i += 2) {
      Lanes v;
      std::memcpy(&v, points + i, sizeof v);
      low = v < low ? v : low;
      high = v > high ? v : high;
    }
    for (int d = 0; d < 3; ++d) {
      bounds.minV[d] = std::min(low[d], low[d + 4]);
      bounds.maxV[d] = std::max(high[d], high[d + 4]);
    }
  }

  void split(uint32_t id) {
    Node node = nodes_[id];
    node.split = true;
    const size_t count = node.right - node.left;
    if (count <= kLeafSize) {
      nodes_[id] = node;
      return;
    }
    const Bounds bounds = bounds_[id];
    // Axis: largest spread of the points among the axes whose box extent is the largest.
    const Box& box = bounds.box;
    // (in int: across the whole int16 range an extent reaches 65535, which int16 would wrap)
    int maxSpan = box.high[0] - box.low[0];
    for (int d = 1; d < 3; ++d) maxSpan = std::max(maxSpan, box.high[d] - box.low[d]);
    int axis = 0;
    int maxSpread = -1;
    for (int d = 0; d < 3; ++d) {
      const int span = box.high[d] - box.low[d];
      if (double(span) > (1 - 0.00001) * double(maxSpan)) {
        const int spread = bounds.maxV[d] - bounds.minV[d];
        if (spread > maxSpread) {
          axis = d;
          maxSpread = spread;
        }
      }
    }
    // Cut at the middle of the box, clamped to the points' range (all values are integers).
    const int middle = (box.low[axis] + box.high[axis]) / 2;
    const int cut = std::min<int>(std::max<int>(middle, bounds.minV[axis]), bounds.maxV[axis]);
    size_t below, belowOrEqual;
    partition(node.left, count, axis, cut, below, belowOrEqual);
    const size_t at = below > count / 2 ? below : (belowOrEqual < count / 2 ? belowOrEqual : count / 2);

    Node c1, c2;
    c1.left = node.left;
    c1.right = c2.left = node.left + uint32_t(at);
    c2.right = node.right;
    Bounds b1, b2;
    b1.box = b2.box = box;
    b1.box.high[axis] = int16_t(cut);
    b2.box.low[axis] = int16_t(cut);
    extent(c1, b1);
    extent(c2, b2);
    node.axis = uint8_t(axis);
    node.low = b1.maxV[axis];
    node.high = b2.minV[axis];
    node.children = uint32_t(nodes_.size());
    nodes_.push_back(c1);
    nodes_.push_back(c2);
    bounds_.push_back(b1);
    bounds_.push_back(b2);
    nodes_[id] = node;
  }

  // The reference's two-ended swap scans, first [< cut | >= cut] and then the upper part into
  // [== cut | > cut], give the same arrangement as pairing the misplaced points directly: the
  // k-th point from the left that belongs to the upper part trades places with the k-th point
  // from the right that belongs to the lower part. Scanning does that with a hard-to-predict
  // branch per point; here each point's side is one bit of a mask (no branches), and only the
  // misplaced points, found by counting bits, are touched.
  void partition(size_t first, size_t count, int axis, int cut, size_t& below, size_t& belowOrEqual) {
    const Point* points = points_.data() + first;
    below = classify(points, count, axis, cut, /*above=*/false);
    swapMisplaced(first, count, below, /*bitMeansLower=*/true);
    const size_t above = classify(points + below, count - below, axis, cut, /*above=*/true);
    belowOrEqual = count - above;
    swapMisplaced(first + below, count - below, belowOrEqual - below, /*bitMeansLower=*/false);
  }

  // sides_ gets one bit per point, set when its `axis` coordinate is below `cut` (or above it,
  // with `above`); bits past `count` are 0. Returns how many are set.
  size_t classify(const Point* points, size_t count, int axis, int cut, bool above) {
    const size_t words = (count + 63) / 64;
    if (sides_.size() < words) sides_.resize(words);
    size_t set = 0;
    for (size_t w = 0; w < words; ++w) {
      const size_t base = w * 64, n = std::min<size_t>(64, count - base);
      uint64_t bits = 0;
      size_t j = 0;
      for (; j + 4 <= n; j += 4) bits |= uint64_t(compare4(points + base + j, axis, cut, above)) << j;
      for (; j < n; ++j) bits |= uint64_t(above ? points[base + j].c[axis] > cut : points[base + j].c[axis] < cut) << j;
      sides_[w] = bits;
      set += popcount(bits);
    }
    return set;
  }

  // Bits of four points' `axis` coordinate < cut (> cut with `above`), by SIMD compares of all
  // 16 lanes where the target has them (this runs over every point of every node split), then
  // lane `axis` of each point picked out of the 16-bit lane mask.
  static uint32_t compare4(const Point* p, int axis, int cut, bool above) {
#if defined(__wasm_simd128__)
    const v128_t threshold = wasm_i16x8_splat(int16_t(cut));
    const v128_t a = wasm_v128_load(p), b = wasm_v128_load(p + 2);
    const v128_t ca = above ? wasm_i16x8_gt(a, threshold) : wasm_i16x8_lt(a, threshold);
    const v128_t cb = above ? wasm_i16x8_gt(b, threshold) : wasm_i16x8_lt(b, threshold);
    const uint32_t lanes = uint32_t(wasm_i8x16_bitmask(wasm_i8x16_narrow_i16x8(ca, cb)));
#elif defined(__SSE2__)
    const __m128i threshold = _mm_set1_epi16(int16_t(cut));
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + 2));
    const __m128i ca = above ? _mm_cmpgt_epi16(a, threshold) : _mm_cmplt_epi16(a, threshold);
    const __m128i cb = above ? _mm_cmpgt_epi16(b, threshold) : _mm_cmplt_epi16(b, threshold);
    const uint32_t lanes = uint32_t(_mm_movemask_epi8(_mm_packs_epi16(ca, cb)));
#else
    uint32_t lanes = 0;
    for (int j = 0; j < 16; ++j) lanes |= uint32_t(above ? p[j / 4].c[j % 4] > cut : p[j / 4].c[j % 4] < cut) << j;
#endif
    // Point k's bit is lane 4k + axis; the multiply gathers lanes 0, 4, 8, 12 into bits 9–12
    // (no two partial products meet, so nothing carries).
    const uint32_t picked = (lanes >> axis) & 0x1111;
    return ((picked * 0x249) >> 9) & 0xf;
  }

  // (Bit tricks rather than __builtin_popcountll, a library call on baseline x86-64.)
  static size_t popcount(uint64_t v) {
    v = v - ((v >> 1) & 0x5555555555555555ull);
    v = (v & 0x3333333333333333ull) + ((v >> 2) & 0x3333333333333333ull);
    v = (v + (v >> 4)) & 0x0f0f0f0f0f0f0f0full;
    return size_t((v * 0x0101010101010101ull) >> 56);
  }

  // Puts the points of [first, first + count) that belong before `boundary` (the lower part)
  // there, by the reference's pairing: ascending through the points of the upper part and
  // descending through those of the lower part, swapping pairs until the ascending walk
  // reaches `boundary` (both walks meet as many misplaced points). sides_ bits mark the lower
  // part's points when bitMeansLower, the upper part's otherwise.
  void swapMisplaced(size_t first, size_t count, size_t boundary, bool bitMeansLower) {
    if (count == 0) return;
    const size_t words = (count + 63) / 64;
    const uint64_t* sides = sides_.data();
    const uint64_t toLower = bitMeansLower ? 0 : ~uint64_t(0);  // sides ^ toLower: lower-part bits
    const uint64_t lastWordMask = count % 64 ? (uint64_t(1) << (count % 64)) - 1 : ~uint64_t(0);
    auto partBits = [&](size_t w, uint64_t flip) {
      const uint64_t bits = sides[w] ^ flip;
      return w == words - 1 ? bits & lastWordMask : bits;
    };
    Point* points = points_.data() + first;
    uint32_t* index = index_.data() + first;
    size_t up = 0, down = words - 1;
    uint64_t upBits = partBits(up, ~toLower), downBits = partBits(down, toLower);
    for (;;) {
      while (!upBits) {
        if (++up == words) return;
        upBits = partBits(up, ~toLower);
      }
      const size_t i = up * 64 + size_t(__builtin_ctzll(upBits));
      if (i >= boundary) return;
      upBits &= upBits - 1;
      while (!downBits) downBits = partBits(--down, toLower);
      const unsigned bit = 63 - unsigned(__builtin_clzll(downBits));
      downBits ^= uint64_t(1) << bit;
      const size_t j = down * 64 + bit;
      std::swap(points[i], points[j]);
      std::swap(index[i], index[j]);
    }
  }

  void descend(Result& r, const int16_t* q, uint32_t id, double minDist, double* axisDist) {
    if (!nodes_[id].split) split(id);
    const Node& node = nodes_[id];
    if (node.children == 0) {
      const double worst = r.worst();
      for (uint32_t i = node.left; i < node.right; ++i) {
        const int16_t* p = points_[i].c;
        // Integer coordinates: the squared distance is exact in 64 bits and in a double (at most
        // 3 × 65535² < 2^35). Not in int: two points at opposite ends of the int16 range are
        // 65535 apart on an axis, and one such square alone overflows 32 bits.
        const int64_t dx = q[0] - p[0], dy = q[1] - p[1], dz = q[2] - p[2];
        const double dist = double(dx * dx + dy * dy + dz * dz);
        if (dist < worst) r.add(dist, index_[i]);
      }
      return;
    }
    // (node may move when children split: copy what is needed before descending)
    const int axis = node.axis;
    const int value = q[axis];
    uint32_t best = node.children, other = node.children + 1;
    double cutDist;
    if ((value - node.low) + (value - node.high) < 0) {
      cutDist = sq(double(value - node.high));
    } else {
      std::swap(best, other);
      cutDist = sq(double(value - node.low));
    }
    descend(r, q, best, minDist, axisDist);
    const double saved = axisDist[axis];
    minDist = minDist + cutDist - saved;
    axisDist[axis] = cutDist;
    // Strictly closer only (see the class comment): with integer coordinates a box exactly at
    // the k-th distance is common, and skipping it also leaves it unsplit.
    if (minDist < r.worst()) descend(r, q, other, minDist, axisDist);
    axisDist[axis] = saved;
  }

  static constexpr size_t kLeafSize = 10;
  std::vector<Point> points_;       // in tree order (each node owns a contiguous range)
  std::vector<uint32_t> index_;     // original index of each point, in the same order
  std::vector<uint64_t> sides_;     // partition scratch: one bit per point of the node split
  std::vector<Node> nodes_;
  std::vector<Bounds> bounds_;  // per node, as nodes_
};

}  // namespace vpcc
