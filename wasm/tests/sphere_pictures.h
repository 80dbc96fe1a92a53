// What the encoder picture tests (test_encoder_geometry.cpp, test_encoder_attribute.cpp) share:
// a voxelized sphere as input, and whether a region of a decoded picture is occupied.
#pragma once
#include <cmath>
#include <cstdint>
#include <set>

#include "vpcc/encoder.h"
#include "vpcc/parser.h"
#include "vpcc/reconstruct.h"
#include "vpcc/video.h"
#include "vpcc/video_encoder.h"

namespace vpcc::testpictures {

/// A voxelized sphere of radius 120 around (c, c, c): the grid points of 800 × 400 steps of
/// (θ, φ), rounded, the duplicates dropped; `colour(θ, j, rgb)` colours the point of φ step j.
template <class Colour>
InputFrame voxelSphere(double c, Colour colour) {
  InputFrame f;
  std::set<uint64_t> seen;
  const double r = 120;
  for (int i = 0; i < 800; ++i)
    for (int j = 0; j < 400; ++j) {
      const double theta = 2 * M_PI * i / 800, phi = M_PI * j / 400;
      const double x = c + r * std::sin(phi) * std::cos(theta), y = c + r * std::cos(phi), z = c + r * std::sin(phi) * std::sin(theta);
      const uint16_t p[3] = {uint16_t(std::lround(x)), uint16_t(std::lround(y)), uint16_t(std::lround(z))};
      if (!seen.insert(uint64_t(p[0]) | uint64_t(p[1]) << 16 | uint64_t(p[2]) << 32).second) continue;
      f.positions.insert(f.positions.end(), p, p + 3);
      uint8_t rgb[3];
      colour(theta, j, rgb);
      f.colors.insert(f.colors.end(), rgb, rgb + 3);
    }
  return f;
}

/// `frames` encoded with `cfg` (x265 / libav) and the stream's video sub-bitstreams decoded back;
/// `sequences` is how many V3C sequences the stream held (the tests expect one; with none the
/// video is empty).
inline DecodedVideo encodeAndDecodeVideo(const std::vector<InputFrame>& frames, const EncoderConfig& cfg, size_t& sequences) {
  auto encoder = makeLibavEncoder();
  const auto seqs = parseSampleStream(encodeSequence(frames, cfg, *encoder));
  sequences = seqs.size();
  return seqs.empty() ? DecodedVideo{} : decodeVideo(seqs[0], *makeLibavDecoder());
}

/// Whether the size × size region at picture position (x0, y0) covers an occupied sample of
/// `occupancy`, a map at `precision` picture samples per occupancy sample.
inline bool regionOccupied(const Picture& occupancy, uint32_t precision, uint32_t x0, uint32_t y0, uint32_t size) {
  for (uint32_t y = y0 / precision; y < (y0 + size) / precision; ++y)
    for (uint32_t x = x0 / precision; x < (x0 + size) / precision; ++x)
      if (occupancy.planes[0].samples[size_t(y) * occupancy.width + x] != 0) return true;
  return false;
}

/// How often a region of map 0 decoded exactly as in the picture before it (map 1 of the frame
/// before), counted apart for regions with and without an occupied sample.
struct RepeatCounts {
  size_t empty = 0, emptyRepeated = 0, occupied = 0, occupiedRepeated = 0;
};

/// Counts, over frames 1 … n − 1 of maps-interleaved `pictures` (`mapCount` a frame) and their
/// `occupancy`, the aligned size × size regions of map 0 for which `same(picture, previous, x, y)`.
template <class Same>
RepeatCounts countRepeatedRegions(const std::vector<Picture>& occupancyMaps, const std::vector<Picture>& pictures, size_t mapCount,
                                  uint32_t size, Same same) {
  RepeatCounts n;
  for (size_t f = 1; f < occupancyMaps.size(); ++f) {
    const Picture& occupancy = occupancyMaps[f];
    const Picture& picture = pictures[f * mapCount];
    const Picture& previous = pictures[f * mapCount - 1];
    const uint32_t precision = picture.width / occupancy.width;
    for (uint32_t y = 0; y + size <= picture.height; y += size)
      for (uint32_t x = 0; x + size <= picture.width; x += size) {
        const bool repeated = same(picture, previous, x, y);
        if (regionOccupied(occupancy, precision, x, y, size)) {
          ++n.occupied;
          n.occupiedRepeated += repeated;
        } else {
          ++n.empty;
          n.emptyRepeated += repeated;
        }
      }
  }
  return n;
}

}  // namespace vpcc::testpictures
