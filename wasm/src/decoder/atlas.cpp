#include "vpcc/atlas.h"

#include <algorithm>
#include <map>
#include <string>

#include "vpcc/bit_reader.h"

namespace vpcc {
namespace {

struct ProjectionAxes {
  uint8_t additionalPlane, normal, tangent, bitangent, mode;
};
// Projection id → axes (ISO/IEC 23090-5 Table 11 and its 45° extension).
constexpr ProjectionAxes kProjections[18] = {
    {0, 0, 2, 1, 0}, {0, 1, 2, 0, 0}, {0, 2, 0, 1, 0}, {0, 0, 2, 1, 1}, {0, 1, 2, 0, 1}, {0, 2, 0, 1, 1},
    {1, 0, 2, 1, 0}, {1, 2, 0, 1, 0}, {1, 0, 2, 1, 1}, {1, 2, 0, 1, 1}, {2, 2, 0, 1, 0}, {2, 1, 2, 0, 0},
    {2, 2, 0, 1, 1}, {2, 1, 2, 0, 1}, {3, 1, 2, 0, 0}, {3, 0, 2, 1, 0}, {3, 1, 2, 0, 1}, {3, 0, 2, 1, 1}};

uint32_t blocksFor(uint32_t pixels, uint32_t blockSize) { return (pixels + blockSize - 1) / blockSize; }

/// Atlas frame order count of each tile layer (§8.4.3.1, as HEVC's picture order count).
std::vector<uint32_t> frameOrderCounts(const CodedSequence& seq) {
  std::vector<uint32_t> afoc;
  int64_t prevMsb = 0, prevLsb = 0;
  for (size_t i = 0; i < seq.tileLayers.size(); ++i) {
    const auto& h = seq.tileLayers[i].header;
    const Asps& asps = seq.asps[seq.afps[h.afpsId].aspsId];
    const int64_t maxLsb = int64_t{1} << (asps.log2MaxAfocLsbMinus4 + 4);
    const int64_t lsb = h.afocLsb;
    int64_t msb = 0;
    if (i > 0) {
      if (lsb < prevLsb && prevLsb - lsb >= maxLsb / 2) msb = prevMsb + maxLsb;
      else if (lsb > prevLsb && lsb - prevLsb > maxLsb / 2) msb = prevMsb - maxLsb;
      else msb = prevMsb;
    }
    if (msb + lsb < 0 || msb + lsb > 1'000'000) throw ParseError("atlas frame order count out of range");
    afoc.push_back(static_cast<uint32_t>(msb + lsb));
    prevMsb = msb;
    prevLsb = lsb;
  }
  return afoc;
}

void tileRectangle(const Asps& asps, const Afps& afps, uint32_t tileId, DecodedTile& tile) {
  const auto& t = afps.tiles;
  if (t.singleTile) {
    tile.x = tile.y = 0;
    tile.width = asps.frameWidth;
    tile.height = asps.frameHeight;
    return;
  }
  // Partition boundaries in pixels.
  auto boundaries = [](uint32_t count, uint32_t total, bool uniform, const std::vector<uint32_t>& sizesMinus1) {
    std::vector<uint32_t> pos{0};
    for (uint32_t i = 0; i + 1 < count; ++i) {
      const uint32_t size = ((uniform ? sizesMinus1[0] : sizesMinus1[i]) + 1) * 64;
      pos.push_back(std::min(total, pos.back() + size));
    }
    pos.push_back(total);
    return pos;
  };
  const auto cols = boundaries(t.numPartitionColumnsMinus1 + 1, asps.frameWidth, t.uniformPartitionSpacing,
                               t.partitionColumnWidthMinus1);
  const auto rows = boundaries(t.numPartitionRowsMinus1 + 1, asps.frameHeight, t.uniformPartitionSpacing,
                               t.partitionRowHeightMinus1);
  const auto it = std::find(t.tileIds.begin(), t.tileIds.end(), tileId);
  if (it == t.tileIds.end()) throw ParseError("atlas tile id " + std::to_string(tileId) + " not in the AFPS");
  const size_t index = it - t.tileIds.begin();
  const uint32_t columns = t.numPartitionColumnsMinus1 + 1;
  const uint32_t col = t.topLeftPartitionIdx[index] % columns, row = t.topLeftPartitionIdx[index] / columns;
  const uint32_t lastCol = col + t.bottomRightColumnOffset[index], lastRow = row + t.bottomRightRowOffset[index];
  if (lastCol + 1 >= cols.size() || lastRow + 1 >= rows.size()) throw ParseError("atlas tile outside the atlas");
  tile.x = cols[col];
  tile.y = rows[row];
  tile.width = cols[lastCol + 1] - tile.x;
  tile.height = rows[lastRow + 1] - tile.y;
}

void setProjection(Patch& p, uint32_t projectionId) {
  if (projectionId > 17) throw ParseError("projection id " + std::to_string(projectionId));
  const auto& a = kProjections[projectionId];
  p.projectionId = projectionId;
  p.axisOfAdditionalPlane = a.additionalPlane;
  p.normalAxis = a.normal;
  p.tangentAxis = a.tangent;
  p.bitangentAxis = a.bitangent;
  p.projectionMode = a.mode;
}

}  // namespace

void patchToCanvas(const Patch& p, uint32_t bs, uint32_t u, uint32_t v, uint32_t& x, uint32_t& y) {
  const uint32_t w = p.sizeU0 * bs, h = p.sizeV0 * bs, x0 = p.u0 * bs, y0 = p.v0 * bs;
  switch (p.orientation) {
    case kDefault: x = u; y = v; break;
    case kSwap: x = v; y = u; break;
    case kRot180: x = w - 1 - u; y = h - 1 - v; break;
    case kMirror: x = w - 1 - u; y = v; break;
    case kMRot180: x = u; y = h - 1 - v; break;
    case kRot270: x = v; y = w - 1 - u; break;
    case kMRot90: x = h - 1 - v; y = w - 1 - u; break;
    case kRot90: x = h - 1 - v; y = u; break;
    default: x = u; y = v; break;
  }
  x += x0;
  y += y0;
}

std::vector<DecodedAtlasFrame> decodeAtlas(const CodedSequence& seq) {
  const std::vector<uint32_t> afoc = frameOrderCounts(seq);
  uint32_t frameCount = 0;
  for (uint32_t a : afoc) frameCount = std::max(frameCount, a + 1);
  std::vector<DecodedAtlasFrame> frames(frameCount);
  std::vector<bool> present(frameCount, false);
  for (uint32_t i = 0; i < frameCount; ++i) frames[i].afoc = i;

  // Tile layers are decoded in bitstream order; references point back in that order.
  const Sei* geometrySmoothing = nullptr;
  const Sei* attributeSmoothing = nullptr;
  const Sei* occupancySynthesis = nullptr;
  for (size_t li = 0; li < seq.tileLayers.size(); ++li) {
    const AtlasTileLayer& layer = seq.tileLayers[li];
    const auto& h = layer.header;
    const Afps& afps = seq.afps.at(h.afpsId);
    const Asps& asps = seq.asps.at(afps.aspsId);
    for (const auto& sei : layer.prefixSei) {
      if (sei.payloadType == 66) geometrySmoothing = &sei;
      if (sei.payloadType == 67) attributeSmoothing = &sei;
      if (sei.payloadType == 65) occupancySynthesis = &sei;
    }
    DecodedAtlasFrame& frame = frames[afoc[li]];
    present[afoc[li]] = true;
    frame.asps = &asps;
    frame.afps = &afps;
    frame.geometrySmoothing = geometrySmoothing;
    frame.attributeSmoothing = attributeSmoothing;
    frame.occupancySynthesis = occupancySynthesis;

    DecodedTile tile;
    tile.tileId = h.tileId;
    tile.layer = &layer;
    tileRectangle(asps, afps, h.tileId, tile);

    // Reference atlas frames of this tile (§8.4.6.x): AFOC differences chained through the list.
    std::vector<int64_t> refAfoc;
    if (h.type != TileType::I) {
      int64_t previous = afoc[li];
      for (const auto& e : h.refList) {
        int64_t ref;
        if (e.shortTerm) {
          const int64_t delta = (e.signPositive ? 1 : -1) * int64_t{e.absDeltaAfoc};
          ref = previous - delta;
        } else {
          ref = e.afocLsbLt;  // long-term: LSB only (sequences here are short)
        }
        if (ref >= 0) refAfoc.push_back(ref);
        previous = ref;
      }
    }
    auto referenceTile = [&](uint32_t refIndex) -> const DecodedTile& {
      if (refIndex >= refAfoc.size()) throw ParseError("reference index beyond the reference list");
      const int64_t ref = refAfoc[refIndex];
      if (ref >= int64_t(frameCount) || !present[ref]) throw ParseError("reference atlas frame is missing");
      for (const auto& t : frames[ref].tiles)
        if (t.tileId == h.tileId) return t;
      throw ParseError("reference atlas frame has no tile with this id");
    };

    const uint32_t blockSize = 1u << asps.log2PatchPackingBlockSize;
    const int64_t minLevel = int64_t{1} << h.posMinDQuantizer;
    const uint32_t quantX = 1u << h.patchSizeXQuantizer, quantY = 1u << h.patchSizeYQuantizer;

    if (h.type == TileType::Skip) {
      const DecodedTile& ref = referenceTile(0);
      tile.patches = ref.patches;
      tile.rawPatches = ref.rawPatches;
      tile.eomPatches = ref.eomPatches;
    }
    // INTER and MERGE patches: the reference patch's parameters plus coded deltas.
    auto apply2dDelta = [&](Patch& p, const Patch& r, const PatchDataUnit& d) {
      p.u0 = static_cast<uint32_t>(int64_t{r.u0} + d.deltaPos2dX);
      p.v0 = static_cast<uint32_t>(int64_t{r.v0} + d.deltaPos2dY);
      if (asps.patchSizeQuantizerPresent) {
        p.sizeXPixels = static_cast<uint32_t>(int64_t{r.sizeXPixels} + int64_t{d.deltaSize2dX} * quantX);
        p.sizeYPixels = static_cast<uint32_t>(int64_t{r.sizeYPixels} + int64_t{d.deltaSize2dY} * quantY);
        p.sizeU0 = blocksFor(p.sizeXPixels, blockSize);
        p.sizeV0 = blocksFor(p.sizeYPixels, blockSize);
      } else {
        p.sizeU0 = static_cast<uint32_t>(int64_t{r.sizeU0} + d.deltaSize2dX);
        p.sizeV0 = static_cast<uint32_t>(int64_t{r.sizeV0} + d.deltaSize2dY);
      }
    };
    auto apply3dDelta = [&](Patch& p, const Patch& r, const PatchDataUnit& d) {
      p.u1 = r.u1 + d.deltaOffset3dU;
      p.v1 = r.v1 + d.deltaOffset3dV;
      p.d1 = (d.deltaOffset3dD + r.d1 / minLevel) * minLevel;
      p.sizeD = r.sizeD + (d.deltaRange3dD == 0 ? 0 : int64_t{d.deltaRange3dD} * minLevel - 1);
    };
    int64_t predIndex = 0;
    for (size_t pi = 0; pi < layer.patches.size(); ++pi) {
      const PatchDataUnit& d = layer.patches[pi];
      switch (d.mode) {
        case PatchMode::Intra: {
          Patch p;
          p.u0 = d.pos2dX;
          p.v0 = d.pos2dY;
          p.u1 = static_cast<int64_t>(d.offset3dU);
          p.v1 = static_cast<int64_t>(d.offset3dV);
          p.d1 = static_cast<int64_t>(d.offset3dD) * minLevel;
          p.sizeD = d.range3dD == 0 ? 0 : static_cast<int64_t>(d.range3dD) * minLevel - 1;
          if (asps.patchSizeQuantizerPresent) {
            p.sizeXPixels = (d.size2dXMinus1 + 1) * quantX;
            p.sizeYPixels = (d.size2dYMinus1 + 1) * quantY;
            p.sizeU0 = blocksFor(p.sizeXPixels, blockSize);
            p.sizeV0 = blocksFor(p.sizeYPixels, blockSize);
          } else {
            p.sizeU0 = d.size2dXMinus1 + 1;
            p.sizeV0 = d.size2dYMinus1 + 1;
          }
          if (d.lodEnabled) {
            p.lodX = d.lodScaleXMinus1 + 1;
            p.lodY = d.lodScaleYIdc + (p.lodX > 1 ? 1 : 2);
          }
          p.orientation = static_cast<uint8_t>(d.orientation);
          setProjection(p, d.projectionId);
          p.plr = d.plr;
          tile.patches.push_back(p);
          break;
        }
        case PatchMode::Inter: {
          const int64_t refIdx = d.refPatchIndex + predIndex;
          predIndex += d.refPatchIndex + 1;
          const DecodedTile& ref = referenceTile(d.refIndex);
          if (refIdx < 0 || refIdx >= int64_t(ref.patches.size())) throw ParseError("inter patch refers to a missing patch");
          const Patch& r = ref.patches[refIdx];
          Patch p = r;
          apply2dDelta(p, r, d);
          apply3dDelta(p, r, d);
          p.plr = d.plr;  // its own (default: mode 0 everywhere)
          tile.patches.push_back(p);
          break;
        }
        case PatchMode::Merge: {
          predIndex = static_cast<int64_t>(tile.patches.size());
          const DecodedTile& ref = referenceTile(d.refIndex);
          if (tile.patches.size() >= ref.patches.size()) throw ParseError("merge patch refers to a missing patch");
          const Patch& r = ref.patches[tile.patches.size()];
          Patch p = r;
          if (d.override2d) apply2dDelta(p, r, d);
          else if (d.override3d) apply3dDelta(p, r, d);
          p.plr = d.plr;  // overridden, or mode 0 everywhere (not the reference's)
          tile.patches.push_back(p);
          break;
        }
        case PatchMode::Skip: {
          const DecodedTile& ref = referenceTile(0);
          const size_t index = tile.patches.size();
          if (index >= ref.patches.size()) throw ParseError("skip patch refers to a missing patch");
          predIndex += static_cast<int64_t>(index);
          tile.patches.push_back(ref.patches[index]);
          tile.patches.back().plr = PlrData();  // a skipped patch reconstructs with PLR mode 0
          break;
        }
        case PatchMode::Raw: {
          RawPatch rp;
          rp.inAuxiliaryVideo = d.inAuxiliaryVideo;
          rp.u0 = d.pos2dX;
          rp.v0 = d.pos2dY;
          rp.sizeU0 = d.size2dXMinus1 + 1;
          rp.sizeV0 = d.size2dYMinus1 + 1;
          const int64_t scale = afps.raw3dOffsetBitCountExplicit ? 1 : (int64_t{1} << (asps.geometry2dBitDepthMinus1 + 1));
          rp.u1 = static_cast<int64_t>(d.offset3dU) * scale;
          rp.v1 = static_cast<int64_t>(d.offset3dV) * scale;
          rp.d1 = static_cast<int64_t>(d.offset3dD) * scale;
          rp.points = d.rawPointsMinus1 + 1;
          tile.rawPoints += rp.points;
          tile.rawPatches.push_back(rp);
          break;
        }
        case PatchMode::Eom: {
          EomPatch ep;
          ep.inAuxiliaryVideo = d.inAuxiliaryVideo;
          ep.u0 = d.pos2dX;
          ep.v0 = d.pos2dY;
          ep.sizeU = d.size2dXMinus1 + 1;
          ep.sizeV = d.size2dYMinus1 + 1;
          ep.memberPatches = d.eomAssociatedPatches;
          ep.pointsPerPatch = d.eomPoints;
          for (uint32_t n : d.eomPoints) ep.points += n;
          tile.eomPoints += ep.points;
          tile.eomPatches.push_back(ep);
          break;
        }
      }
    }
    // Patches must lie inside their tile.
    for (const auto& p : tile.patches) {
      const bool swapped = p.orientation == kSwap || p.orientation == kRot90 || p.orientation == kRot270 ||
                           p.orientation == kMRot90;
      const uint64_t w = uint64_t{swapped ? p.sizeV0 : p.sizeU0} * blockSize;
      const uint64_t hgt = uint64_t{swapped ? p.sizeU0 : p.sizeV0} * blockSize;
      if (p.sizeU0 == 0 || p.sizeV0 == 0 || uint64_t{p.u0} * blockSize + w > tile.width ||
          uint64_t{p.v0} * blockSize + hgt > tile.height)
        throw ParseError("patch outside its atlas tile");
    }
    frame.tiles.push_back(std::move(tile));
  }
  for (uint32_t i = 0; i < frameCount; ++i)
    if (!present[i]) throw ParseError("atlas frame " + std::to_string(i) + " missing from the sequence");
  return frames;
}

}  // namespace vpcc
