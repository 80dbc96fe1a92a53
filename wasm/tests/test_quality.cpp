// measureQuality (vpcc/quality.h) on tiny hand-made clouds whose pc_error figures are worked
// out by hand: identical clouds, a known shift, a known colour offset, the symmetric (worse)
// direction, ties among nearest neighbours, merged duplicates, and D2 on a plane whose normal is
// known (estimated, and given).
#include <cmath>
#include <cstdint>
#include <vector>

#include "harness.h"
#include "vpcc/quality.h"

using namespace vpcc;

namespace {

struct Cloud {
  std::vector<int32_t> xyz;
  std::vector<uint8_t> rgb;
  std::vector<float> normals;
  void add(int x, int y, int z, uint8_t r, uint8_t g, uint8_t b) {
    xyz.insert(xyz.end(), {x, y, z});
    rgb.insert(rgb.end(), {r, g, b});
  }
  void addGrey(int x, int y, int z, uint8_t grey) { add(x, y, z, grey, grey, grey); }
  CloudView view() const { return {xyz.data(), rgb.data(), rgb.size() / 3, normals.empty() ? nullptr : normals.data()}; }
};

bool near(double a, double b, double tolerance = 1e-9) { return std::fabs(a - b) <= tolerance; }

// Colour errors are squared differences of single-precision Y, Cb, Cr (as pc_error keeps them).
constexpr double kColour = 1e-7;

/// Points far apart (8 voxels) on a line: each one's nearest neighbour in a copy moved by less
/// than 4 voxels is its own copy.
Cloud sparseLine(int count) {
  Cloud c;
  for (int i = 0; i < count; ++i) c.add(100 + 8 * i, 200, 300, uint8_t(20 * i), uint8_t(255 - 20 * i), 90);
  return c;
}

// 10·log10(3 · 1023²): the D1/D2 PSNR of a mean squared error of 1 voxel² at 10 bits.
const double kOneVoxelPsnr = 10 * std::log10(3.0 * 1023 * 1023);

}  // namespace

TEST(identical_clouds_have_infinite_psnr) {
  const Cloud a = sparseLine(6);
  const Quality q = measureQuality(a.view(), a.view(), 10);
  CHECK(std::isinf(q.d1Psnr) && q.d1Psnr > 0);
  CHECK(std::isinf(q.d2Psnr) && std::isinf(q.yPsnr) && std::isinf(q.uPsnr) && std::isinf(q.vPsnr));
  CHECK_EQ(q.d1Mse, 0.0);
  CHECK_EQ(q.sourcePoints, size_t(6));
}

TEST(a_one_voxel_shift_costs_one_voxel_squared) {
  const Cloud a = sparseLine(5);
  Cloud b = a;
  for (size_t i = 0; i < b.xyz.size(); i += 3) b.xyz[i + 1] += 1;  // every point 1 voxel along y
  const Quality q = measureQuality(a.view(), b.view(), 10);
  CHECK(near(q.d1Mse, 1.0));
  CHECK(near(q.d1Psnr, kOneVoxelPsnr));
  CHECK(near(q.d1Psnr, 64.9687, 1e-4));  // 10·log10(3 · 1023²)
  // Colours equal: the nearest point of each is its own copy.
  CHECK(std::isinf(q.yPsnr));
  // The peak follows the bit depth: at 11 bits, peak 2047.
  CHECK(near(measureQuality(a.view(), b.view(), 11).d1Psnr, 10 * std::log10(3.0 * 2047 * 2047)));
  QualityOptions options;
  options.peak = 511;
  CHECK(near(measureQuality(a.view(), b.view(), options).d1Psnr, 10 * std::log10(3.0 * 511 * 511)));
  // A shift of (1, 2, 0): 5 voxels².
  for (size_t i = 0; i < b.xyz.size(); i += 3) b.xyz[i] += 2;
  CHECK(near(measureQuality(a.view(), b.view(), 10).d1Mse, 5.0));
}

TEST(a_colour_offset_shows_in_luma_only) {
  Cloud a, b;
  for (int i = 0; i < 4; ++i) {
    a.addGrey(10 * i, 0, 0, uint8_t(100 + i));
    b.addGrey(10 * i, 0, 0, uint8_t(110 + i));  // +10 on R, G and B
  }
  const Quality q = measureQuality(a.view(), b.view(), 10);
  // BT.709: a grey offset of 10 moves Y by 10/255 and neither chroma (their weights sum to 0).
  CHECK(near(q.yMse, (10.0 / 255) * (10.0 / 255), kColour));
  CHECK(near(q.yPsnr, 20 * std::log10(255.0 / 10), 1e-4));  // 28.1308 dB
  CHECK(q.uPsnr > 100 && q.vPsnr > 100);                   // zero but for float rounding
  CHECK(std::isinf(q.d1Psnr));
  // A pure blue offset: Y moves by 0.0722·20/255, Cb by 0.5·20/255.
  Cloud c = a;
  for (size_t i = 0; i < c.rgb.size(); i += 3) c.rgb[i + 2] += 20;
  const Quality blue = measureQuality(a.view(), c.view(), 10);
  CHECK(near(blue.yMse, std::pow(0.0722 * 20 / 255, 2), kColour));
  CHECK(near(blue.uMse, std::pow(0.5 * 20 / 255, 2), kColour));
  CHECK(near(blue.vMse, std::pow(0.0458 * 20 / 255, 2), kColour));
}

TEST(the_symmetric_figure_is_the_worse_direction) {
  const Cloud a = sparseLine(4);
  Cloud b = a;
  b.addGrey(400, 200, 300, 90);  // a stray decoded point, 276 voxels beyond the last source point (x 124)
  // decoded → source: the stray point is (400 − 124)² away; source → decoded: nothing missing.
  const Quality q = measureQuality(a.view(), b.view(), 10);
  const double stray = double(400 - 124) * (400 - 124) / 5;
  CHECK_EQ(q.sourceToDecoded.d1, 0.0);
  CHECK(near(q.decodedToSource.d1, stray));
  CHECK(near(q.d1Mse, stray));
  CHECK(near(q.d1Psnr, 10 * std::log10(3.0 * 1023 * 1023 / stray)));
  // The other way round (a point missing from the decoded cloud): the same worst direction.
  const Quality swapped = measureQuality(b.view(), a.view(), 10);
  CHECK(near(swapped.sourceToDecoded.d1, stray));
  CHECK_EQ(swapped.decodedToSource.d1, 0.0);
  CHECK(near(swapped.d1Psnr, q.d1Psnr));
}

TEST(nearest_points_at_the_same_distance_are_averaged) {
  // One source point, grey 150, between two decoded points 1 voxel away, grey 100 and 200.
  Cloud a, b;
  a.addGrey(50, 50, 50, 150);
  b.addGrey(49, 50, 50, 100);
  b.addGrey(51, 50, 50, 201);
  const Quality q = measureQuality(a.view(), b.view(), 10);
  // source → decoded: the tied neighbours' mean colour, round(150.5) = 151, against 150.
  CHECK(near(q.sourceToDecoded.y, std::pow(1.0 / 255, 2), kColour));
  // decoded → source: each decoded point against the one source point: 50² and 51².
  CHECK(near(q.decodedToSource.y, (std::pow(50.0 / 255, 2) + std::pow(51.0 / 255, 2)) / 2, kColour));
  CHECK(near(q.d1Mse, 1.0));
}

TEST(duplicate_points_are_merged_with_their_mean_colour) {
  Cloud a, b;
  a.addGrey(10, 10, 10, 150);
  a.addGrey(30, 10, 10, 60);
  b.addGrey(10, 10, 10, 100);
  b.addGrey(10, 10, 10, 201);  // same position: one point of colour (100 + 201) / 2 = 150 (truncated)
  b.addGrey(30, 10, 10, 60);
  b.addGrey(30, 10, 10, 60);
  const Quality q = measureQuality(a.view(), b.view(), 10);
  CHECK_EQ(q.decodedPoints, size_t(2));
  CHECK(std::isinf(q.d1Psnr));
  CHECK(std::isinf(q.yPsnr));
}

TEST(point_to_plane_uses_the_surface_normal) {
  // Source: the plane z = 50 (x, y in 0 … 19); decoded: the same plane one voxel up and moved
  // one voxel along x (x in 1 … 20). Every point's error has a component of 1 along the normal;
  // the column that lost its neighbour is √2 away.
  Cloud a, b;
  for (int y = 0; y < 20; ++y)
    for (int x = 0; x < 20; ++x) {
      a.addGrey(x, y, 50, 128);
      b.addGrey(x + 1, y, 51, 128);
    }
  const Quality q = measureQuality(a.view(), b.view(), 10);
  CHECK(near(q.d1Mse, (380 * 1.0 + 20 * 2.0) / 400));
  CHECK(near(q.sourceToDecoded.d2, 1.0, 1e-9));  // the estimated normal is ±z
  CHECK(near(q.decodedToSource.d2, 1.0, 1e-9));
  CHECK(near(q.d2Psnr, kOneVoxelPsnr, 1e-6));
  CHECK(q.d2Psnr > q.d1Psnr);
  // Given normals are used as given: along x, only the moved column's error remains.
  Cloud withNormals = a;
  for (size_t i = 0; i < a.rgb.size() / 3; ++i) withNormals.normals.insert(withNormals.normals.end(), {1.f, 0.f, 0.f});
  const Quality given = measureQuality(withNormals.view(), b.view(), 10);
  CHECK(near(given.sourceToDecoded.d2, 20.0 / 400, 1e-9));
  CHECK(near(given.decodedToSource.d2, 20.0 / 400, 1e-9));
  CHECK(near(given.d1Mse, q.d1Mse));
}

TEST(an_empty_cloud_has_nothing_to_compare) {
  const Cloud a = sparseLine(3);
  const Cloud none;
  const Quality q = measureQuality(a.view(), none.view(), 10);
  CHECK_EQ(q.decodedPoints, size_t(0));
  CHECK_EQ(q.d1Psnr, 0.0);
}

TEST_MAIN
