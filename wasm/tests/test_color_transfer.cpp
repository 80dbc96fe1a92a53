// The encoder's nearest-neighbour index and colour transfer: exact neighbours (checked against
// brute force, ties included, near and far queries), and the colours that minimise the two-way
// colour error as pc_error measures it (decoded points at one position merged, tied neighbours
// averaged).
#include <cstdint>
#include <limits>
#include <random>
#include <set>

#include "../src/encoder/color_transfer.h"
#include "../src/encoder/voxel_index.h"
#include "harness.h"

using namespace vpcc;

TEST(nearest_neighbours_match_brute_force_with_ties_near_and_far) {
  std::mt19937 rng(7);
  std::vector<uint16_t> points;
  // A dense blob (most queries hit the voxel shells) and sparse outliers (the ring fallback).
  for (int i = 0; i < 3000; ++i)
    for (int c = 0; c < 3; ++c) points.push_back(uint16_t(500 + rng() % 20));
  for (int i = 0; i < 40; ++i)
    for (int c = 0; c < 3; ++c) points.push_back(uint16_t(rng() % 1024));
  const size_t n = points.size() / 3;
  const VoxelIndex index(points.data(), n);
  CHECK_EQ(index.size(), n);
  for (int trial = 0; trial < 400; ++trial) {
    const int32_t q[3] = {int32_t(trial % 2 ? 490 + rng() % 40 : rng() % 1024), int32_t(rng() % 1024), int32_t(500 + rng() % 20)};
    int64_t best = std::numeric_limits<int64_t>::max();
    std::set<uint32_t> expected;
    for (size_t i = 0; i < n; ++i) {
      int64_t d = 0;
      for (int c = 0; c < 3; ++c) d += int64_t(points[i * 3 + c] - q[c]) * (points[i * 3 + c] - q[c]);
      if (d < best) best = d, expected.clear();
      if (d == best) expected.insert(uint32_t(i));
    }
    std::set<uint32_t> found;
    const int64_t d = index.nearest(q, [&](uint32_t i) { found.insert(i); });
    CHECK_EQ(d, best);
    CHECK(found == expected);
  }
  const VoxelIndex empty(points.data(), 0);
  const int32_t q[3] = {1, 2, 3};
  CHECK_EQ(empty.nearest(q, [](uint32_t) {}), int64_t(-1));
}

TEST(points_that_did_not_move_keep_their_colour) {
  const std::vector<uint16_t> source = {10, 10, 10, 11, 10, 10, 40, 40, 40};
  const std::vector<uint8_t> colours = {200, 0, 0, 0, 200, 0, 0, 0, 200};
  const std::vector<int16_t> target(source.begin(), source.end());
  const std::vector<float> out = transferColours(source.data(), colours.data(), 3, target.data(), 3);
  for (size_t i = 0; i < out.size(); ++i) CHECK(std::abs(out[i] - colours[i]) < 1e-3f);
}

TEST(a_decoded_point_standing_for_several_source_points_blends_them) {
  // Two source points (red, green) collapse onto one decoded point at the red one's position.
  // Forward: red (weight 1/1); backward: red and green (each 1/2) → (1·red + ½·red + ½·green) / 2.
  const std::vector<uint16_t> source = {10, 10, 10, 10, 11, 10};
  const std::vector<uint8_t> colours = {200, 0, 0, 0, 200, 0};
  const std::vector<int16_t> target = {10, 10, 10};
  const std::vector<float> out = transferColours(source.data(), colours.data(), 2, target.data(), 1);
  CHECK(std::abs(out[0] - 150.f) < 1e-3f);
  CHECK(std::abs(out[1] - 50.f) < 1e-3f);
  CHECK(std::abs(out[2] - 0.f) < 1e-3f);
}

TEST(a_moved_point_takes_the_mean_of_its_tied_nearest_sources) {
  // The decoded point sits between two source points (distance 1 each) that vote elsewhere.
  const std::vector<uint16_t> source = {10, 10, 10, 12, 10, 10};
  const std::vector<uint8_t> colours = {100, 0, 0, 200, 0, 0};
  const std::vector<int16_t> target = {11, 10, 10, 10, 10, 10, 12, 10, 10};
  const std::vector<float> out = transferColours(source.data(), colours.data(), 2, target.data(), 3);
  CHECK(std::abs(out[0] - 150.f) < 1e-3f);
  CHECK(std::abs(out[3] - 100.f) < 1e-3f);
  CHECK(std::abs(out[6] - 200.f) < 1e-3f);
}

TEST(decoded_points_at_one_position_share_one_colour_and_every_vote) {
  // Two decoded points at the red source point's position count as one merged point: both get
  // what a single point there would, (1·red + ½·red + ½·green) / 2. (Giving the votes to the
  // first of them alone made (133, 67, 0) and (200, 0, 0), whose merged mean is off.)
  const std::vector<uint16_t> source = {10, 10, 10, 10, 11, 10};
  const std::vector<uint8_t> colours = {200, 0, 0, 0, 200, 0};
  const std::vector<int16_t> target = {10, 10, 10, 10, 10, 10};
  const std::vector<float> out = transferColours(source.data(), colours.data(), 2, target.data(), 2);
  for (int t = 0; t < 2; ++t) {
    CHECK(std::abs(out[t * 3] - 150.f) < 1e-3f);
    CHECK(std::abs(out[t * 3 + 1] - 50.f) < 1e-3f);
    CHECK(std::abs(out[t * 3 + 2] - 0.f) < 1e-3f);
  }
}

TEST(a_source_point_between_two_decoded_points_is_matched_by_their_mean) {
  // Decoded points A and B sit on source points of red 100 and 200; a third source point of red
  // 210 lies midway, so the measure compares it with the mean of A and B. Least squares of
  //   ½[(a−100)² + (b−200)²] + ⅓[(a−100)² + (b−200)² + (210 − (a+b)/2)²]
  // moves both by the same d: (10/3)·d = (2/3)·(60 − d), d = 10 → A 110, B 210 (their mean 160).
  const std::vector<uint16_t> source = {9, 10, 10, 11, 10, 10, 10, 10, 10};
  const std::vector<uint8_t> colours = {100, 0, 0, 200, 0, 0, 210, 0, 0};
  const std::vector<int16_t> target = {9, 10, 10, 11, 10, 10};
  const std::vector<float> out = transferColours(source.data(), colours.data(), 3, target.data(), 2);
  CHECK(std::abs(out[0] - 110.f) < 0.5f);
  CHECK(std::abs(out[3] - 210.f) < 0.5f);
}

TEST_MAIN
