// AttributeSampler: the tiled SIMD chroma up-sampling gives, at every pixel, exactly what the
// reference decoder's separable 4:2:0 → 4:4:4 filter defines (computed here pixel by pixel, in
// the same float operations), on pictures whose sizes are not multiples of the 16-pixel tile;
// malformed planes are refused. (Whole streams are checked against TMC2's logs in
// test_conformance.)
#include <algorithm>
#include <cstdint>
#include <random>
#include <vector>

#include "harness.h"
#include "vpcc/bit_reader.h"
#include "vpcc/color.h"

using namespace vpcc;

namespace {

// The filter's definition at one pixel: vertical taps on the chroma rows around it, for each of
// the chroma columns the horizontal taps need, then the horizontal taps (odd columns only);
// edges repeat; normalised samples clipped to [-0.5, 0.5]; 16 bits with offset 32768, rounded
// half away from zero and clipped.
uint16_t chromaByDefinition(const Plane& plane, unsigned bitDepth, uint32_t x, uint32_t y) {
  const float vEven[4] = {-8.f, 64.f, 216.f, -16.f}, vOdd[4] = {-16.f, 216.f, 64.f, -8.f};
  const float hOdd[4] = {-16.f, 144.f, 144.f, -16.f};
  const double weight = 1.0 / (bitDepth == 8 ? 255.0 : 1023.0);
  const int offset = bitDepth == 8 ? 128 : 512;
  auto clampTo = [](int v, int hi) { return v < 0 ? 0 : (v > hi ? hi : v); };
  auto normalised = [&](int column, int row) {
    const uint16_t s = plane.at(uint32_t(clampTo(column, int(plane.width) - 1)), uint32_t(clampTo(row, int(plane.height) - 1)));
    const float c = float(weight * double(int(s) - offset));
    return c < -0.5f ? -0.5f : (c > 0.5f ? 0.5f : c);
  };
  const int i = int(y >> 1), firstRow = (y & 1) ? i - 1 : i - 2;
  const float* taps = (y & 1) ? vOdd : vEven;
  auto vertical = [&](int column) {
    float sum = 0.f;
    for (int k = 0; k < 4; ++k) sum += taps[k] * normalised(column, firstRow + k);
    return sum * (1.0f / 256.0f);
  };
  const int j = int(x >> 1);
  float value;
  if (!(x & 1)) {
    value = vertical(j);
  } else {
    float sum = 0.f;
    for (int k = 0; k < 4; ++k) sum += hOdd[k] * vertical(clampTo(j - 1 + k, int(plane.width) - 1));
    value = sum * (1.0f / 256.0f);
  }
  const float scaled = float(65535.0 * double(value) + 32768.0);
  if (!(scaled > 0.f)) return 0;
  if (scaled >= 65535.f) return 65535;
  const int whole = int(scaled);
  return uint16_t(whole + (scaled - float(whole) >= 0.5f));
}

Picture randomPicture(uint32_t width, uint32_t height, unsigned bitDepth, std::mt19937& rng) {
  Picture p;
  p.width = width;
  p.height = height;
  p.bitDepth = uint8_t(bitDepth);
  const uint32_t widths[3] = {width, (width + 1) / 2, (width + 1) / 2};
  const uint32_t heights[3] = {height, (height + 1) / 2, (height + 1) / 2};
  for (int c = 0; c < 3; ++c) {
    p.planes[c].width = widths[c];
    p.planes[c].height = heights[c];
    // Full range, extremes included, so the clipping of both the samples and the result is hit.
    for (uint32_t k = 0; k < widths[c] * heights[c]; ++k) p.planes[c].samples.push_back(uint16_t(rng() % (1u << bitDepth)));
  }
  return p;
}

}  // namespace

TEST(tiled_chroma_upsampling_equals_the_filter_at_every_pixel) {
  std::mt19937 rng(11);
  const uint32_t sizes[][2] = {{37, 23}, {16, 16}, {1, 1}, {2, 3}, {50, 33}};
  for (unsigned bitDepth : {8u, 10u})
    for (const auto& size : sizes) {
      const Picture picture = randomPicture(size[0], size[1], bitDepth, rng);
      const AttributeSampler sampler(picture);
      // Visit pixels in a scattered order, so tiles are up-sampled in any order and revisited.
      std::vector<uint32_t> order(size[0] * size[1]);
      for (uint32_t k = 0; k < order.size(); ++k) order[k] = k;
      std::shuffle(order.begin(), order.end(), rng);
      int mismatches = 0;
      for (uint32_t k : order) {
        const uint32_t x = k % size[0], y = k / size[0];
        uint16_t yuv[3];
        sampler.sample(x, y, yuv);
        for (int c = 1; c < 3; ++c)
          if (yuv[c] != chromaByDefinition(picture.planes[c], bitDepth, x, y)) ++mismatches;
      }
      CHECK_EQ(mismatches, 0);
    }
}

TEST(planes_smaller_than_the_picture_format_needs_are_refused) {
  std::mt19937 rng(3);
  Picture narrowChroma = randomPicture(32, 32, 8, rng);
  narrowChroma.planes[2].width = 15;  // 4:2:0 of 32 columns needs 16
  narrowChroma.planes[2].samples.resize(15 * 16);
  CHECK_THROWS(AttributeSampler{narrowChroma}, ParseError);
  Picture shortSamples = randomPicture(32, 32, 8, rng);
  shortSamples.planes[1].samples.resize(10);  // fewer samples than width × height
  CHECK_THROWS(AttributeSampler{shortSamples}, ParseError);
  Picture emptyLuma = randomPicture(8, 8, 10, rng);
  emptyLuma.planes[0] = Plane();
  CHECK_THROWS(AttributeSampler{emptyLuma}, ParseError);
}

TEST_MAIN
