// Nearest-neighbour search shared by reconstruction (colours of points no attribute pixel
// carries) and post-processing (colour transfer to smoothed points).
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

namespace vpcc {

// k-nearest-neighbour search over integer points that returns exactly the neighbours the
// reference decoder's k-d tree returns, including which of several equally distant points win
// and in which order they are listed. That depends on the tree layout and visiting order, so
// this tree is built by the same rules: leaves of at most 10 points; a node splits the axis of
// largest spread among the axes of largest box extent, at the middle of its (inherited) box
// clamped to the points' range, partitioning the point list in place by a two-ended swap scan
// (below / equal / above the cut) and choosing the split position nearest the middle that keeps
// the partition; children record the real extent of their points on the split axis. A query
// descends into the nearer child first and visits the other one when its box distance does not
// exceed the current k-th distance; a candidate enters the result only when strictly closer
// than the current k-th, after any equally distant entries.
// Nodes are split lazily, the first time a query reaches them: a node's split depends only on
// its own points and inherited box, so the result is the same as building everything up front,
// and the regions no query visits (most of a frame) are never partitioned.
class NeighbourTree {
 public:
  NeighbourTree(const int16_t* positions, size_t count) {
    items_.resize(count);
    for (size_t i = 0; i < count; ++i) {
      Item& it = items_[i];
      for (int d = 0; d < 3; ++d) it.c[d] = positions[i * 3 + d];
      it.c[3] = 0;
      it.index = uint32_t(i);
    }
    nodes_.reserve(1024);
    if (count == 0) return;
    Node root;
    root.left = 0;
    root.right = uint32_t(count);
    extent(root);
    for (int d = 0; d < 3; ++d) {
      root.box.low[d] = root.minV[d];
      root.box.high[d] = root.maxV[d];
    }
    nodes_.push_back(root);
  }

  /// Up to k nearest points of `query`: indices and squared distances, nearest first.
  size_t search(const int16_t query[3], size_t k, uint32_t* indices, double* dists) {
    if (items_.empty() || k == 0) return 0;
    Result r{indices, dists, k, 0};
    dists[k - 1] = std::numeric_limits<double>::max();
    double axisDist[3] = {0, 0, 0};
    double minDist = 0;
    const Node& root = nodes_[0];
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
  // A point with its original index; the list of them is permuted in place while splitting,
  // so that every node owns a contiguous range.
  // c[3] is always 0: it pads the coordinates to one 8-byte lane group for extent().
  struct Item {
    int16_t c[4];
    uint32_t index;
  };
  struct Box {
    int16_t low[3], high[3];
  };
  struct Node {
    uint32_t left = 0, right = 0;     // range of items_
    uint32_t child1 = 0, child2 = 0;  // both 0: leaf or not split yet
    bool split = false;
    int axis = 0;
    double low = 0, high = 0;  // inner: extent of child1's points / child2's points on `axis`
    Box box{};                 // box inherited from the parent (what the split rule uses)
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

  // Min and max per axis of a node's points, on all axes at once (four 16-bit lanes: one SIMD
  // min and max per point where the target has them). This pass over every node's points is a
  // large part of building the tree.
  void extent(Node& node) const {
    typedef int16_t Lanes __attribute__((vector_size(8)));
    const Item* items = items_.data() + node.left;
    const size_t count = node.right - node.left;
    Lanes low, high;
    std::memcpy(&low, items[0].c, sizeof low);
    high = low;
    for (size_t i = 1; i < count; ++i) {
      Lanes v;
      std::memcpy(&v, items[i].c, sizeof v);
      low = v < low ? v : low;
      high = v > high ? v : high;
    }
    for (int d = 0; d < 3; ++d) {
      node.minV[d] = low[d];
      node.maxV[d] = high[d];
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
    // Axis: largest spread of the points among the axes whose box extent is the largest.
    const Box& box = node.box;
    int16_t maxSpan = int16_t(box.high[0] - box.low[0]);
    for (int d = 1; d < 3; ++d) maxSpan = std::max(maxSpan, int16_t(box.high[d] - box.low[d]));
    int axis = 0;
    int16_t maxSpread = -1;
    for (int d = 0; d < 3; ++d) {
      const int16_t span = int16_t(box.high[d] - box.low[d]);
      if (double(span) > (1 - 0.00001) * double(maxSpan)) {
        const int16_t spread = int16_t(node.maxV[d] - node.minV[d]);
        if (spread > maxSpread) {
          axis = d;
          maxSpread = spread;
        }
      }
    }
    // Cut at the middle of the box, clamped to the points' range (all values are integers).
    const int middle = (box.low[axis] + box.high[axis]) / 2;
    const int cut = std::min<int>(std::max<int>(middle, node.minV[axis]), node.maxV[axis]);
    size_t below, belowOrEqual;
    partition(items_.data() + node.left, count, axis, cut, below, belowOrEqual);
    const size_t at = below > count / 2 ? below : (belowOrEqual < count / 2 ? belowOrEqual : count / 2);

    Node c1, c2;
    c1.left = node.left;
    c1.right = c2.left = node.left + uint32_t(at);
    c2.right = node.right;
    c1.box = c2.box = box;
    c1.box.high[axis] = int16_t(cut);
    c2.box.low[axis] = int16_t(cut);
    extent(c1);
    extent(c2);
    node.axis = axis;
    node.low = c1.maxV[axis];
    node.high = c2.minV[axis];
    node.child1 = uint32_t(nodes_.size());
    node.child2 = node.child1 + 1;
    nodes_.push_back(c1);
    nodes_.push_back(c2);
    nodes_[id] = node;
  }

  // Two-ended swap scans: first [< cut | >= cut], then the upper part into [== cut | > cut].
  static void partition(Item* items, size_t count, int axis, int cut, size_t& below, size_t& belowOrEqual) {
    size_t left = 0, right = count - 1;
    for (;;) {
      while (left <= right && items[left].c[axis] < cut) ++left;
      while (right && left <= right && items[right].c[axis] >= cut) --right;
      if (left > right || !right) break;
      std::swap(items[left], items[right]);
      ++left;
      --right;
    }
    below = left;
    right = count - 1;
    for (;;) {
      while (left <= right && items[left].c[axis] <= cut) ++left;
      while (right && left <= right && items[right].c[axis] > cut) --right;
      if (left > right || !right) break;
      std::swap(items[left], items[right]);
      ++left;
      --right;
    }
    belowOrEqual = left;
  }

  void descend(Result& r, const int16_t* q, uint32_t id, double minDist, double* axisDist) {
    if (!nodes_[id].split) split(id);
    const Node& node = nodes_[id];
    if (node.child1 == 0) {
      const double worst = r.worst();
      for (uint32_t i = node.left; i < node.right; ++i) {
        const Item& it = items_[i];
        // Integer coordinates: the squared distance is exact in any floating type.
        const int dx = q[0] - it.c[0], dy = q[1] - it.c[1], dz = q[2] - it.c[2];
        const double dist = double(dx * dx + dy * dy + dz * dz);
        if (dist < worst) r.add(dist, it.index);
      }
      return;
    }
    // (node may move when children split: copy what is needed before descending)
    const int axis = node.axis;
    const double value = q[axis];
    const double diff1 = value - node.low, diff2 = value - node.high;
    uint32_t best, other;
    double cutDist;
    if (diff1 + diff2 < 0) {
      best = node.child1;
      other = node.child2;
      cutDist = sq(value - node.high);
    } else {
      best = node.child2;
      other = node.child1;
      cutDist = sq(value - node.low);
    }
    descend(r, q, best, minDist, axisDist);
    const double saved = axisDist[axis];
    minDist = minDist + cutDist - saved;
    axisDist[axis] = cutDist;
    if (minDist <= r.worst()) descend(r, q, other, minDist, axisDist);
    axisDist[axis] = saved;
  }

  static constexpr size_t kLeafSize = 10;
  std::vector<Item> items_;
  std::vector<Node> nodes_;
};

}  // namespace vpcc
