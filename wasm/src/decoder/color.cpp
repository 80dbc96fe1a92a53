#include "vpcc/color.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "vpcc/bit_reader.h"
#include "common/parallel.h"

#if defined(__wasm_simd128__)
#include <wasm_simd128.h>
#endif

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

// toSixteenBit(value, true) of four values at once: the same operations, lane by lane.
typedef float F32x4 __attribute__((vector_size(16)));
typedef int32_t I32x4 __attribute__((vector_size(16)));
typedef double F64x2 __attribute__((vector_size(16)));
inline I32x4 toSixteenBitChroma(F32x4 value) {
  F64x2 low = {double(value[0]), double(value[1])}, high = {double(value[2]), double(value[3])};
  low = 65535.0 * low + 32768.0;
  high = 65535.0 * high + 32768.0;
  const F32x4 scaled = {float(low[0]), float(low[1]), float(high[0]), float(high[1])};
  // roundClipped(scaled, 65535); comparisons give -1 in lanes where true. The values lie well
  // inside int32 (chroma in [-0.5, 0.5] filtered by taps summing to 1).
  const I32x4 whole = __builtin_convertvector(scaled, I32x4);
  const F32x4 fraction = scaled - __builtin_convertvector(whole, F32x4);
  I32x4 rounded = whole - I32x4(fraction >= 0.5f);
  rounded &= I32x4(scaled > 0.f);
  const I32x4 top = I32x4(scaled >= 65535.f);
  return (rounded & ~top) | (65535 & top);
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
  const Plane& luma = picture.planes[0];
  if (luma.width < picture.width || luma.height < picture.height || luma.samples.size() < size_t(luma.width) * luma.height)
    throw ParseError("attribute picture's luma plane is smaller than the picture");
  for (int c = 1; c < 3; ++c) {
    const Plane& plane = picture.planes[c];
    const uint32_t wantWidth = picture.chroma444 ? picture.width : (picture.width + 1) / 2;
    const uint32_t wantHeight = picture.chroma444 ? picture.height : (picture.height + 1) / 2;
    if (plane.width < wantWidth || plane.height < wantHeight || plane.samples.size() < size_t(plane.width) * plane.height)
      throw ParseError("attribute picture's chroma planes are smaller than its format needs");
  }
  if (!picture.chroma444) {
    tilesWide_ = (picture.width + kTile - 1) / kTile;
    tileDone_.assign(size_t(tilesWide_) * ((picture.height + kTile - 1) / kTile), 0);
    // Not initialised: a pixel is read only after its tile is up-sampled.
    chroma16_.reset(new uint16_t[size_t(picture.width) * picture.height * 2]);
  }
}

void AttributeSampler::upsampleTile(uint32_t tileX, uint32_t tileY) const {
  const Picture& p = *picture_;
  const uint32_t x0 = tileX * kTile, y0 = tileY * kTile;
  const uint32_t x1 = std::min(x0 + kTile, p.width), y1 = std::min(y0 + kTile, p.height);
  const float* lut = chromaValue_.data();
  const uint16_t maxSample = maxSample_;
  // The tile's chroma neighbourhood as normalised floats: columns x0/2 - 1 .. x0/2 + 10 and rows
  // y0/2 - 2 .. y0/2 + 9 (edges repeated). Even pixel 2j takes column j, odd pixel 2j + 1
  // filters columns j - 1 .. j + 2; even row 2i filters rows i - 2 .. i + 1, odd row 2i + 1
  // rows i - 1 .. i + 2.
  constexpr int kColumns = kTile / 2 + 4, kRows = kTile / 2 + 4;
  static_assert(kColumns % 4 == 0, "whole vectors of columns");
  for (int c = 1; c < 3; ++c) {
    const Plane& plane = p.planes[c];
    const int lastRow = int(plane.height) - 1, lastColumn = int(plane.width) - 1;
    int column[kColumns];
    for (int u = 0; u < kColumns; ++u) column[u] = clampIndex(int(x0 / 2) - 1 + u, lastColumn);
    float neighbourhood[kRows][kColumns];
    for (int r = 0; r < kRows; ++r) {
      const uint16_t* row = plane.samples.data() + size_t(clampIndex(int(y0 / 2) - 2 + r, lastRow)) * plane.width;
      for (int u = 0; u < kColumns; ++u) neighbourhood[r][u] = lut[std::min(row[column[u]], maxSample)];
    }
    for (uint32_t y = y0; y < y1; ++y) {
      const float* taps = (y & 1) ? kVerticalOdd : kVerticalEven;
      const int firstRow = int(y >> 1) - int(y0 / 2) + int(y & 1);  // index of row i - 2 or i - 1
      float vertical[kColumns];
      for (int q = 0; q < kColumns; q += 4) {
        F32x4 sum = {0.f, 0.f, 0.f, 0.f};
        for (int k = 0; k < 4; ++k) {
          F32x4 s;
          std::memcpy(&s, &neighbourhood[firstRow + k][q], sizeof s);
          sum += taps[k] * s;
        }
        sum *= kInvWeightSum;
        std::memcpy(vertical + q, &sum, sizeof sum);
      }
      // Output pixels x0 + 2m (even) and x0 + 2m + 1 (odd), m = 0 .. 7, four at a time.
      uint16_t* out = chroma16_.get() + (size_t(y) * p.width + x0) * 2 + (c - 1);
      for (int m = 0; m < int(kTile / 2); m += 4) {
        F32x4 even, odd = {0.f, 0.f, 0.f, 0.f};
        std::memcpy(&even, vertical + m + 1, sizeof even);
        for (int k = 0; k < 4; ++k) {
          F32x4 v;
          std::memcpy(&v, vertical + m + k, sizeof v);
          odd += kHorizontalOdd[k] * v;
        }
        odd *= kInvWeightSum;
        const I32x4 evenSample = toSixteenBitChroma(even), oddSample = toSixteenBitChroma(odd);
        for (int lane = 0; lane < 4; ++lane) {
          const uint32_t x = x0 + 2 * uint32_t(m + lane);
          if (x < x1) out[size_t(2 * (m + lane)) * 2] = uint16_t(evenSample[lane]);
          if (x + 1 < x1) out[size_t(2 * (m + lane) + 1) * 2] = uint16_t(oddSample[lane]);
        }
      }
    }
  }
  tileDone_[size_t(tileY) * tilesWide_ + tileX] = kUpsampled;
}

void AttributeSampler::mark(uint32_t x, uint32_t y) {
  if (picture_->chroma444 || x >= picture_->width || y >= picture_->height) return;
  const size_t tile = size_t(y / kTile) * tilesWide_ + x / kTile;
  if (tileDone_[tile] == 0) {
    tileDone_[tile] = kMarked;
    marked_.push_back(uint32_t(tile));
  }
}

void AttributeSampler::upsampleMarked() {
  parallel::forRanges(marked_.size(), 64, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) upsampleTile(marked_[i] % tilesWide_, marked_[i] / tilesWide_);
  });
  marked_.clear();
}

void AttributeSampler::sampleChroma444(uint32_t x, uint32_t y, uint16_t out[3]) const {
  for (int c = 1; c < 3; ++c) out[c] = toSixteenBit(chromaValue_[std::min(picture_->planes[c].at(x, y), maxSample_)], true);
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
  size_t i = 0;
#if defined(__wasm_simd128__)
  // Two colours at a time: the scalar version's double operations, lane by lane. pmax(x, lo) and
  // pmin(x, hi) are std::max(x, lo) and std::min(x, hi) exactly (same operand picked on ties).
  const v128_t weight = wasm_f64x2_splat(1.0 / 65535.0), zero = wasm_f64x2_splat(0.0), one = wasm_f64x2_splat(1.0);
  const v128_t minusHalf = wasm_f64x2_splat(-0.5), half = wasm_f64x2_splat(0.5), top = wasm_f64x2_splat(255.0);
  auto to8 = [&](v128_t c) {
    // roundClipped(c * 255, 255): clipping first sends NaN and negatives to 0 (NaN's fraction
    // compares false), then whole + (fraction >= 0.5), as whole numbers in doubles.
    const v128_t v = wasm_f64x2_pmin(wasm_f64x2_pmax(wasm_f64x2_mul(c, top), zero), top);
    const v128_t whole = wasm_f64x2_trunc(v);
    return wasm_f64x2_add(whole, wasm_v128_and(wasm_f64x2_ge(wasm_f64x2_sub(v, whole), half), one));
  };
  for (; i + 2 <= count; i += 2) {
    const uint16_t* a = yuv + i * 3;
    const v128_t y = wasm_f64x2_pmin(wasm_f64x2_pmax(wasm_f64x2_mul(weight, wasm_f64x2_make(a[0], a[3])), zero), one);
    const v128_t u = wasm_f64x2_pmin(
        wasm_f64x2_pmax(wasm_f64x2_mul(weight, wasm_f64x2_make(a[1] - 32768.0, a[4] - 32768.0)), minusHalf), half);
    const v128_t v = wasm_f64x2_pmin(
        wasm_f64x2_pmax(wasm_f64x2_mul(weight, wasm_f64x2_make(a[2] - 32768.0, a[5] - 32768.0)), minusHalf), half);
    const v128_t r = to8(wasm_f64x2_add(y, wasm_f64x2_mul(wasm_f64x2_splat(1.57480), v)));
    const v128_t g = to8(wasm_f64x2_sub(wasm_f64x2_sub(y, wasm_f64x2_mul(wasm_f64x2_splat(0.18733), u)),
                                        wasm_f64x2_mul(wasm_f64x2_splat(0.46813), v)));
    const v128_t b = to8(wasm_f64x2_add(y, wasm_f64x2_mul(wasm_f64x2_splat(1.85563), u)));
    uint8_t* out = rgb + i * 3;
    out[0] = uint8_t(wasm_f64x2_extract_lane(r, 0));
    out[1] = uint8_t(wasm_f64x2_extract_lane(g, 0));
    out[2] = uint8_t(wasm_f64x2_extract_lane(b, 0));
    out[3] = uint8_t(wasm_f64x2_extract_lane(r, 1));
    out[4] = uint8_t(wasm_f64x2_extract_lane(g, 1));
    out[5] = uint8_t(wasm_f64x2_extract_lane(b, 1));
  }
#endif
  for (; i < count; ++i) yuv16ToRgb8(yuv + i * 3, rgb + i * 3);
}

}  // namespace vpcc
