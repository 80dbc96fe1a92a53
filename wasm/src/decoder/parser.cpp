// V3C sample stream parser. Syntax per ISO/IEC 23090-5 §8.3 (V3C unit, VPS, atlas NAL units,
// ASPS/AFPS/AAPS, atlas tile layer, patch data units), Annex C/D (sample streams), Annex F/H (SEI).
#include "vpcc/parser.h"

#include <algorithm>
#include <optional>
#include <string>

#include "vpcc/bit_reader.h"
#include "vpcc/limits.h"

namespace vpcc {
namespace {

template <typename T>
const T& byId(const std::vector<T>& list, uint32_t id, const char* what) {
  if (id >= list.size()) throw ParseError(std::string(what) + " " + std::to_string(id) + " referenced before it was sent");
  return list[id];
}

// ---------------------------------------------------------------- VPS

void parsePtl(BitReader& r, ProfileTierLevel& ptl) {
  ptl.tier = r.flag();
  ptl.codecGroup = static_cast<uint8_t>(r.u(7));
  ptl.toolset = static_cast<uint8_t>(r.u(8));
  ptl.reconstruction = static_cast<uint8_t>(r.u(8));
  r.u(16);  // reserved
  r.u(16);  // reserved
  ptl.level = static_cast<uint8_t>(r.u(8));
  const unsigned numSubProfiles = static_cast<unsigned>(r.u(6));
  ptl.extendedSubProfile = r.flag();
  for (unsigned i = 0; i < numSubProfiles; ++i) ptl.subProfiles.push_back(r.u(ptl.extendedSubProfile ? 64 : 32));
  ptl.toolConstraintsPresent = r.flag();
  if (ptl.toolConstraintsPresent) {
    ptl.oneFrameOnly = r.flag();
    ptl.eomConstraint = r.flag();
    ptl.maxMapCountMinus1 = static_cast<uint8_t>(r.u(4));
    ptl.maxAtlasCountMinus1 = static_cast<uint8_t>(r.u(4));
    ptl.multipleMapStreamsConstraint = r.flag();
    ptl.plrConstraint = r.flag();
    ptl.attributeMaxDimensionMinus1 = static_cast<uint8_t>(r.u(6));
    ptl.attributeMaxDimensionPartitionsMinus1 = static_cast<uint8_t>(r.u(6));
    ptl.noEightOrientationsConstraint = r.flag();
    ptl.no45DegreeProjectionPatchConstraint = r.flag();
    r.u(6);
    const unsigned reserved = static_cast<unsigned>(r.u(8));
    for (unsigned i = 0; i < reserved; ++i) ptl.reservedConstraintBytes.push_back(static_cast<uint8_t>(r.u(8)));
  }
}

V3cParameterSet parseVps(BitReader& r, uint8_t manifestLevel) {
  V3cParameterSet vps;
  parsePtl(r, vps.ptl);
  vps.id = static_cast<uint8_t>(r.u(4));
  r.u(8);  // reserved
  const unsigned atlasCount = static_cast<unsigned>(r.u(6)) + 1;
  for (unsigned j = 0; j < atlasCount; ++j) {
    VpsAtlas a;
    a.atlasId = static_cast<uint8_t>(r.u(6));
    a.frameWidth = r.ue();
    a.frameHeight = r.ue();
    if (a.frameWidth == 0 || a.frameHeight == 0 || a.frameWidth > 16384 || a.frameHeight > 16384)
      throw ParseError("VPS frame size out of range");
    checkAtlasSize(vps.ptl, a.frameWidth, a.frameHeight, "VPS atlas", manifestLevel);
    a.mapCountMinus1 = static_cast<uint8_t>(r.u(4));
    if (a.mapCountMinus1 > 0) a.multipleMapStreams = r.flag();
    a.mapAbsoluteCoding.assign(a.mapCountMinus1 + 1u, true);
    a.mapPredictorIndexDiff.assign(a.mapCountMinus1 + 1u, 0);
    for (unsigned i = 1; i <= a.mapCountMinus1; ++i) {
      a.mapAbsoluteCoding[i] = a.multipleMapStreams ? r.flag() : true;
      if (!a.mapAbsoluteCoding[i]) a.mapPredictorIndexDiff[i] = r.ue();
    }
    a.auxiliaryVideo = r.flag();
    a.occupancyVideo = r.flag();
    a.geometryVideo = r.flag();
    a.attributeVideo = r.flag();
    if (a.occupancyVideo) {
      a.occupancy.codecId = static_cast<uint8_t>(r.u(8));
      a.occupancy.lossyThreshold = static_cast<uint8_t>(r.u(8));
      a.occupancy.bitDepthMinus1 = static_cast<uint8_t>(r.u(5));
      a.occupancy.msbAlign = r.flag();
    }
    if (a.geometryVideo) {
      a.geometry.codecId = static_cast<uint8_t>(r.u(8));
      a.geometry.bitDepthMinus1 = static_cast<uint8_t>(r.u(5));
      a.geometry.msbAlign = r.flag();
      a.geometry.coordinatesBitDepthMinus1 = static_cast<uint8_t>(r.u(5));
      if (a.auxiliaryVideo) a.geometry.auxiliaryCodecId = static_cast<uint8_t>(r.u(8));
    }
    if (a.attributeVideo) {
      const unsigned count = static_cast<unsigned>(r.u(7));
      for (unsigned i = 0; i < count; ++i) {
        AttributeInformation ai;
        ai.typeId = static_cast<uint8_t>(r.u(4));
        ai.codecId = static_cast<uint8_t>(r.u(8));
        if (a.auxiliaryVideo) ai.auxiliaryCodecId = static_cast<uint8_t>(r.u(8));
        ai.mapAbsoluteCodingPersistence = a.mapCountMinus1 > 0 ? r.flag() : true;
        ai.dimensionMinus1 = static_cast<uint8_t>(r.u(6));
        if (ai.dimensionMinus1 > 0) {
          ai.dimensionPartitionsMinus1 = static_cast<uint8_t>(r.u(6));
          int remaining = ai.dimensionMinus1;
          const int k = ai.dimensionPartitionsMinus1;
          for (int p = 0; p < k; ++p) {
            const uint32_t channels = (k - p == remaining) ? 0 : r.ue();
            // Checked before subtracting: ue(v) reaches 2^32 − 2, beyond int (remaining only
            // falls, so a partition wider than what is left is always an error).
            if (int64_t{channels} + 1 > remaining) throw ParseError("attribute partitions exceed the attribute dimension");
            ai.partitionChannelsMinus1.push_back(channels);
            remaining -= static_cast<int>(channels) + 1;
          }
          ai.partitionChannelsMinus1.push_back(static_cast<uint32_t>(remaining));
        } else {
          ai.partitionChannelsMinus1.push_back(0);
        }
        ai.bitDepthMinus1 = static_cast<uint8_t>(r.u(5));
        ai.msbAlign = r.flag();
        a.attributes.push_back(ai);
      }
    }
    vps.atlases.push_back(std::move(a));
  }
  vps.extensionPresent = r.flag();
  if (vps.extensionPresent) vps.extension8Bits = static_cast<uint8_t>(r.u(8));
  if (vps.extension8Bits) {
    const uint32_t length = r.ue() + 1;
    if (length > r.bitsLeft() / 8) throw ParseError("VPS extension longer than the unit");
    for (uint32_t i = 0; i < length; ++i) vps.extensionData.push_back(static_cast<uint8_t>(r.u(8)));
  }
  r.byteAlignment();
  return vps;
}

// ---------------------------------------------------------------- atlas parameter sets

RefListStruct parseRefList(BitReader& r, const Asps& asps) {
  RefListStruct list;
  const uint32_t entries = r.ue();
  if (entries > 64) throw ParseError("ref_list_struct with more than 64 entries");
  for (uint32_t i = 0; i < entries; ++i) {
    RefListEntry e;
    e.shortTerm = asps.longTermRefAtlasFrames ? r.flag() : true;
    if (e.shortTerm) {
      e.absDeltaAfoc = r.ue();
      e.signPositive = e.absDeltaAfoc > 0 ? r.flag() : true;
    } else {
      e.afocLsbLt = r.u32(asps.log2MaxAfocLsbMinus4 + 4);
    }
    list.push_back(e);
  }
  return list;
}

Asps parseAsps(BitReader& r, const ProfileTierLevel& ptl, uint8_t manifestLevel) {
  Asps a;
  a.id = r.ue();
  if (a.id > 15) throw ParseError("ASPS id > 15");
  a.frameWidth = r.ue();
  a.frameHeight = r.ue();
  if (a.frameWidth == 0 || a.frameHeight == 0 || a.frameWidth > 16384 || a.frameHeight > 16384)
    throw ParseError("ASPS frame size out of range");
  checkAtlasSize(ptl, a.frameWidth, a.frameHeight, "ASPS atlas", manifestLevel);
  a.geometry3dBitDepthMinus1 = static_cast<uint8_t>(r.u(5));
  a.geometry2dBitDepthMinus1 = static_cast<uint8_t>(r.u(5));
  a.log2MaxAfocLsbMinus4 = r.ue();
  if (a.log2MaxAfocLsbMinus4 > 12) throw ParseError("log2_max_atlas_frame_order_cnt_lsb_minus4 > 12");
  a.maxDecAtlasFrameBufferingMinus1 = r.ue();
  a.longTermRefAtlasFrames = r.flag();
  const uint32_t lists = r.ue();
  if (lists > 64) throw ParseError("more than 64 reference lists in ASPS");
  for (uint32_t i = 0; i < lists; ++i) a.refLists.push_back(parseRefList(r, a));
  a.useEightOrientations = r.flag();
  a.extendedProjection = r.flag();
  if (a.extendedProjection) {
    a.maxNumberProjectionsMinus1 = r.ue();
    if (a.maxNumberProjectionsMinus1 > 17) throw ParseError("more than 18 projections");
  }
  a.normalAxisLimitsQuantization = r.flag();
  a.normalAxisMaxDeltaValue = r.flag();
  a.patchPrecedenceOrder = r.flag();
  a.log2PatchPackingBlockSize = static_cast<uint8_t>(r.u(3));
  a.patchSizeQuantizerPresent = r.flag();
  a.mapCountMinus1 = static_cast<uint8_t>(r.u(4));
  a.pixelDeinterleaving = r.flag();
  if (a.pixelDeinterleaving)
    for (unsigned i = 0; i <= a.mapCountMinus1; ++i) a.pixelDeinterleavingMap.push_back(r.flag());
  a.rawPatchEnabled = r.flag();
  a.eomPatchEnabled = r.flag();
  if (a.eomPatchEnabled && a.mapCountMinus1 == 0) a.eomFixBitCountMinus1 = static_cast<uint8_t>(r.u(4));
  if (a.rawPatchEnabled || a.eomPatchEnabled) a.auxiliaryVideoEnabled = r.flag();
  a.plrEnabled = r.flag();
  if (a.plrEnabled) {
    for (unsigned j = 0; j <= a.mapCountMinus1; ++j) {
      PlrInformation p;
      p.enabled = r.flag();
      if (p.enabled) {
        const unsigned modes = static_cast<unsigned>(r.u(4)) + 1;
        for (unsigned i = 0; i < modes; ++i) {
          PlrMode m;
          m.interpolate = r.flag();
          m.filling = r.flag();
          m.minimumDepth = static_cast<uint8_t>(r.u(2));
          m.neighbourMinus1 = static_cast<uint8_t>(r.u(2));
          p.modes.push_back(m);
        }
        p.blockThresholdPerPatchMinus1 = static_cast<uint8_t>(r.u(6));
      }
      a.plr.push_back(p);
    }
  }
  a.vuiPresent = r.flag();
  if (a.vuiPresent) throw ParseError("ASPS VUI parameters are not supported");
  a.extension = r.flag();
  if (a.extension) {
    a.vpccExtension = r.flag();
    a.extension7Bits = static_cast<uint8_t>(r.u(7));
  }
  if (a.vpccExtension) {
    a.removeDuplicatePoints = r.flag();
    if (a.pixelDeinterleaving || a.plrEnabled) a.surfaceThicknessMinus1 = r.ue();
  }
  // Extension data and trailing bits are ignored: nothing after this point changes decoding.
  return a;
}

AtlasTileInformation parseTileInformation(BitReader& r, const Asps& asps) {
  AtlasTileInformation t;
  t.singleTile = r.flag();
  if (!t.singleTile) {
    t.uniformPartitionSpacing = r.flag();
    if (t.uniformPartitionSpacing) {
      t.partitionColumnWidthMinus1 = {r.ue()};
      t.partitionRowHeightMinus1 = {r.ue()};
      // A partition starts inside the atlas (at most ceil(size / 64) units of 64 samples), so
      // there is at least one column and one row and at most 256 × 256 partitions (atlases are
      // ≤ 16384 wide and high). Checked before the sizes are computed: a wider value would
      // overflow 32 bits and wrap the partition count to 2^32, one tile entry each.
      if (t.partitionColumnWidthMinus1[0] >= (asps.frameWidth + 63) / 64)
        throw ParseError("atlas partition column wider than the atlas");
      if (t.partitionRowHeightMinus1[0] >= (asps.frameHeight + 63) / 64)
        throw ParseError("atlas partition row taller than the atlas");
      const uint32_t colWidth = (t.partitionColumnWidthMinus1[0] + 1) * 64;
      const uint32_t rowHeight = (t.partitionRowHeightMinus1[0] + 1) * 64;
      t.numPartitionColumnsMinus1 = (asps.frameWidth + colWidth - 1) / colWidth - 1;
      t.numPartitionRowsMinus1 = (asps.frameHeight + rowHeight - 1) / rowHeight - 1;
    } else {
      t.numPartitionColumnsMinus1 = r.ue();
      t.numPartitionRowsMinus1 = r.ue();
      if (t.numPartitionColumnsMinus1 > 255 || t.numPartitionRowsMinus1 > 255) throw ParseError("too many atlas partitions");
      for (uint32_t i = 0; i < t.numPartitionColumnsMinus1; ++i) t.partitionColumnWidthMinus1.push_back(r.ue());
      for (uint32_t i = 0; i < t.numPartitionRowsMinus1; ++i) t.partitionRowHeightMinus1.push_back(r.ue());
    }
    t.singlePartitionPerTile = r.flag();
    const uint32_t partitions = (t.numPartitionColumnsMinus1 + 1) * (t.numPartitionRowsMinus1 + 1);
    if (!t.singlePartitionPerTile) {
      t.numTilesMinus1 = r.ue();
      if (t.numTilesMinus1 >= partitions) throw ParseError("more tiles than partitions");
      for (uint32_t i = 0; i <= t.numTilesMinus1; ++i) {
        t.topLeftPartitionIdx.push_back(r.u32(ceilLog2(partitions)));
        t.bottomRightColumnOffset.push_back(r.ue());
        t.bottomRightRowOffset.push_back(r.ue());
      }
    } else {
      t.numTilesMinus1 = partitions - 1;
      for (uint32_t i = 0; i <= t.numTilesMinus1; ++i) {
        t.topLeftPartitionIdx.push_back(i);
        t.bottomRightColumnOffset.push_back(0);
        t.bottomRightRowOffset.push_back(0);
      }
    }
  } else {
    t.topLeftPartitionIdx = {0};
    t.bottomRightColumnOffset = {0};
    t.bottomRightRowOffset = {0};
  }
  if (asps.auxiliaryVideoEnabled) {
    t.auxiliaryVideoTileRowWidthMinus1 = r.ue();
    for (uint32_t i = 0; i <= t.numTilesMinus1; ++i) t.auxiliaryVideoTileRowHeight.push_back(r.ue());
  }
  t.signalledTileId = r.flag();
  if (t.signalledTileId) {
    t.tileIdLengthMinus1 = r.ue();
    if (t.tileIdLengthMinus1 > 31) throw ParseError("tile id length > 32");
    for (uint32_t i = 0; i <= t.numTilesMinus1; ++i) t.tileIds.push_back(r.u32(t.tileIdLengthMinus1 + 1));
  } else {
    for (uint32_t i = 0; i <= t.numTilesMinus1; ++i) t.tileIds.push_back(i);
  }
  return t;
}

Afps parseAfps(BitReader& r, const std::vector<Asps>& aspsList) {
  Afps f;
  f.id = r.ue();
  if (f.id > 63) throw ParseError("AFPS id > 63");
  f.aspsId = r.ue();
  const Asps& asps = byId(aspsList, f.aspsId, "ASPS");
  f.tiles = parseTileInformation(r, asps);
  f.outputFlagPresent = r.flag();
  f.numRefIdxDefaultActiveMinus1 = r.ue();
  f.additionalLtAfocLsbLen = r.ue();
  if (f.additionalLtAfocLsbLen > 32) throw ParseError("additional LT AFOC LSB length > 32");
  f.lodModeEnabled = r.flag();
  f.raw3dOffsetBitCountExplicit = r.flag();
  f.extension = r.flag();
  if (f.extension) f.extension8Bits = static_cast<uint8_t>(r.u(8));
  return f;
}

// ---------------------------------------------------------------- atlas tile layer

AtlasTileHeader parseTileHeader(BitReader& r, uint8_t nalType, const std::vector<Asps>& aspsList,
                                const std::vector<Afps>& afpsList) {
  AtlasTileHeader h;
  h.nalType = nalType;
  if (nalType >= kNalBlaWLp && nalType <= kNalRsvIrap29) h.noOutputOfPriorFrames = r.flag();
  h.afpsId = r.ue();
  h.aapsId = r.ue();
  const Afps& afps = byId(afpsList, h.afpsId, "AFPS");
  const Asps& asps = byId(aspsList, afps.aspsId, "ASPS");
  const auto& tiles = afps.tiles;
  if (tiles.signalledTileId) {
    h.tileId = r.u32(tiles.tileIdLengthMinus1 + 1);
  } else if (tiles.numTilesMinus1 != 0) {
    h.tileId = r.u32(ceilLog2(tiles.numTilesMinus1 + 1));
  }
  const uint32_t type = r.ue();
  if (type > 2) throw ParseError("atlas tile type " + std::to_string(type));
  h.type = static_cast<TileType>(type);
  h.outputFlag = afps.outputFlagPresent ? r.flag() : true;
  h.afocLsb = r.u32(asps.log2MaxAfocLsbMinus4 + 4);
  h.refListFromAsps = !asps.refLists.empty() ? r.flag() : false;
  if (!h.refListFromAsps) {
    h.refList = parseRefList(r, asps);
  } else {
    if (asps.refLists.size() > 1) h.refListIdx = r.u32(ceilLog2(static_cast<uint32_t>(asps.refLists.size())));
    if (h.refListIdx >= asps.refLists.size()) throw ParseError("reference list index out of range");
    h.refList = asps.refLists[h.refListIdx];
  }
  size_t longTerm = 0;
  for (const auto& e : h.refList)
    if (!e.shortTerm) ++longTerm;
  for (size_t j = 0; j < longTerm; ++j) {
    const bool present = r.flag();
    h.additionalAfocLsbPresent.push_back(present);
    h.additionalAfocLsbVal.push_back(present ? r.u32(afps.additionalLtAfocLsbLen) : 0);
  }
  if (h.type != TileType::Skip) {
    if (asps.normalAxisLimitsQuantization) {
      h.posMinDQuantizer = static_cast<uint8_t>(r.u(5));
      if (asps.normalAxisMaxDeltaValue) h.posDeltaMaxDQuantizer = static_cast<uint8_t>(r.u(5));
    }
    if (asps.patchSizeQuantizerPresent) {
      h.patchSizeXQuantizer = static_cast<uint8_t>(r.u(3));
      h.patchSizeYQuantizer = static_cast<uint8_t>(r.u(3));
    }
    if (afps.raw3dOffsetBitCountExplicit) {
      h.raw3dOffsetBitCountMinus1 = r.u32(floorLog2(asps.geometry3dBitDepthMinus1 + 1u));
    } else {
      h.raw3dOffsetBitCountMinus1 = static_cast<uint32_t>(
          std::max(0, int(asps.geometry3dBitDepthMinus1) - int(asps.geometry2dBitDepthMinus1)) - 1);
    }
    if (h.type == TileType::P && h.refList.size() > 1) {
      h.numRefIdxActiveOverride = r.flag();
      if (h.numRefIdxActiveOverride) h.numRefIdxActiveMinus1 = r.ue();
    }
  }
  r.byteAlignment();
  return h;
}

void parsePlrData(BitReader& r, const Asps& asps, PlrData& plr, uint32_t widthBlocks, uint32_t heightBlocks) {
  plr.widthBlocks = widthBlocks;
  plr.heightBlocks = heightBlocks;
  for (unsigned i = 0; i <= asps.mapCountMinus1 && i < asps.plr.size(); ++i) {
    const auto& info = asps.plr[i];
    if (!info.enabled) continue;
    const uint64_t blocks = uint64_t{widthBlocks} * heightBlocks;
    if (blocks > (1u << 22)) throw ParseError("PLR patch too large");
    const unsigned modeBits = ceilLog2(static_cast<uint32_t>(info.modes.size() - 1));
    plr.levelFlag = blocks > info.blockThresholdPerPatchMinus1 + 1u ? r.flag() : true;
    if (!plr.levelFlag) {
      plr.blockPresent.assign(blocks, false);
      plr.blockModeMinus1.assign(blocks, 0);
      for (uint64_t b = 0; b < blocks; ++b) {
        plr.blockPresent[b] = r.flag();
        if (plr.blockPresent[b]) plr.blockModeMinus1[b] = r.u32(modeBits);
      }
    } else {
      plr.presentFlag = r.flag();
      if (plr.presentFlag) plr.modeMinus1 = r.u32(modeBits);
    }
  }
}

/// Fields shared by RAW and EOM patches: the auxiliary-video flag (only when the tile has an
/// auxiliary video area) and the 2D rectangle.
void parseAuxiliaryFlagAnd2d(BitReader& r, const AtlasTileHeader& h, const Afps& afps, PatchDataUnit& p) {
  const auto& tiles = afps.tiles;
  const size_t tileIndex = std::find(tiles.tileIds.begin(), tiles.tileIds.end(), h.tileId) - tiles.tileIds.begin();
  if (tileIndex < tiles.auxiliaryVideoTileRowHeight.size() && tiles.auxiliaryVideoTileRowHeight[tileIndex])
    p.inAuxiliaryVideo = r.flag();
  p.pos2dX = r.ue();
  p.pos2dY = r.ue();
  p.size2dXMinus1 = r.ue();
  p.size2dYMinus1 = r.ue();
}

/// 2D deltas of INTER and MERGE patches against their reference patch.
void parseDelta2d(BitReader& r, PatchDataUnit& p) {
  p.deltaPos2dX = r.se();
  p.deltaPos2dY = r.se();
  p.deltaSize2dX = r.se();
  p.deltaSize2dY = r.se();
}

/// 3D deltas of INTER and MERGE patches against their reference patch.
void parseDelta3d(BitReader& r, const Asps& asps, PatchDataUnit& p) {
  p.deltaOffset3dU = r.se();
  p.deltaOffset3dV = r.se();
  p.deltaOffset3dD = r.se();
  if (asps.normalAxisMaxDeltaValue) p.deltaRange3dD = r.se();
}

/// What PLR data of INTER and MERGE patches is sized from, as the reference decoder reads it:
/// an inter patch's block map is its predicted patch's (taken in the previously parsed non-skip
/// tile layer, at the predicted patch index) plus its size delta; a merge patch's is the last
/// such size (reset per tile layer) plus its delta.
struct PlrSizing {
  const AtlasTileLayer* previousLayer = nullptr;
  int64_t lastWidth = 0, lastHeight = 0;
  int64_t predictedIndex = 0;
};

void parseSizedPlrData(BitReader& r, const Asps& asps, PlrData& plr, int64_t width, int64_t height) {
  if (width <= 0 || height <= 0 || width > 65536 || height > 65536)
    throw ParseError("PLR data of an inter or merge patch has no size");
  parsePlrData(r, asps, plr, uint32_t(width), uint32_t(height));
}

PatchDataUnit parsePatch(BitReader& r, uint32_t modeCode, const AtlasTileHeader& h, const Asps& asps,
                         const Afps& afps, PlrSizing& sizing) {
  PatchDataUnit p;
  const bool iTile = h.type == TileType::I;
  if (iTile) {
    static const PatchMode modes[] = {PatchMode::Intra, PatchMode::Raw, PatchMode::Eom};
    if (modeCode > 2) throw ParseError("patch mode " + std::to_string(modeCode) + " in an I tile");
    p.mode = modes[modeCode];
  } else {
    static const PatchMode modes[] = {PatchMode::Skip, PatchMode::Merge, PatchMode::Inter,
                                      PatchMode::Intra, PatchMode::Raw, PatchMode::Eom};
    if (modeCode > 5) throw ParseError("patch mode " + std::to_string(modeCode) + " in a P tile");
    p.mode = modes[modeCode];
  }
  const uint32_t refActive = numRefIdxActive(h, afps);
  switch (p.mode) {
    case PatchMode::Intra: {
      const unsigned bitsUV = asps.geometry3dBitDepthMinus1 + 1u;
      const int bitsD = int(asps.geometry3dBitDepthMinus1) - int(h.posMinDQuantizer) + 1;
      if (bitsD <= 0) throw ParseError("pos min D quantizer exceeds the geometry bit depth");
      p.pos2dX = r.ue();
      p.pos2dY = r.ue();
      p.size2dXMinus1 = r.ue();
      p.size2dYMinus1 = r.ue();
      p.offset3dU = r.u(bitsUV);
      p.offset3dV = r.u(bitsUV);
      p.offset3dD = r.u(static_cast<unsigned>(bitsD));
      if (asps.normalAxisMaxDeltaValue) {
        const int bits = int(std::min(asps.geometry2dBitDepthMinus1, asps.geometry3dBitDepthMinus1)) + 1 -
                         int(h.posDeltaMaxDQuantizer);
        if (bits <= 0) throw ParseError("pos delta max D quantizer too large");
        p.range3dD = r.u(static_cast<unsigned>(bits));
      }
      p.projectionId = r.u32(ceilLog2(asps.maxNumberProjectionsMinus1 + 1));
      if (p.projectionId > asps.maxNumberProjectionsMinus1) throw ParseError("projection id out of range");
      p.orientation = r.u32(asps.useEightOrientations ? 3 : 1);
      if (afps.lodModeEnabled) {
        p.lodEnabled = r.flag();
        if (p.lodEnabled) {
          p.lodScaleXMinus1 = r.ue();
          p.lodScaleYIdc = r.ue();
        }
      }
      if (asps.plrEnabled) parsePlrData(r, asps, p.plr, p.size2dXMinus1 + 1, p.size2dYMinus1 + 1);
      break;
    }
    case PatchMode::Inter:
      p.refIndex = refActive > 1 ? r.ue() : 0;
      p.refPatchIndex = r.se();
      parseDelta2d(r, p);
      parseDelta3d(r, asps, p);
      if (asps.plrEnabled) {
        int64_t width = p.deltaSize2dX, height = p.deltaSize2dY;
        const AtlasTileLayer* previous = sizing.previousLayer;
        const int64_t index = p.refPatchIndex + sizing.predictedIndex;
        if (previous && index >= 0 && index < int64_t(previous->patches.size())) {
          const PatchDataUnit& predicted = previous->patches[size_t(index)];
          const bool sized = previous->header.type == TileType::I
                                 ? predicted.mode == PatchMode::Intra
                                 : (predicted.mode == PatchMode::Intra || predicted.mode == PatchMode::Inter ||
                                    predicted.mode == PatchMode::Merge);
          if (sized) {
            width += predicted.plr.widthBlocks;
            height += predicted.plr.heightBlocks;
          }
        }
        parseSizedPlrData(r, asps, p.plr, width, height);
        sizing.lastWidth = width;
        sizing.lastHeight = height;
        sizing.predictedIndex += p.refPatchIndex + 1;
      }
      break;
    case PatchMode::Merge:
      p.refIndex = refActive > 1 ? r.ue() : 0;
      p.override2d = r.flag();
      if (p.override2d) {
        parseDelta2d(r, p);
      } else {
        p.override3d = r.flag();
        if (p.override3d) {
          parseDelta3d(r, asps, p);
          if (asps.plrEnabled) p.overridePlr = r.flag();
        }
      }
      if (asps.plrEnabled && (p.override2d || p.overridePlr)) {
        sizing.lastWidth += p.deltaSize2dX;
        sizing.lastHeight += p.deltaSize2dY;
        parseSizedPlrData(r, asps, p.plr, sizing.lastWidth, sizing.lastHeight);
      }
      break;
    case PatchMode::Skip:
      break;
    case PatchMode::Raw: {
      const unsigned bits = h.raw3dOffsetBitCountMinus1 + 1;
      parseAuxiliaryFlagAnd2d(r, h, afps, p);
      p.offset3dU = r.u(bits);
      p.offset3dV = r.u(bits);
      p.offset3dD = r.u(bits);
      p.rawPointsMinus1 = r.ue();
      break;
    }
    case PatchMode::Eom: {
      parseAuxiliaryFlagAnd2d(r, h, afps, p);
      const uint32_t count = r.ue() + 1;
      if (count > 4096) throw ParseError("EOM patch with too many associated patches");
      for (uint32_t i = 0; i < count; ++i) {
        p.eomAssociatedPatches.push_back(r.ue());
        p.eomPoints.push_back(r.ue());
      }
      break;
    }
  }
  return p;
}

// ---------------------------------------------------------------- SEI

template <typename Instance, typename ParseBody>
void parseInstances(BitReader& r, std::vector<std::pair<uint8_t, Instance>>& out, unsigned count, ParseBody body) {
  for (unsigned i = 0; i < count; ++i) {
    Instance inst;
    const uint8_t index = static_cast<uint8_t>(r.u(8));
    inst.cancel = r.flag();
    if (!inst.cancel) {
      inst.methodType = r.ue();
      body(inst);
    }
    out.emplace_back(index, inst);
  }
}

void parseSeiPayload(Sei& sei) {
  BitReader r(sei.payload);
  switch (sei.payloadType) {
    case 11: {  // component codec mapping
      if (r.flag()) return;  // cancel
      const unsigned count = static_cast<unsigned>(r.u(8)) + 1;
      for (unsigned i = 0; i < count; ++i) {
        const uint8_t id = static_cast<uint8_t>(r.u(8));
        std::string fourcc;
        for (;;) {
          const char c = static_cast<char>(r.u(8));
          if (c == 0) break;
          fourcc.push_back(c);
          if (fourcc.size() > 255) throw ParseError("codec 4CC string not terminated");
        }
        sei.codecMappings.emplace_back(id, fourcc);
      }
      break;
    }
    case 19: {  // decoded atlas information hash
      if (r.flag()) return;  // cancel
      sei.persistence = r.flag();
      sei.hashType = static_cast<uint8_t>(r.u(8));
      const bool highLevel = r.flag(), atlas = r.flag(), atlasB2p = r.flag();
      r.u(3);  // tiles, tiles B2P, reserved
      auto readMd5 = [&](std::optional<std::array<uint8_t, 16>>& out) {
        if (sei.hashType == 0) {
          std::array<uint8_t, 16> md5{};
          for (auto& b : md5) b = static_cast<uint8_t>(r.u(8));
          out = md5;
        } else {
          r.u(sei.hashType == 1 ? 16 : 32);
        }
      };
      if (highLevel) readMd5(sei.highLevelMd5);
      if (atlas) readMd5(sei.atlasMd5);
      if (atlasB2p) readMd5(sei.atlasB2pMd5);
      break;
    }
    case 65:  // occupancy synthesis
      sei.persistence = r.flag();
      sei.reset = r.flag();
      parseInstances(r, sei.occupancySynthesis, static_cast<unsigned>(r.u(8)), [&](OccupancySynthesisInstance& i) {
        if (i.methodType == 1) {
          i.log2ThresholdMinus1 = static_cast<uint8_t>(r.u(2));
          i.passesCountMinus1 = static_cast<uint8_t>(r.u(2));
          i.filterSizeMinus1 = static_cast<uint8_t>(r.u(3));
        }
      });
      break;
    case 66:  // geometry smoothing
      sei.persistence = r.flag();
      sei.reset = r.flag();
      parseInstances(r, sei.geometrySmoothing, static_cast<unsigned>(r.u(8)), [&](GeometrySmoothingInstance& i) {
        if (i.methodType == 1) {
          i.filterEomPoints = r.flag();
          i.gridSizeMinus2 = static_cast<uint8_t>(r.u(7));
          i.threshold = static_cast<uint8_t>(r.u(8));
        }
      });
      break;
    case 67: {  // attribute smoothing
      sei.persistence = r.flag();
      sei.reset = r.flag();
      const uint32_t attributes = r.ue();
      if (attributes > 127) throw ParseError("attribute smoothing for more than 127 attributes");
      for (uint32_t j = 0; j < attributes; ++j) {
        AttributeSmoothingUpdate update;
        update.attributeIndex = static_cast<uint8_t>(r.u(7));
        update.cancel = r.flag();  // the instances follow either way, as TMC2 writes them
        auto& instances = update.instances;
        const unsigned count = static_cast<unsigned>(r.u(8));
        for (unsigned i = 0; i < count; ++i) {
          AttributeSmoothingInstance inst;
          const uint8_t index = static_cast<uint8_t>(r.u(8));
          inst.cancel = r.flag();
          if (!inst.cancel) {
            inst.methodType = r.ue();
            if (inst.methodType) {
              inst.filterEomPoints = r.flag();
              inst.gridSizeMinus2 = static_cast<uint8_t>(r.u(5));
              inst.threshold = static_cast<uint8_t>(r.u(8));
              inst.thresholdVariation = static_cast<uint8_t>(r.u(8));
              inst.thresholdDifference = static_cast<uint8_t>(r.u(8));
            }
          }
          instances.emplace_back(index, inst);
        }
        sei.attributeSmoothing.push_back(std::move(update));
      }
      break;
    }
    default:
      break;  // kept as raw payload
  }
}

std::vector<Sei> parseSeiRbsp(const std::vector<uint8_t>& rbsp, uint8_t nalType) {
  std::vector<Sei> out;
  BitReader r(rbsp);
  r.u(16);  // NAL header
  do {
    Sei sei;
    sei.prefix = nalType == kNalPrefixNsei || nalType == kNalPrefixEsei;
    sei.essential = nalType == kNalPrefixEsei || nalType == kNalSuffixEsei;
    uint32_t byte;
    do {
      byte = r.u32(8);
      sei.payloadType += byte;
    } while (byte == 0xff);
    uint32_t size = 0;
    do {
      byte = r.u32(8);
      size += byte;
    } while (byte == 0xff);
    if (size > r.bitsLeft() / 8) throw ParseError("SEI payload larger than its NAL unit");
    sei.payload.assign(r.currentByte(), r.currentByte() + size);
    r.skipBytes(size);
    parseSeiPayload(sei);
    out.push_back(std::move(sei));
  } while (r.moreRbspData());
  return out;
}

// ---------------------------------------------------------------- atlas sub-bitstream

void parseAtlasSubBitstream(BitReader& unit, CodedSequence& seq, uint8_t manifestLevel) {
  const unsigned precision = static_cast<unsigned>(unit.u(3)) + 1;
  unit.u(5);
  std::vector<Sei> pendingPrefix;
  std::optional<size_t> previousCodedLayer;  // the last tile layer with patch data (PlrSizing)
  while (unit.moreData()) {
    const uint64_t size = unit.u(precision * 8);
    if (size < 2 || size > unit.bitsLeft() / 8) throw ParseError("atlas NAL unit size exceeds the atlas data");
    const std::vector<uint8_t> rbsp = nalToRbsp(unit.currentByte(), static_cast<size_t>(size));
    unit.skipBytes(static_cast<size_t>(size));
    BitReader r(rbsp);
    if (r.u(1) != 0) throw ParseError("forbidden_zero_bit set in an atlas NAL unit");
    const uint8_t type = static_cast<uint8_t>(r.u(6));
    r.u(6);  // layer id
    if (r.u(3) == 0) throw ParseError("nal_temporal_id_plus1 is 0");
    if (type == kNalAsps) {
      Asps a = parseAsps(r, seq.vps.ptl, manifestLevel);
      if (seq.asps.size() <= a.id) seq.asps.resize(a.id + 1);
      seq.asps[a.id] = a;
      seq.aspsRbsp = rbsp;
    } else if (type == kNalAfps) {
      Afps f = parseAfps(r, seq.asps);
      if (seq.afps.size() <= f.id) seq.afps.resize(f.id + 1);
      seq.afps[f.id] = f;
      seq.afpsRbsp = rbsp;
    } else if (type <= kNalSkipR || (type >= kNalBlaWLp && type <= kNalRsvIrap29)) {
      if ((type >= 12 && type <= 15) || type >= 28) throw ParseError("reserved atlas NAL unit type " + std::to_string(type));
      AtlasTileLayer layer;
      layer.header = parseTileHeader(r, type, seq.asps, seq.afps);
      const Afps& afps = seq.afps[layer.header.afpsId];
      const Asps& asps = seq.asps[afps.aspsId];
      const bool coded = layer.header.type != TileType::Skip;
      if (coded) {
        PlrSizing sizing;
        if (previousCodedLayer) sizing.previousLayer = &seq.tileLayers[*previousCodedLayer];
        for (;;) {
          const uint32_t mode = r.ue();
          if (mode == kPatchEnd) break;
          if (layer.patches.size() >= 65536) throw ParseError("more than 65536 patches in a tile");
          layer.patches.push_back(parsePatch(r, mode, layer.header, asps, afps, sizing));
        }
      }
      layer.prefixSei = std::move(pendingPrefix);
      pendingPrefix.clear();
      seq.tileLayers.push_back(std::move(layer));
      if (coded) previousCodedLayer = seq.tileLayers.size() - 1;
    } else if (type == kNalPrefixNsei || type == kNalPrefixEsei) {
      for (auto& s : parseSeiRbsp(rbsp, type)) pendingPrefix.push_back(std::move(s));
    } else if (type == kNalSuffixNsei || type == kNalSuffixEsei) {
      if (seq.tileLayers.empty()) throw ParseError("suffix SEI before any atlas tile");
      for (auto& s : parseSeiRbsp(rbsp, type)) seq.tileLayers.back().suffixSei.push_back(std::move(s));
    } else if (type == kNalAaps || type == kNalAud || type == kNalV3cAud || type == kNalEos || type == kNalEob ||
               type == kNalFd) {
      // Nothing in these changes V-PCC reconstruction.
    }
    // Other (reserved / unspecified) NAL unit types are ignored, as the spec requires.
  }
}

V3cUnitHeader parseUnitHeader(BitReader& r) {
  V3cUnitHeader h;
  const uint32_t type = r.u32(5);
  if (type > 6) throw ParseError("reserved V3C unit type " + std::to_string(type));
  h.type = static_cast<V3cUnitType>(type);
  if (h.type == V3cUnitType::AVD || h.type == V3cUnitType::GVD || h.type == V3cUnitType::OVD ||
      h.type == V3cUnitType::AD || h.type == V3cUnitType::CAD || h.type == V3cUnitType::PVD) {
    h.vpsId = static_cast<uint8_t>(r.u(4));
    h.atlasId = static_cast<uint8_t>(r.u(6));
  }
  if (h.type == V3cUnitType::AVD) {
    h.attributeIndex = static_cast<uint8_t>(r.u(7));
    h.attributePartition = static_cast<uint8_t>(r.u(5));
    h.mapIndex = static_cast<uint8_t>(r.u(4));
    h.auxiliaryVideo = r.flag();
  } else if (h.type == V3cUnitType::GVD) {
    h.mapIndex = static_cast<uint8_t>(r.u(4));
    h.auxiliaryVideo = r.flag();
    r.u(12);
  } else if (h.type == V3cUnitType::OVD || h.type == V3cUnitType::AD || h.type == V3cUnitType::PVD) {
    r.u(17);
  } else if (h.type == V3cUnitType::CAD) {
    r.u(23);  // CAD has no atlas id in later editions; treat the rest as reserved
  } else {
    r.u(27);
  }
  return h;
}

}  // namespace

std::vector<uint8_t> nalToRbsp(const uint8_t* data, size_t size) {
  for (size_t i = 2; i < size; ++i)
    if (data[i - 2] == 0 && data[i - 1] == 0 && data[i] <= 2) return std::vector<uint8_t>(data, data + size);
  std::vector<uint8_t> out;
  out.reserve(size);
  unsigned zeros = 0;
  for (size_t i = 0; i < size; ++i) {
    if (zeros >= 2 && data[i] == 3 && i + 1 < size && data[i + 1] <= 3) {
      zeros = 0;
      continue;
    }
    out.push_back(data[i]);
    zeros = data[i] == 0 ? zeros + 1 : 0;
  }
  return out;
}

uint32_t numRefIdxActive(const AtlasTileHeader& h, const Afps& afps) {
  if (h.type == TileType::I) return 0;
  if (h.numRefIdxActiveOverride) return h.numRefIdxActiveMinus1 + 1;
  return std::min<uint32_t>(static_cast<uint32_t>(h.refList.size()), afps.numRefIdxDefaultActiveMinus1 + 1);
}

std::vector<CodedSequence> parseSampleStream(const uint8_t* data, size_t size, uint8_t manifestLevel) {
  if (size < 1) throw ParseError("empty V3C sample stream");
  BitReader r(data, size);
  const unsigned precision = static_cast<unsigned>(r.u(3)) + 1;
  r.u(5);
  std::vector<CodedSequence> sequences;
  while (r.moreData()) {
    const uint64_t unitSize = r.u(precision * 8);
    if (unitSize < 4 || unitSize > r.bitsLeft() / 8) throw ParseError("V3C unit size exceeds the stream");
    const uint8_t* unitData = r.currentByte();
    r.skipBytes(static_cast<size_t>(unitSize));
    BitReader unit(unitData, static_cast<size_t>(unitSize));
    const V3cUnitHeader header = parseUnitHeader(unit);
    if (header.type == V3cUnitType::VPS) {
      sequences.emplace_back();
      sequences.back().vps = parseVps(unit, manifestLevel);
      continue;
    }
    if (sequences.empty()) throw ParseError("V3C unit before the first VPS");
    CodedSequence& seq = sequences.back();
    if (header.vpsId != seq.vps.id) throw ParseError("V3C unit refers to an unknown VPS");
    if (header.type == V3cUnitType::AD) {
      parseAtlasSubBitstream(unit, seq, manifestLevel);
    } else if (header.type == V3cUnitType::OVD || header.type == V3cUnitType::GVD ||
               header.type == V3cUnitType::AVD) {
      seq.videos.push_back({header, std::vector<uint8_t>(unitData + 4, unitData + unitSize)});
    }
    // CAD / PVD units are not part of V-PCC and are skipped.
  }
  if (sequences.empty()) throw ParseError("no VPS in the V3C sample stream");
  return sequences;
}

}  // namespace vpcc
