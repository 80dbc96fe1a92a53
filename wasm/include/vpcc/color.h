// Colour of reconstructed points from decoded attribute pictures, reproducing the reference
// decoder's (TMC2) chain bit-exactly, since its frame checksums depend on it:
//   decoded samples → normalised float Y'CbCr → chroma 4:2:0 → 4:4:4 up-sampling (separable
//   4-tap filters, vertical then horizontal, float arithmetic) → 16-bit Y'CbCr (scale 65535,
//   chroma offset 32768) → per point BT.709 → 8-bit R'G'B' with rounding.
// The 16-bit Y'CbCr value is what post-processing (colour transfer, attribute smoothing) works on.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "vpcc/video.h"

namespace vpcc {

/// Samples one decoded attribute picture at full resolution as 16-bit Y'CbCr. Chroma is
/// up-sampled 16×16 pixels at a time (SIMD), the first time a pixel of such a tile is sampled,
/// and kept: points cover a fraction of the picture (patches), but come pixel by pixel, so
/// per-point filtering repeated the same taps many times over. Building one allocates the
/// full-resolution chroma planes (4 bytes a pixel, uninitialised) and two small look-up tables;
/// the tile cache makes sampling single-threaded (results do not depend on it) unless the
/// tiles are marked and up-sampled first.
class AttributeSampler {
 public:
  /// Throws ParseError when the planes do not fit the picture's size and format.
  explicit AttributeSampler(const Picture& picture);
  /// Y, Cb, Cr at 16 bits of the pixel (x, y) (x < width, y < height). Inline: it runs once
  /// per point.
  /// Marks the tile of pixel (x, y) for upsampleMarked (pixels outside the picture: none).
  void mark(uint32_t x, uint32_t y);
  /// Up-samples every marked tile, on the decoder's threads (each tile is its own part of the
  /// planes). After it, sampling marked pixels only reads, so threads may sample side by side.
  void upsampleMarked();
  void sample(uint32_t x, uint32_t y, uint16_t out[3]) const {
    const Picture& p = *picture_;
    out[0] = luma16_[std::min(p.planes[0].at(x, y), maxSample_)];
    if (p.chroma444) return sampleChroma444(x, y, out);
    const size_t tile = size_t(y / kTile) * tilesWide_ + x / kTile;
    if (tileDone_[tile] != kUpsampled) upsampleTile(x / kTile, y / kTile);
    const uint16_t* chroma = chroma16_.get() + (size_t(y) * p.width + x) * 2;
    out[1] = chroma[0];
    out[2] = chroma[1];
  }

 private:
  static constexpr uint32_t kTile = 16;  // output pixels per side of an up-sampled tile
  void upsampleTile(uint32_t tileX, uint32_t tileY) const;
  void sampleChroma444(uint32_t x, uint32_t y, uint16_t out[3]) const;
  const Picture* picture_;
  std::vector<float> chromaValue_;  // sample → normalised chroma in [-0.5, 0.5]
  std::vector<uint16_t> luma16_;    // sample → 16-bit luma
  uint16_t maxSample_;
  uint32_t tilesWide_ = 0;
  static constexpr uint8_t kMarked = 2, kUpsampled = 1;
  mutable std::vector<uint8_t> tileDone_;         // per tile: chroma16_ holds it (kUpsampled), or marked
  std::vector<uint32_t> marked_;                  // tiles marked and not up-sampled yet
  mutable std::unique_ptr<uint16_t[]> chroma16_;  // 4:2:0 only: Cb, Cr per pixel at 16 bits
};

/// A 16-bit Y'CbCr colour (chroma offset 32768) to 8-bit R'G'B', BT.709, rounded and clipped.
void yuv16ToRgb8(const uint16_t yuv[3], uint8_t rgb[3]);

/// The same for `count` consecutive colours.
void yuv16ToRgb8(const uint16_t* yuv, uint8_t* rgb, size_t count);

}  // namespace vpcc
