// Nearest-neighbour search for the quality metrics: a k-d tree (nanoflann, Debian's
// libnanoflann-dev) over one cloud, and the "all nearest points at the same distance" query
// pc_error's ties rules need.
#pragma once

#include <nanoflann.hpp>

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vpcc::quality {

/// Positions as doubles (nanoflann's dataset interface), kept by the caller while a tree uses them.
struct Points {
  std::vector<std::array<double, 3>> xyz;
  size_t kdtree_get_point_count() const { return xyz.size(); }
  double kdtree_get_pt(size_t i, size_t dim) const { return xyz[i][dim]; }
  template <class Box>
  bool kdtree_get_bbox(Box&) const { return false; }
};

/// The closest points of a tree to a query: their indices and squared distances, closest first.
struct Neighbours {
  std::array<uint32_t, 30> index{};
  std::array<double, 30> distance{};
  size_t count = 0;  // found
  size_t tied = 0;   // how many of the first share the smallest distance (≥ 1 when count ≥ 1)
};

class NearestSearch {
 public:
  /// Builds the tree (leaves of 10 points, as pc_error's); `points` must outlive the search.
  explicit NearestSearch(const Points& points) : tree_(3, points, nanoflann::KDTreeSingleIndexAdaptorParams(10)) {}

  /// The k closest points.
  Neighbours closest(const std::array<double, 3>& query, size_t k) const {
    Neighbours n;
    if (k > n.index.size()) k = n.index.size();
    n.count = tree_.knnSearch(query.data(), k, n.index.data(), n.distance.data());
    n.tied = n.count == 0 ? 0 : 1;
    while (n.tied < n.count && n.distance[n.tied] == n.distance[0]) ++n.tied;
    return n;
  }

  /// The closest points with every point tied at the smallest distance, as pc_error gathers
  /// them: 10 neighbours, then 5 more at a time while all found share that distance, at most 30
  /// (a tie among more than 30 points keeps 30 of them).
  Neighbours nearestTied(const std::array<double, 3>& query) const {
    Neighbours n = closest(query, 10);
    for (size_t k = 15; k <= 30 && n.count == k - 5 && n.tied == n.count; k += 5) n = closest(query, k);
    return n;
  }

 private:
  using Tree = nanoflann::KDTreeSingleIndexAdaptor<nanoflann::L2_Simple_Adaptor<double, Points>, Points, 3, uint32_t>;
  Tree tree_;
};

}  // namespace vpcc::quality
