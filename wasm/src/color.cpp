#include "vpcc/color.h"

#include <algorithm>
#include <cmath>

// The reference results depend on every float rounding step: products and sums must not be fused
// into FMA instructions (only possible when the target has FMA, e.g. -march=native).
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__) && defined(__FMA__)
#pragma GCC optimize("fp-contract=off")
#endif

namespace vpcc {
namespace {

// Chroma up-sampling filter (the reference decoder's default, index 0 of its 4:2:0 → 4:4:4 set),
// weights in 1/256. Chroma sample i sits between luma rows 2i and 2i + 1.
// Vertical, even output row 2i: chroma rows i-2 .. i+1.
constexpr float kVerticalEven[4] = {-8.f, 64.f, 216.f, -16.f};
// Vertical, odd output row 2i+1: chroma rows i-1 .. i+2.
constexpr float kVerticalOdd[4] = {-16.f, 216.f, 64.f, -8.f};
// Horizontal, odd output column 2j+1: columns j-1 .. j+2 (even columns take column j as is).
constexpr float kHorizontalOdd[4] = {-16.f, 144.f, 144.f, -16.f};
constexpr float kInvWeightSum = 1.0f / 256.0f;

inline int clampIndex(int v, int hi) { return v < 0 ? 0 : (v > hi ? hi : v); }

// std::round (half away from zero) of a value clipped to [0, hi], without the libm call (a
// software function in wasm, in the hottest loops here). Exactly std::round: for 0 < v < 2^23
// the fraction v - trunc(v) is computed without error, so comparing it with one half decides
// as round does; the clipping happens before instead of after, which gives the same result.
template <typename Real>
inline int roundClipped(Real v, int hi) {
  if (!(v > Real(0))) return 0;  // (a NaN, which the callers never produce, gives 0 too)
  if (v >= Real(hi)) return hi;
  const int whole = int(v);
  return whole + (v - Real(whole) >= Real(0.5));
}

// Float → 16-bit sample: scale 65535, chroma offset 32768, rounded in float, clipped.
inline uint16_t toSixteenBit(float value, bool chroma) {
  const float scaled = float(65535.0 * double(value) + (chroma ? 32768.0 : 0.0));
  return uint16_t(roundClipped(scaled, 65535));
}

}  // namespace

AttributeSampler::AttributeSampler(const Picture& picture) : picture_(&picture) {
  // The reference normalises 8-bit pictures by 255 and every other depth by 1023 (offsets 128/512).
  const bool eightBit = picture.bitDepth == 8;
  const double scale = eightBit ? 255.0 : 1023.0, weight = 1.0 / scale;
  const int offset = eightBit ? 128 : 512;
  const size_t count = size_t(1) << std::min<unsigned>(picture.bitDepth, 16);
  maxSample_ = uint16_t(count - 1);
  chromaValue_.resize(count);
  luma16_.resize(count);
  for (size_t s = 0; s < count; ++s) {
    const float c = float(weight * double(int(s) - offset));
    chromaValue_[s] = std::min(std::max(c, -0.5f), 0.5f);
    const float l = std::min(std::max(float(weight * double(s)), 0.f), 1.f);
    luma16_[s] = toSixteenBit(l, false);
  }
}

float AttributeSampler::chromaAt(int planeIndex, uint32_t x, uint32_t y) const {
  const Plane& plane = picture_->planes[planeIndex];
  ColumnCache& cache = cache_[planeIndex - 1];
  if (cache.row != y) {
    cache.row = y;
    std::fill(cache.column, cache.column + ColumnCache::kSlots, -1);
  }
  const int lastRow = int(plane.height) - 1, lastColumn = int(plane.width) - 1;
  const int i = int(y >> 1);
  const float* taps = (y & 1) ? kVerticalOdd : kVerticalEven;
  const int firstRow = (y & 1) ? i - 1 : i - 2;
  const uint16_t* rows[4];
  for (int k = 0; k < 4; ++k) rows[k] = plane.samples.data() + size_t(clampIndex(firstRow + k, lastRow)) * plane.width;
  const float* lut = chromaValue_.data();
  const uint16_t maxSample = maxSample_;
  auto vertical = [&](int column) {
    const int slot = column & (ColumnCache::kSlots - 1);
    if (cache.column[slot] == column) return cache.value[slot];
    float sum = 0.f;
    for (int k = 0; k < 4; ++k) sum += taps[k] * lut[std::min(rows[k][column], maxSample)];
    const float value = sum * kInvWeightSum;
    cache.column[slot] = column;
    cache.value[slot] = value;
    return value;
  };
  const int j = int(x >> 1);
  if (!(x & 1)) return vertical(j);
  float sum = 0.f;
  for (int k = 0; k < 4; ++k) sum += kHorizontalOdd[k] * vertical(clampIndex(j - 1 + k, lastColumn));
  return sum * kInvWeightSum;
}

void AttributeSampler::sample(uint32_t x, uint32_t y, uint16_t out[3]) const {
  const Picture& p = *picture_;
  out[0] = luma16_[std::min(p.planes[0].at(x, y), maxSample_)];
  if (p.chroma444) {
    for (int c = 1; c < 3; ++c) out[c] = toSixteenBit(chromaValue_[std::min(p.planes[c].at(x, y), maxSample_)], true);
    return;
  }
  out[1] = toSixteenBit(chromaAt(1, x, y), true);
  out[2] = toSixteenBit(chromaAt(2, x, y), true);
}

void yuv16ToRgb8(const uint16_t yuv[3], uint8_t rgb[3]) {
  constexpr double kWeight = 1.0 / 65535.0;
  const double y = std::min(std::max(kWeight * yuv[0], 0.0), 1.0);
  const double u = std::min(std::max(kWeight * (yuv[1] - 32768.0), -0.5), 0.5);
  const double v = std::min(std::max(kWeight * (yuv[2] - 32768.0), -0.5), 0.5);
  const double r = y + 1.57480 * v, g = y - 0.18733 * u - 0.46813 * v, b = y + 1.85563 * u;
  auto to8 = [](double c) { return uint8_t(roundClipped(c * 255, 255)); };
  rgb[0] = to8(r);
  rgb[1] = to8(g);
  rgb[2] = to8(b);
}

void yuv16ToRgb8(const uint16_t* yuv, uint8_t* rgb, size_t count) {
  for (size_t i = 0; i < count; ++i) yuv16ToRgb8(yuv + i * 3, rgb + i * 3);
}

}  // namespace vpcc
