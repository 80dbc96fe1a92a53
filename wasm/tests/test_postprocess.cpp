// Attribute smoothing (SEI 67) on frames built by hand: what changes, what never does, and the
// limits its thresholds set; and the colour transfer's k-d tree split ahead of its searches.
// (Geometry smoothing and colour transfer are checked bit-exactly against TMC2's logs in
// test_conformance.)
#include <atomic>
#include <cstdint>
#include <random>
#include <vector>

#include "../src/decoder/neighbour_tree.h"
#include "harness.h"
#include "vpcc/postprocess.h"

using namespace vpcc;

namespace {

constexpr uint16_t kDark = 20000, kLight = 40000, kNeutral = 32768;

// A flat 24 × 16 sheet at z = 16 in a 64³ grid with 4-pixel occupancy cells, two patches: dark
// for x < 18, light from x = 18 (inside the cell [16, 20), which so holds both). Points within
// two of the seam are boundary points.
PointCloudFrame seam() {
  PointCloudFrame f;
  f.occupancyPrecision = 4;
  f.bitDepth3d = 6;
  for (int x = 8; x < 32; ++x)
    for (int y = 8; y < 24; ++y) {
      f.positions.insert(f.positions.end(), {int16_t(x), int16_t(y), int16_t(16)});
      const uint16_t luma = x < 18 ? kDark : kLight;
      f.colors16.insert(f.colors16.end(), {luma, kNeutral, kNeutral});
      f.colors.insert(f.colors.end(), {0, 0, 0});
      f.patchIndex.push_back(x < 18 ? 0 : 1);
      f.boundary.push_back(x >= 16 && x <= 20 ? 1 : 0);
    }
  return f;
}

AttributeSmoothingParams permissive() {
  AttributeSmoothingParams p;
  p.threshold = 0;
  p.thresholdVariation = 255;
  p.thresholdDifference = 255;
  return p;
}

}  // namespace

TEST(seam_points_take_a_blend_of_both_sides_and_nothing_else_changes) {
  PointCloudFrame frame = seam();
  const PointCloudFrame before = frame;
  std::vector<uint8_t> recoloured;
  const size_t changed = smoothAttributesGrid(frame, permissive(), {}, recoloured);
  CHECK(changed > 0);
  size_t counted = 0;
  for (size_t i = 0; i < frame.size(); ++i) {
    const uint16_t* now = &frame.colors16[i * 3];
    const uint16_t* was = &before.colors16[i * 3];
    const bool same = now[0] == was[0] && now[1] == was[1] && now[2] == was[2];
    CHECK_EQ(bool(recoloured[i]), !same);
    if (same) continue;
    ++counted;
    CHECK_EQ(int(frame.boundary[i]), 1);
    CHECK(now[0] > kDark && now[0] < kLight);
    CHECK(now[1] >= kNeutral - 1 && now[1] <= kNeutral + 1);
  }
  CHECK_EQ(counted, changed);
  CHECK(frame.positions == before.positions);
}

TEST(a_high_threshold_keeps_small_changes_out) {
  PointCloudFrame loose = seam(), strict = seam();
  std::vector<uint8_t> recoloured;
  const size_t all = smoothAttributesGrid(loose, permissive(), {}, recoloured);
  AttributeSmoothingParams params = permissive();
  params.threshold = 255;  // a luma change of 255 · 256 / 10 ≈ 6528 at least: more than any blend here
  CHECK_EQ(smoothAttributesGrid(strict, params, {}, recoloured), size_t(0));
  CHECK(all > 0);
}

TEST(cells_of_another_luma_stay_out_of_the_blend) {
  // The sheet lies in the lower half of its cells along z, so every point's first cell (the
  // layer below) is empty and stands for the point itself. With no luma difference allowed,
  // every other cell differs from that and is replaced by the point's colour too: nothing changes.
  PointCloudFrame frame = seam();
  AttributeSmoothingParams params = permissive();
  params.thresholdDifference = 0;
  std::vector<uint8_t> recoloured;
  CHECK_EQ(smoothAttributesGrid(frame, params, {}, recoloured), size_t(0));
}

TEST(points_moved_by_geometry_smoothing_and_textured_cells_are_left_alone) {
  PointCloudFrame frame = seam();
  std::vector<uint8_t> moved(frame.size(), 1);  // every point moved: none takes part
  std::vector<uint8_t> recoloured;
  CHECK_EQ(smoothAttributesGrid(frame, permissive(), moved, recoloured), size_t(0));

  // Texture: one row in four of every cell is bright, so each cell's luma mean and median disagree.
  PointCloudFrame textured = seam();
  for (size_t i = 0; i < textured.size(); ++i)
    textured.colors16[i * 3] = uint16_t(textured.positions[i * 3 + 1] % 4 == 0 ? 60000 : 1000);
  AttributeSmoothingParams params = permissive();
  params.thresholdVariation = 0;
  CHECK_EQ(smoothAttributesGrid(textured, params, {}, recoloured), size_t(0));
}

TEST(frames_without_what_smoothing_needs_are_returned_unchanged) {
  PointCloudFrame frame = seam();
  frame.boundary.clear();
  std::vector<uint8_t> recoloured;
  CHECK_EQ(smoothAttributesGrid(frame, permissive(), {}, recoloured), size_t(0));
  // A fine grid of a deep geometry (2-pixel cells of a 10-bit space: 2^27 cells) is fine.
  PointCloudFrame fine = seam();
  fine.occupancyPrecision = 2;
  fine.bitDepth3d = 10;
  smoothAttributesGrid(fine, permissive(), {}, recoloured);
  CHECK_EQ(recoloured.size(), fine.size());
  PointCloudFrame huge = seam();
  huge.bitDepth3d = 30;
  CHECK_THROWS(smoothAttributesGrid(huge, permissive(), {}, recoloured), ParseError);
}

// Which nodes were split before a search must never change what it finds: neighbours, their
// order among equally distant ones, and distances. Points on a small integer grid, so that ties
// are everywhere (as on real frames, where they decide the colour transfer's votes).
TEST(a_tree_split_ahead_finds_exactly_what_a_lazily_split_one_finds) {
  std::mt19937 random(7);
  std::uniform_int_distribution<int> coordinate(0, 40);
  std::vector<int16_t> points(30000 * 3), queries(3000 * 3);
  for (int16_t& c : points) c = int16_t(coordinate(random));
  for (int16_t& c : queries) c = int16_t(coordinate(random));
  NeighbourTree lazy(points.data(), points.size() / 3);
  NeighbourTree allAhead(points.data(), points.size() / 3), topAhead(points.data(), points.size() / 3);
  const std::atomic<bool> never{false};
  allAhead.splitAhead(never, 0);
  topAhead.splitAhead(never, 500);
  constexpr size_t k = 8;
  for (size_t q = 0; q < queries.size() / 3; ++q) {
    uint32_t want[k], got[k];
    double wantDist[k], gotDist[k];
    const size_t found = lazy.search(&queries[q * 3], k, want, wantDist);
    for (NeighbourTree* tree : {&allAhead, &topAhead}) {
      CHECK_EQ(tree->search(&queries[q * 3], k, got, gotDist), found);
      for (size_t i = 0; i < found; ++i) {
        CHECK_EQ(got[i], want[i]);
        CHECK_EQ(gotDist[i], wantDist[i]);
      }
    }
  }
  // A stop already set splits nothing: the tree still answers as before.
  NeighbourTree stopped(points.data(), points.size() / 3);
  const std::atomic<bool> now{true};
  stopped.splitAhead(now, 0);
  uint32_t index;
  double distance;
  CHECK_EQ(stopped.search(&queries[0], 1, &index, &distance), size_t(1));
}

TEST_MAIN
