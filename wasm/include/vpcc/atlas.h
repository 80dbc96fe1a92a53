// Atlas decoding (ISO/IEC 23090-5 §9.2): turns the coded patch data units of each atlas tile
// layer into the patch parameters reconstruction needs, resolving inter/merge/skip prediction
// from reference atlas frames, atlas frame order counts and tile positions.
#pragma once

#include <cstdint>
#include <vector>

#include "vpcc/parser.h"

namespace vpcc {

/// Orientations of a patch in the atlas (index as coded with eight orientations; with two,
/// 0 = Default and 1 = Swap).
enum Orientation : uint8_t { kDefault = 0, kSwap, kRot180, kMirror, kMRot180, kRot270, kMRot90, kRot90 };

/// A projected patch with its derived parameters.
struct Patch {
  uint32_t u0 = 0, v0 = 0;            // top-left in the tile, in packing blocks
  uint32_t sizeU0 = 0, sizeV0 = 0;    // size in packing blocks (before orientation)
  uint32_t sizeXPixels = 0, sizeYPixels = 0;  // exact size when the patch size quantizer is used
  int64_t u1 = 0, v1 = 0, d1 = 0;     // 3D offsets (tangent, bitangent, normal)
  int64_t sizeD = 0;                  // normal-axis range
  uint32_t projectionId = 0;
  uint8_t normalAxis = 0, tangentAxis = 0, bitangentAxis = 0;
  uint8_t projectionMode = 0;         // 0: near plane (depth added), 1: far plane (depth subtracted)
  uint8_t axisOfAdditionalPlane = 0;  // 0: axis-aligned; 1–3: 45° plane about Y, X, Z
  uint8_t orientation = kDefault;
  uint32_t lodX = 1, lodY = 1;
  PlrData plr;
};

struct RawPatch {
  bool inAuxiliaryVideo = false;
  uint32_t u0 = 0, v0 = 0, sizeU0 = 0, sizeV0 = 0;  // in packing blocks
  int64_t u1 = 0, v1 = 0, d1 = 0;
  uint32_t points = 0;
};

struct EomPatch {
  bool inAuxiliaryVideo = false;
  uint32_t u0 = 0, v0 = 0, sizeU = 0, sizeV = 0;
  std::vector<uint32_t> memberPatches, pointsPerPatch;
  uint32_t points = 0;
};

/// One atlas tile of one atlas frame, ready for reconstruction.
struct DecodedTile {
  uint32_t tileId = 0;
  uint32_t x = 0, y = 0, width = 0, height = 0;  // position in the atlas, in pixels
  const AtlasTileLayer* layer = nullptr;
  std::vector<Patch> patches;
  std::vector<RawPatch> rawPatches;
  std::vector<EomPatch> eomPatches;
  uint32_t rawPoints = 0, eomPoints = 0;
};

struct DecodedAtlasFrame {
  uint32_t afoc = 0;  // atlas frame order count = frame index in the sequence
  const Asps* asps = nullptr;
  const Afps* afps = nullptr;
  std::vector<DecodedTile> tiles;
  /// SEI in effect for this frame (prefix SEI persist until replaced).
  const Sei* geometrySmoothing = nullptr;
  const Sei* attributeSmoothing = nullptr;
  const Sei* occupancySynthesis = nullptr;
  size_t patchCount() const {
    size_t n = 0;
    for (const auto& t : tiles) n += t.patches.size();
    return n;
  }
};

/// Decodes every atlas frame of a sequence, in frame order. Throws ParseError when references
/// are missing or out of range.
std::vector<DecodedAtlasFrame> decodeAtlas(const CodedSequence& seq);

/// (x, y) in the tile of pixel (u, v) of a patch, per its orientation.
void patchToCanvas(const Patch& p, uint32_t blockSize, uint32_t u, uint32_t v, uint32_t& x, uint32_t& y);

}  // namespace vpcc
