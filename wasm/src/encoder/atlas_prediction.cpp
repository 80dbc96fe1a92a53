// Atlas prediction: how a frame's patches are coded in its atlas tile. Every patch has an INTRA
// patch data unit (its absolute parameters); against the previous frame a patch matched with a
// reference may instead be INTER (deltas to the reference) when that costs fewer bits, and a run
// of patches that repeat their references SKIP. Bit costs are counted as the writer codes them.
#include <cstddef>
#include <cstdint>
#include <vector>

#include "stages.h"

namespace vpcc::encoding {
namespace {

/// Lengths of the Exp-Golomb codes ue(v) and se(v).
size_t ueBits(uint64_t v) {
  size_t prefix = 0;
  while ((v + 1) >> (prefix + 1)) ++prefix;
  return 2 * prefix + 1;
}
size_t seBits(int64_t v) { return ueBits(v > 0 ? uint64_t(2 * v - 1) : uint64_t(-2 * v)); }

/// Bits of one patch_information_data() as the writer codes it with this encoder's parameter sets
/// (one reference frame; no point local reconstruction, patch size quantizer or 3D range), the
/// patch mode included: I_INTRA is code 0 in I tiles; P_SKIP 0, P_INTER 2 and P_INTRA 3 in P tiles.
size_t patchBits(const PatchDataUnit& d, TileType tile, const EncoderConfig& cfg) {
  switch (d.mode) {
    case PatchMode::Skip:
      return ueBits(0);
    case PatchMode::Inter:
      return ueBits(2) + seBits(d.refPatchIndex) + seBits(d.deltaPos2dX) + seBits(d.deltaPos2dY) + seBits(d.deltaSize2dX) +
             seBits(d.deltaSize2dY) + seBits(d.deltaOffset3dU) + seBits(d.deltaOffset3dV) + seBits(d.deltaOffset3dD);
    default: {  // INTRA: the encoder writes no MERGE, RAW or EOM patches
      size_t bits = ueBits(tile == TileType::I ? 0 : 3) + ueBits(d.pos2dX) + ueBits(d.pos2dY) + ueBits(d.size2dXMinus1) +
                    ueBits(d.size2dYMinus1) + 3 * size_t(cfg.geometryBits) + ceilLog2(6) + 1;
      if (cfg.lod > 1) bits += 1 + ueBits(d.lodScaleXMinus1) + ueBits(d.lodScaleYIdc);
      return bits;
    }
  }
}

/// An INTER patch takes its projection, orientation and level of detail from its reference, so
/// only a reference that has the same ones can predict a patch.
bool canPredict(const PatchDataUnit& patch, const PatchDataUnit& reference) {
  return patch.projectionId == reference.projectionId && patch.orientation == reference.orientation &&
         patch.lodEnabled == reference.lodEnabled && patch.lodScaleXMinus1 == reference.lodScaleXMinus1 &&
         patch.lodScaleYIdc == reference.lodScaleYIdc;
}

/// `patch` as deltas against its reference patch (both as INTRA data units, i.e. absolute), which
/// is `refPatchIndex` away from the index the tile's INTER patches count from.
PatchDataUnit interPatch(const PatchDataUnit& patch, const PatchDataUnit& reference, int64_t refPatchIndex) {
  PatchDataUnit d;
  d.mode = PatchMode::Inter;
  d.refPatchIndex = int32_t(refPatchIndex);
  d.deltaPos2dX = int32_t(patch.pos2dX) - int32_t(reference.pos2dX);
  d.deltaPos2dY = int32_t(patch.pos2dY) - int32_t(reference.pos2dY);
  d.deltaSize2dX = int32_t(patch.size2dXMinus1) - int32_t(reference.size2dXMinus1);
  d.deltaSize2dY = int32_t(patch.size2dYMinus1) - int32_t(reference.size2dYMinus1);
  d.deltaOffset3dU = int32_t(int64_t(patch.offset3dU) - int64_t(reference.offset3dU));
  d.deltaOffset3dV = int32_t(int64_t(patch.offset3dV) - int64_t(reference.offset3dV));
  d.deltaOffset3dD = int32_t(int64_t(patch.offset3dD) - int64_t(reference.offset3dD));  // no D quantizer
  return d;
}

bool repeatsReference(const PatchDataUnit& d) {
  return d.mode == PatchMode::Inter && d.deltaPos2dX == 0 && d.deltaPos2dY == 0 && d.deltaSize2dX == 0 &&
         d.deltaSize2dY == 0 && d.deltaOffset3dU == 0 && d.deltaOffset3dV == 0 && d.deltaOffset3dD == 0;
}

/// Turns INTER patches that repeat their reference into SKIP patches, where every reading of SKIP
/// decodes them alike. A SKIP patch copies the previous frame's patch of its own index; how it
/// moves the index later INTER patches count from is read differently (TMC2's decoder adds the
/// skip patch's own index to it; the INTER rule would set it past the copied patch). So only a run
/// of patches that each repeat the reference of their own index becomes SKIP, a run that starts
/// where the count already stands and after which no INTER patch follows. A frame that repeats
/// its predecessor is all SKIP: one bit per patch.
void useSkipPatches(std::vector<PatchDataUnit>& tile, const std::vector<int>& reference) {
  size_t end = tile.size();
  while (end > 0 && tile[end - 1].mode != PatchMode::Inter) --end;
  size_t start = end;
  while (start > 0 && reference[start - 1] == int(start - 1) && repeatsReference(tile[start - 1])) --start;
  int64_t counted = 0;
  for (size_t i = 0; i < start; ++i)
    if (tile[i].mode == PatchMode::Inter) counted = reference[i] + 1;
  if (counted != int64_t(start)) ++start;  // that patch stays INTER, which brings the count to start + 1
  for (size_t i = start; i < end; ++i) {
    tile[i] = PatchDataUnit{};
    tile[i].mode = PatchMode::Skip;
  }
}

}  // namespace

/// A patch as an INTRA patch data unit: its absolute parameters, which every other coding of it
/// must reproduce.
PatchDataUnit intraPatch(const EncPatch& p, const EncoderConfig& cfg) {
  const Plane6& P = kPlanes[p.plane];
  const int32_t maxCoord = int32_t((1u << cfg.geometryBits) - 1);
  PatchDataUnit d;
  d.mode = PatchMode::Intra;
  d.pos2dX = p.placement.u0;
  d.pos2dY = p.placement.v0;
  d.size2dXMinus1 = p.placement.sizeU0 - 1;
  d.size2dYMinus1 = p.placement.sizeV0 - 1;
  d.offset3dU = uint64_t(p.tangentMin) * cfg.lod;
  d.offset3dV = uint64_t(p.bitangentMin) * cfg.lod;
  d.offset3dD = uint64_t(P.mode ? maxCoord - p.minDepth : p.minDepth);
  d.projectionId = p.plane;
  d.orientation = p.placement.orientation;
  if (cfg.lod > 1) {
    d.lodEnabled = true;
    d.lodScaleXMinus1 = cfg.lod - 1;
    d.lodScaleYIdc = cfg.lod - 1;
  }
  return d;
}

size_t tileBits(const std::vector<PatchDataUnit>& patches, TileType type, const EncoderConfig& cfg) {
  size_t bits = ueBits(uint32_t(type));
  for (const PatchDataUnit& d : patches) bits += patchBits(d, type, cfg);
  return bits;
}

/// A frame's patches coded in a P tile against the previous frame's (`previous`, absolute): a patch
/// with a reference it can be predicted from is INTER when that costs fewer bits than INTRA,
/// SKIP where useSkipPatches allows, INTRA otherwise. Either way the decoder derives `intra`.
std::vector<PatchDataUnit> predictTile(const std::vector<PatchDataUnit>& intra, const std::vector<int>& reference,
                                       const std::vector<PatchDataUnit>& previous, const EncoderConfig& cfg) {
  std::vector<PatchDataUnit> tile = intra;
  int64_t counted = 0;  // the index INTER patches count from: past the last one's reference
  for (size_t i = 0; i < tile.size(); ++i) {
    if (reference[i] < 0 || !canPredict(intra[i], previous.at(size_t(reference[i])))) continue;
    const PatchDataUnit inter = interPatch(intra[i], previous[size_t(reference[i])], reference[i] - counted);
    if (patchBits(inter, TileType::P, cfg) >= patchBits(intra[i], TileType::P, cfg)) continue;
    tile[i] = inter;
    counted = reference[i] + 1;
  }
  useSkipPatches(tile, reference);
  return tile;
}

}  // namespace vpcc::encoding
