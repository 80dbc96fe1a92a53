#include "vpcc/reconstruct.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>

#include "vpcc/bit_reader.h"
#include "vpcc/color.h"
#include "vpcc/md5.h"
#include "vpcc/postprocess.h"

namespace vpcc {
namespace {

struct Point {
  int32_t pos[3];
  uint16_t x, y;  // pixel in the atlas
  uint8_t map;    // attribute map the colour comes from
  uint8_t boundary;
  uint32_t patch;  // index of the patch in its tile
};

/// Whether an occupied pixel is a boundary pixel for geometry smoothing: within two pixels of
/// the tile border, or with an unoccupied pixel in its 5×5 neighbourhood. `occupied` holds 0 or 1
/// per pixel, so a row of five is all occupied exactly when its five bytes, read as one word,
/// equal 0x0101010101 (one unaligned load per row instead of five compares).
bool isBoundaryPixel(const std::vector<uint8_t>& occupied, uint32_t width, uint32_t height, uint32_t x, uint32_t y) {
  if (x < 2 || y < 2 || x + 2 >= width || y + 2 >= height) return true;
  constexpr uint64_t kFiveOnes = 0x0101010101ull;
  const uint8_t* at = occupied.data() + size_t(y - 2) * width + (x - 2);
  for (int row = 0; row < 5; ++row, at += width) {
    uint32_t low;
    uint8_t high;
    std::memcpy(&low, at, 4);
    high = at[4];
    if ((uint64_t(low) | uint64_t(high) << 32) != kFiveOnes) return true;
  }
  return false;
}

/// Position of a point on a 45° plane back in the axis-aligned frame (Annex H, extended projection).
void unrotate45(uint8_t axis, unsigned bitDepth3d, int32_t p[3]) {
  const double s = double((1u << (bitDepth3d - 1)) - 1);
  double x = p[0], y = p[1], z = p[2];
  if (axis == 1) {
    const double nx = (x - z + s) / 2.0, nz = (x + z - s) / 2.0;
    x = nx;
    z = nz;
  } else if (axis == 2) {
    const double nz = (z - y + s) / 2.0, ny = (z + y - s) / 2.0;
    z = nz;
    y = ny;
  } else if (axis == 3) {
    const double ny = (y - x + s) / 2.0, nx = (y + x - s) / 2.0;
    y = ny;
    x = nx;
  }
  p[0] = int32_t(x);
  p[1] = int32_t(y);
  p[2] = int32_t(z);
}

}  // namespace

DecodedVideo decodeVideo(const CodedSequence& seq, VideoDecoder& decoder) {
  DecodedVideo out;
  const VpsAtlas& atlas = seq.vps.atlases.at(0);
  const VideoCodec codec = codecFor(seq.vps.ptl.codecGroup);
  out.mapsInterleaved = !atlas.multipleMapStreams;
  for (const auto& v : seq.videos) {
    if (v.header.atlasId != atlas.atlasId || v.header.auxiliaryVideo) continue;  // auxiliary video: not yet
    switch (v.header.type) {
      case V3cUnitType::OVD:
        out.occupancy = decoder.decode(v.data, codec, atlas.occupancy.bitDepthMinus1 + 1);
        break;
      case V3cUnitType::GVD:
        if (v.header.mapIndex > 3) throw ParseError("geometry map index > 3");
        out.geometry[v.header.mapIndex] = decoder.decode(v.data, codec, atlas.geometry.bitDepthMinus1 + 1);
        break;
      case V3cUnitType::AVD:
        if (v.header.attributeIndex != 0 || v.header.attributePartition != 0) break;
        if (v.header.mapIndex > 3) throw ParseError("attribute map index > 3");
        if (atlas.attributes.empty()) throw ParseError("attribute video without attribute information");
        out.attribute[v.header.mapIndex] = decoder.decode(v.data, codec, atlas.attributes[0].bitDepthMinus1 + 1);
        break;
      default:
        break;
    }
  }
  return out;
}

PointCloudFrame reconstructFrame(const CodedSequence& seq, const DecodedAtlasFrame& frame, const DecodedVideo& video,
                                 bool recordPixels) {
  const VpsAtlas& vpsAtlas = seq.vps.atlases.at(0);
  const Asps& asps = *frame.asps;
  const uint32_t mapCount = asps.mapCountMinus1 + 1u;
  const uint32_t f = frame.afoc;
  if (asps.plrEnabled || asps.pixelDeinterleaving || asps.eomPatchEnabled)
    throw ParseError("point local reconstruction, pixel deinterleaving and EOM are not supported yet");
  if (f >= video.occupancy.size()) throw ParseError("occupancy picture missing for frame " + std::to_string(f));
  const Picture& occupancyPicture = video.occupancy[f];
  auto geometryPicture = [&](uint32_t map) -> const Picture& {
    const auto& list = video.mapsInterleaved ? video.geometry[0] : video.geometry[map];
    const size_t index = video.mapsInterleaved ? size_t(f) * mapCount + map : f;
    if (index >= list.size()) throw ParseError("geometry picture missing for frame " + std::to_string(f));
    return list[index];
  };
  const Picture* attributePictures[4] = {nullptr, nullptr, nullptr, nullptr};
  const bool hasAttribute = !vpsAtlas.attributes.empty();
  if (hasAttribute) {
    for (uint32_t m = 0; m < mapCount; ++m) {
      const auto& list = video.mapsInterleaved ? video.attribute[0] : video.attribute[m];
      const size_t index = video.mapsInterleaved ? size_t(f) * mapCount + m : f;
      if (index >= list.size()) throw ParseError("attribute picture missing for frame " + std::to_string(f));
      attributePictures[m] = &list[index];
    }
  }
  const uint32_t atlasWidth = vpsAtlas.frameWidth, atlasHeight = vpsAtlas.frameHeight;
  if (occupancyPicture.width == 0 || atlasWidth % occupancyPicture.width != 0)
    throw ParseError("occupancy resolution does not divide the atlas");
  const uint32_t precision = atlasWidth / occupancyPicture.width;
  const uint32_t threshold = vpsAtlas.occupancy.lossyThreshold;
  const bool absoluteD1 = vpsAtlas.mapCountMinus1 == 0 || vpsAtlas.mapAbsoluteCoding.at(1);
  const unsigned bitDepth3d = vpsAtlas.geometry.coordinatesBitDepthMinus1 + 1u;
  const uint32_t blockSize = 1u << asps.log2PatchPackingBlockSize;
  // Pictures of this frame, resolved once (not per pixel).
  const Picture* geometryPictures[4] = {nullptr, nullptr, nullptr, nullptr};
  for (uint32_t m = 0; m < mapCount; ++m) {
    const Picture& g = geometryPicture(m);
    geometryPictures[m] = &g;
    if (g.width != atlasWidth || g.height != atlasHeight) throw ParseError("geometry picture size differs from the atlas");
    if (attributePictures[m] && (attributePictures[m]->width != atlasWidth || attributePictures[m]->height != atlasHeight))
      throw ParseError("attribute picture size differs from the atlas");
  }

  // Geometry (SEI 66) and attribute (SEI 67) smoothing need boundary flags and patch indices.
  GridSmoothingParams geometrySmoothing;
  AttributeSmoothingParams attributeSmoothing;
  const bool wantSmoothingInfo =
      gridSmoothingFor(seq, frame, geometrySmoothing) || attributeSmoothingFor(seq, frame, attributeSmoothing);

  std::vector<Point> points;
  PointCloudFrame out;
  for (const DecodedTile& tile : frame.tiles) {
    // Occupancy at full resolution (nearest up-sampling, lossy threshold). The source column of
    // every tile column is computed once, not divided per pixel.
    const Plane& occupancyPlane = occupancyPicture.planes[0];
    if (tile.width == 0 || tile.height == 0) continue;  // no pixels, so no patches either
    if ((tile.x + tile.width - 1) / precision >= occupancyPlane.width ||
        (tile.y + tile.height - 1) / precision >= occupancyPlane.height)
      throw ParseError("occupancy picture smaller than the atlas tile");
    std::vector<uint32_t> sourceColumn(tile.width);
    for (uint32_t x = 0; x < tile.width; ++x) sourceColumn[x] = (tile.x + x) / precision;
    std::vector<uint8_t> occupied(size_t(tile.width) * tile.height);
    size_t occupiedCount = 0;
    for (uint32_t y = 0; y < tile.height; ++y) {
      const uint16_t* source = occupancyPlane.samples.data() + size_t((tile.y + y) / precision) * occupancyPlane.width;
      uint8_t* row = occupied.data() + size_t(y) * tile.width;
      for (uint32_t x = 0; x < tile.width; ++x) {
        row[x] = source[sourceColumn[x]] > threshold;
        occupiedCount += row[x];
      }
    }
    points.reserve(points.size() + occupiedCount * mapCount);

    // Block-to-patch map: a block belongs to the last patch (in coding order) covering an
    // occupied pixel of it.
    const uint32_t blocksWide = tile.width / blockSize;
    std::vector<uint32_t> blockToPatch(size_t(blocksWide) * (tile.height / blockSize), 0);
    for (size_t pi = 0; pi < tile.patches.size(); ++pi) {
      const Patch& p = tile.patches[pi];
      for (uint32_t vb = 0; vb < p.sizeV0; ++vb)
        for (uint32_t ub = 0; ub < p.sizeU0; ++ub) {
          uint32_t xb, yb;
          patchToCanvas(p, 1, ub, vb, xb, yb);
          bool any = false;
          for (uint32_t dy = 0; dy < blockSize && !any; ++dy)
            for (uint32_t dx = 0; dx < blockSize && !any; ++dx)
              any = occupied[size_t(yb * blockSize + dy) * tile.width + xb * blockSize + dx] != 0;
          if (any) blockToPatch[size_t(yb) * blocksWide + xb] = uint32_t(pi + 1);
        }
    }

    const size_t count = tile.patches.size();
    for (size_t n = 0; n < count; ++n) {
      const size_t pi = asps.patchPrecedenceOrder ? count - 1 - n : n;
      const Patch& p = tile.patches[pi];
      for (uint32_t vb = 0; vb < p.sizeV0; ++vb)
        for (uint32_t ub = 0; ub < p.sizeU0; ++ub) {
          uint32_t xb, yb;
          patchToCanvas(p, 1, ub, vb, xb, yb);
          if (blockToPatch[size_t(yb) * blocksWide + xb] != pi + 1) continue;
          for (uint32_t dv = 0; dv < blockSize; ++dv)
            for (uint32_t du = 0; du < blockSize; ++du) {
              const uint32_t u = ub * blockSize + du, v = vb * blockSize + dv;
              if (asps.patchSizeQuantizerPresent && (u >= p.sizeXPixels || v >= p.sizeYPixels)) continue;
              uint32_t x, y;
              patchToCanvas(p, blockSize, u, v, x, y);
              if (!occupied[size_t(y) * tile.width + x]) continue;
              const uint32_t ax = tile.x + x, ay = tile.y + y;
              const uint8_t boundary =
                  wantSmoothingInfo && isBoundaryPixel(occupied, tile.width, tile.height, x, y) ? 1 : 0;
              const int32_t tangent = int32_t(int64_t(u) * p.lodX + p.u1);
              const int32_t bitangent = int32_t(int64_t(v) * p.lodY + p.v1);
              auto absoluteDepth = [&](int64_t depth) {
                return int32_t(p.projectionMode == 0 ? depth + p.d1 : std::max<int64_t>(p.d1 - depth, 0));
              };
              // Each point is written once, in place: copying a just-written Point (a 16-byte
              // load after 4-byte stores) stalled on store forwarding in this, the hottest loop.
              auto emit = [&](int32_t normal, uint8_t map) {
                Point& pt = points.emplace_back();
                pt.pos[p.tangentAxis] = tangent;
                pt.pos[p.bitangentAxis] = bitangent;
                pt.pos[p.normalAxis] = normal;
                if (p.axisOfAdditionalPlane) unrotate45(p.axisOfAdditionalPlane, bitDepth3d, pt.pos);
                pt.x = uint16_t(ax);
                pt.y = uint16_t(ay);
                pt.map = map;
                pt.boundary = boundary;
                pt.patch = uint32_t(pi);
              };
              const int32_t normal0 = absoluteDepth(geometryPictures[0]->planes[0].at(ax, ay));
              emit(normal0, 0);
              if (mapCount > 1) {
                // Map 1 shares the tangent and bitangent, so it duplicates map 0's point exactly
                // when the depths (before any 45° unrotation) agree.
                const int64_t depth1 = geometryPictures[1]->planes[0].at(ax, ay);
                const int32_t normal1 = absoluteD1 ? absoluteDepth(depth1)
                                                   : normal0 + int32_t(p.projectionMode == 0 ? depth1 : -depth1);
                if (!(asps.removeDuplicatePoints && normal1 == normal0)) emit(normal1, 1);
              }
            }
        }
    }
  }
  out.projectedPoints = uint32_t(points.size());
  out.occupancyPrecision = precision;
  out.bitDepth3d = bitDepth3d;

  out.positions.resize(points.size() * 3);
  out.colors.assign(points.size() * 3, 127);
  for (size_t i = 0; i < points.size(); ++i) {
    const Point& pt = points[i];
    for (int c = 0; c < 3; ++c) {
      if (pt.pos[c] < INT16_MIN || pt.pos[c] > INT16_MAX) throw ParseError("reconstructed position out of range");
      out.positions[i * 3 + c] = int16_t(pt.pos[c]);
    }
  }
  if (wantSmoothingInfo) {
    out.boundary.resize(points.size());
    out.patchIndex.resize(points.size());
    for (size_t i = 0; i < points.size(); ++i) {
      out.boundary[i] = points[i].boundary;
      out.patchIndex[i] = points[i].patch;
    }
  }
  if (recordPixels) {
    out.pixel.resize(points.size());
    out.map.resize(points.size());
    for (size_t i = 0; i < points.size(); ++i) {
      out.pixel[i] = uint32_t(points[i].y) * atlasWidth + points[i].x;
      out.map[i] = points[i].map;
    }
  }
  if (hasAttribute) {
    // Colour of each point from the attribute map of its geometry map, through the reference
    // decoder's 4:2:0 → 4:4:4 → 16-bit Y'CbCr → 8-bit RGB chain (vpcc/color.h).
    std::vector<AttributeSampler> samplers;
    samplers.reserve(mapCount);
    for (uint32_t m = 0; m < mapCount; ++m) samplers.emplace_back(*attributePictures[m]);
    out.colors16.resize(points.size() * 3);
    for (size_t i = 0; i < points.size(); ++i) {
      const Point& pt = points[i];
      samplers[pt.map].sample(pt.x, pt.y, &out.colors16[i * 3]);
    }
    yuv16ToRgb8(out.colors16.data(), out.colors.data(), points.size());
  }
  return out;
}

std::string frameMd5(const PointCloudFrame& frame) {
  const size_t n = frame.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  const int16_t* pos = frame.positions.data();
  std::sort(order.begin(), order.end(), [pos](uint32_t a, uint32_t b) {
    return std::lexicographical_compare(pos + a * 3, pos + a * 3 + 3, pos + b * 3, pos + b * 3 + 3);
  });
  std::vector<int16_t> positions;
  std::vector<uint8_t> colors;
  positions.reserve(n * 3);
  colors.reserve(n * 3);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    uint32_t sum[3] = {0, 0, 0};
    while (j < n && std::equal(pos + order[i] * 3, pos + order[i] * 3 + 3, pos + order[j] * 3)) {
      for (int c = 0; c < 3; ++c) sum[c] += frame.colors[order[j] * 3 + c];
      ++j;
    }
    const uint32_t count = uint32_t(j - i);
    for (int c = 0; c < 3; ++c) {
      positions.push_back(pos[order[i] * 3 + c]);
      colors.push_back(uint8_t(sum[c] / count));
    }
    i = j;
  }
  Md5 md5;
  std::vector<uint8_t> bytes;
  bytes.reserve(positions.size() * 2);
  for (int16_t v : positions) {
    bytes.push_back(uint8_t(uint16_t(v) & 0xff));
    bytes.push_back(uint8_t(uint16_t(v) >> 8));
  }
  md5.update(bytes.data(), bytes.size());
  md5.update(colors.data(), colors.size());
  return md5.hex();
}

}  // namespace vpcc
