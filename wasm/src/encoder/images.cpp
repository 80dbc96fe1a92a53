// Image generation: the pictures the three videos code. Occupancy (which pixels hold points),
// geometry (depths per map) and attribute (colours per map) pictures of one frame, with the
// padding that makes the pixels no point uses cheap to code: hole filling inside a patch,
// push-pull padding between patches, empty blocks of all-intra attribute pictures continuing the
// samples above them and, in inter-coded attribute pictures, empty blocks repeated from the
// picture before; colours go from RGB to BT.709 YUV 4:2:0.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "stages.h"

namespace vpcc::encoding {

/// Occupancy coding. HEVC (TMC2's codec group) codes the map losslessly as 0/1 with threshold 0,
/// as TMC2 does: TMC2's decoder rewrites each occupancy sample to 0/1 while up-sampling it and
/// then compares the rewritten sample to the threshold again, so any threshold above 0 empties a
/// map coded at precision 2 or 4 there. AVC (for browsers' WebCodecs, whose profiles have no
/// lossless mode) codes 0/255 lossy with threshold 127, which the quantiser never crosses.
bool losslessOccupancy(const EncoderConfig& cfg) { return cfg.codec == VideoCodec::Hevc; }
uint32_t occupancyThreshold(const EncoderConfig& cfg) { return losslessOccupancy(cfg) ? 0 : 127; }

namespace {

/// Side of the aligned regions whose depths an inter-coded geometry picture repeats from the
/// picture before when no occupied block lies in them (repeatEmptyBlocks): 16, a coding unit
/// x265 may code whole. Repeating every empty 8×8 block put the copied samples into the same
/// coding units as a patch's edge, whose depths then cost more and lost D1 (Fox one GOP, two
/// points: D1 +0.2 % against −4.2 % with 16; 32 repeats too little: +0.5 %).
constexpr uint32_t kGeometryRepeatRegion = 16;
static_assert(kGeometryRepeatRegion % kRepeatBlock == 0, "regions are whole repeat blocks");

uint16_t occupiedSample(const EncoderConfig& cfg) { return losslessOccupancy(cfg) ? 1 : 255; }

/// Push-pull padding: pixels outside `mask` get values interpolated from a pyramid of averages
/// of the valid pixels, which leaves smooth areas that cost few bits.
void pushPull(std::vector<float>& image, std::vector<float> weight, uint32_t width, uint32_t height, int channels) {
  if (width <= 1 && height <= 1) return;
  const uint32_t w2 = (width + 1) / 2, h2 = (height + 1) / 2;
  std::vector<float> coarse(size_t(w2) * h2 * channels, 0), coarseWeight(size_t(w2) * h2, 0);
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      const float wt = weight[size_t(y) * width + x];
      if (wt <= 0) continue;
      const size_t ci = size_t(y / 2) * w2 + x / 2;
      coarseWeight[ci] += wt;
      for (int c = 0; c < channels; ++c) coarse[ci * channels + c] += wt * image[(size_t(y) * width + x) * channels + c];
    }
  for (size_t i = 0; i < coarseWeight.size(); ++i)
    if (coarseWeight[i] > 0) {
      for (int c = 0; c < channels; ++c) coarse[i * channels + c] /= coarseWeight[i];
      coarseWeight[i] = 1;
    }
  pushPull(coarse, coarseWeight, w2, h2, channels);
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      const size_t i = size_t(y) * width + x;
      if (weight[i] > 0) continue;
      for (int c = 0; c < channels; ++c) image[i * channels + c] = coarse[(size_t(y / 2) * w2 + x / 2) * channels + c];
    }
}

Picture makePicture(uint32_t width, uint32_t height) {
  Picture pic;
  pic.width = width;
  pic.height = height;
  pic.bitDepth = 8;
  for (int c = 0; c < 3; ++c) {
    pic.planes[c].width = c ? width / 2 : width;
    pic.planes[c].height = c ? height / 2 : height;
    pic.planes[c].samples.assign(size_t(pic.planes[c].width) * pic.planes[c].height, c ? 128 : 0);
  }
  return pic;
}

uint16_t clamp8(float v) { return uint16_t(std::lround(std::min(255.f, std::max(0.f, v)))); }

/// RGB (float, per pixel) → full-range BT.709 YUV 4:2:0, the inverse of the decoder's conversion.
Picture rgbToYuv420(const std::vector<float>& rgb, uint32_t width, uint32_t height) {
  Picture pic = makePicture(width, height);
  std::vector<float> cb(size_t(width) * height), cr(size_t(width) * height);
  for (size_t i = 0; i < size_t(width) * height; ++i) {
    const float r = rgb[i * 3], g = rgb[i * 3 + 1], b = rgb[i * 3 + 2];
    const float y = 0.2126f * r + 0.7152f * g + 0.0722f * b;
    pic.planes[0].samples[i] = clamp8(y);
    cb[i] = (b - y) / 1.8556f + 128.f;
    cr[i] = (r - y) / 1.5748f + 128.f;
  }
  for (uint32_t y = 0; y < height / 2; ++y)
    for (uint32_t x = 0; x < width / 2; ++x) {
      const size_t a = size_t(2 * y) * width + 2 * x, b = a + width;
      pic.planes[1].samples[size_t(y) * (width / 2) + x] = clamp8((cb[a] + cb[a + 1] + cb[b] + cb[b + 1]) / 4);
      pic.planes[2].samples[size_t(y) * (width / 2) + x] = clamp8((cr[a] + cr[a + 1] + cr[b] + cr[b + 1]) / 4);
    }
  return pic;
}

}  // namespace

/// Fills every empty pixel of a patch rectangle with its nearest filled pixel (multi-source BFS),
/// so the decoder's block-precision occupancy finds plausible depths there.
void fillPatch(EncPatch& p) {
  const size_t count = size_t(p.width) * p.height;
  std::vector<uint32_t> queue;
  queue.reserve(count);
  for (size_t i = 0; i < count; ++i)
    if (p.nearDepth[i] >= 0) queue.push_back(uint32_t(i));
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    const uint32_t cur = queue[qi];
    const uint32_t x = cur % p.width, y = cur / p.width;
    const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
    for (int k = 0; k < 4; ++k) {
      const int64_t nx = int64_t(x) + dx[k], ny = int64_t(y) + dy[k];
      if (nx < 0 || ny < 0 || nx >= int64_t(p.width) || ny >= int64_t(p.height)) continue;
      const size_t ni = size_t(ny) * p.width + size_t(nx);
      if (p.nearDepth[ni] >= 0) continue;
      p.nearDepth[ni] = p.nearDepth[cur];
      p.farDepth[ni] = p.farDepth[cur];
      queue.push_back(uint32_t(ni));
    }
  }
}

GeometryImages renderGeometry(const std::vector<EncPatch>& patches, uint32_t width, uint32_t height, const EncoderConfig& cfg) {
  const uint32_t prec = cfg.occupancyPrecision;
  GeometryImages out;
  out.occupancy = makePicture(width / prec, height / prec);
  std::vector<uint8_t> inPatch(size_t(width) * height, 0);
  std::vector<float> depth[2];
  for (unsigned m = 0; m < cfg.mapCount; ++m) depth[m].assign(size_t(width) * height, 0);
  for (const EncPatch& p : patches) {
    for (uint32_t v = 0; v < p.height; ++v)
      for (uint32_t u = 0; u < p.width; ++u) {
        uint32_t x, y;
        patchToCanvas(p.placement, kBlock, u, v, x, y);
        const size_t src = size_t(v) * p.width + u, dst = size_t(y) * width + x;
        inPatch[dst] = 1;
        depth[0][dst] = p.nearDepth[src];
        if (cfg.mapCount > 1) depth[1][dst] = p.farDepth[src];
        // Occupancy at its precision: a block is occupied when any of its pixels held a point
        // (before filling).
        if (p.pixelOccupied(u, v))
          out.occupancy.planes[0].samples[size_t(y / prec) * (width / prec) + x / prec] = occupiedSample(cfg);
      }
  }
  // The kRepeatBlock² blocks of the kGeometryRepeatRegion² regions holding no occupied occupancy
  // block: the decoder reads no depth there.
  const uint32_t blocksWide = (width + kRepeatBlock - 1) / kRepeatBlock, blocksHigh = (height + kRepeatBlock - 1) / kRepeatBlock;
  out.emptyBlocks.assign(size_t(blocksWide) * blocksHigh, 1);
  const Plane& occupancy = out.occupancy.planes[0];
  for (uint32_t y = 0; y < occupancy.height; ++y)
    for (uint32_t x = 0; x < occupancy.width; ++x)
      if (occupancy.samples[size_t(y) * occupancy.width + x]) {
        const uint32_t g = kGeometryRepeatRegion / kRepeatBlock;
        const uint32_t by = y * prec / kGeometryRepeatRegion * g, bx = x * prec / kGeometryRepeatRegion * g;
        for (uint32_t yy = by; yy < std::min(by + g, blocksHigh); ++yy)
          for (uint32_t xx = bx; xx < std::min(bx + g, blocksWide); ++xx) out.emptyBlocks[size_t(yy) * blocksWide + xx] = 0;
      }
  std::vector<float> weight(size_t(width) * height);
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = inPatch[i] ? 1.f : 0.f;
  for (unsigned m = 0; m < cfg.mapCount; ++m) {
    pushPull(depth[m], weight, width, height, 1);
    Picture g = makePicture(width, height);
    for (size_t i = 0; i < depth[m].size(); ++i) g.planes[0].samples[i] = clamp8(depth[m][i]);
    out.geometry.push_back(std::move(g));
  }
  return out;
}

/// The attribute pictures of one frame: each decoded point's colour at the pixel and map the
/// decoder reads it from. A map-1 pixel whose point the decoder drops as a duplicate repeats map 0
/// (it is never read; equal content predicts well); every other pixel is push-pull padding, which
/// with block-aligned occupancy fills an empty part of a block with the mean of its occupied part.
AttributeImages renderAttributes(const PointCloudFrame& decoded, const std::vector<float>& colours, uint32_t width,
                                 uint32_t height, unsigned mapCount) {
  const size_t pixels = size_t(width) * height;
  std::vector<float> rgb[2], weight[2];
  for (unsigned m = 0; m < mapCount; ++m) {
    rgb[m].assign(pixels * 3, 0.f);
    weight[m].assign(pixels, 0.f);
  }
  for (size_t i = 0; i < decoded.size(); ++i) {
    const unsigned m = decoded.map[i];
    const size_t px = decoded.pixel[i];
    for (int c = 0; c < 3; ++c) rgb[m][px * 3 + c] = colours[i * 3 + c];
    weight[m][px] = 1.f;
  }
  if (mapCount > 1)
    for (size_t px = 0; px < pixels; ++px)
      if (weight[1][px] == 0 && weight[0][px] > 0) {
        for (int c = 0; c < 3; ++c) rgb[1][px * 3 + c] = rgb[0][px * 3 + c];
        weight[1][px] = 1.f;
      }
  AttributeImages out;
  const uint32_t blocksWide = (width + kRepeatBlock - 1) / kRepeatBlock, blocksHigh = (height + kRepeatBlock - 1) / kRepeatBlock;
  for (unsigned m = 0; m < mapCount; ++m) {
    std::vector<uint8_t> empty(size_t(blocksWide) * blocksHigh, 1);
    for (size_t px = 0; px < pixels; ++px)
      if (weight[m][px] > 0) empty[(px / width / kRepeatBlock) * blocksWide + (px % width) / kRepeatBlock] = 0;
    out.emptyBlocks.push_back(std::move(empty));
    pushPull(rgb[m], weight[m], width, height, 3);
    out.pictures.push_back(rgbToYuv420(rgb[m], width, height));
  }
  return out;
}

void extendIntoEmptyBlocks(Picture& picture, const std::vector<uint8_t>& emptyBlocks) {
  const uint32_t blocksWide = (picture.width + kRepeatBlock - 1) / kRepeatBlock;
  for (int c = 0; c < 3; ++c) {
    const uint32_t shift = c && !picture.chroma444 ? 1 : 0, side = kRepeatBlock >> shift;
    Plane& plane = picture.planes[c];
    uint16_t* samples = plane.samples.data();
    // Row by row, so a block's row above (or column to its left) is final before it is copied.
    for (size_t b = 0; b < emptyBlocks.size(); ++b) {
      if (!emptyBlocks[b]) continue;
      const uint32_t x0 = uint32_t(b % blocksWide) * side, y0 = uint32_t(b / blocksWide) * side;
      const uint32_t x1 = std::min(x0 + side, plane.width), y1 = std::min(y0 + side, plane.height);
      if (y0 > 0) {
        const uint16_t* above = samples + size_t(y0 - 1) * plane.width;
        for (uint32_t y = y0; y < y1; ++y) std::copy(above + x0, above + x1, samples + size_t(y) * plane.width + x0);
      } else if (x0 > 0) {
        for (uint32_t y = y0; y < y1; ++y) {
          uint16_t* row = samples + size_t(y) * plane.width;
          std::fill(row + x0, row + x1, row[x0 - 1]);
        }
      }
    }
  }
}

void repeatEmptyBlocks(std::vector<Picture>& pictures, const std::vector<std::vector<uint8_t>>& emptyBlocks, size_t intraPeriod) {
  for (size_t i = 1; i < pictures.size(); ++i) {
    if (i % intraPeriod == 0) continue;
    Picture& picture = pictures[i];
    const Picture& previous = pictures[i - 1];
    const uint32_t blocksWide = (picture.width + kRepeatBlock - 1) / kRepeatBlock;
    for (size_t b = 0; b < emptyBlocks[i].size(); ++b) {
      if (!emptyBlocks[i][b]) continue;
      const uint32_t bx = uint32_t(b % blocksWide) * kRepeatBlock, by = uint32_t(b / blocksWide) * kRepeatBlock;
      for (int c = 0; c < 3; ++c) {
        const uint32_t shift = c && !picture.chroma444 ? 1 : 0;
        Plane& plane = picture.planes[c];
        const Plane& from = previous.planes[c];
        const uint32_t x0 = bx >> shift, x1 = std::min((bx + kRepeatBlock) >> shift, plane.width);
        for (uint32_t y = by >> shift; y < std::min((by + kRepeatBlock) >> shift, plane.height); ++y)
          std::copy(from.samples.begin() + size_t(y) * plane.width + x0, from.samples.begin() + size_t(y) * plane.width + x1,
                    plane.samples.begin() + size_t(y) * plane.width + x0);
      }
    }
  }
}

}  // namespace vpcc::encoding
