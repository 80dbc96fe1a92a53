// Colour of reconstructed points from decoded attribute pictures, reproducing the reference
// decoder's (TMC2) chain bit-exactly, since its frame checksums depend on it:
//   decoded samples → normalised float Y'CbCr → chroma 4:2:0 → 4:4:4 up-sampling (separable
//   4-tap filters, vertical then horizontal, float arithmetic) → 16-bit Y'CbCr (scale 65535,
//   chroma offset 32768) → per point BT.709 → 8-bit R'G'B' with rounding.
// The 16-bit Y'CbCr value is what post-processing (colour transfer, attribute smoothing) works on.
#pragma once

#include <cstdint>
#include <vector>

#include "vpcc/video.h"

namespace vpcc {

/// Samples one decoded attribute picture at full resolution as 16-bit Y'CbCr. Only the samples
/// a point needs are computed (no full-picture up-sampling); building one costs two small
/// look-up tables, sampling allocates nothing. Points come in runs along picture rows, and
/// neighbouring pixels share vertically filtered chroma columns, so those are cached per row
/// (the cache makes a sampler single-threaded; results do not depend on it).
class AttributeSampler {
 public:
  explicit AttributeSampler(const Picture& picture);
  /// Y, Cb, Cr at 16 bits of the pixel (x, y) (x < width, y < height).
  void sample(uint32_t x, uint32_t y, uint16_t out[3]) const;

 private:
  /// The vertically filtered chroma columns last computed on one output row of one plane.
  struct ColumnCache {
    static constexpr int kSlots = 8;  // direct-mapped by column
    uint32_t row = UINT32_MAX;
    int32_t column[kSlots];
    float value[kSlots];
  };
  float chromaAt(int plane, uint32_t x, uint32_t y) const;
  const Picture* picture_;
  mutable ColumnCache cache_[2];  // Cb, Cr
  std::vector<float> chromaValue_;  // sample → normalised chroma in [-0.5, 0.5]
  std::vector<uint16_t> luma16_;    // sample → 16-bit luma
  uint16_t maxSample_;
};

/// A 16-bit Y'CbCr colour (chroma offset 32768) to 8-bit R'G'B', BT.709, rounded and clipped.
void yuv16ToRgb8(const uint16_t yuv[3], uint8_t rgb[3]);

/// The same for `count` consecutive colours.
void yuv16ToRgb8(const uint16_t* yuv, uint8_t* rgb, size_t count);

}  // namespace vpcc
