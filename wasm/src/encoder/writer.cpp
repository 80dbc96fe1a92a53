// V3C sample stream writer: each function mirrors its counterpart in the decoder's parser.cpp
// field by field (ISO/IEC 23090-5 §8.3), so a CodedSequence parsed from a stream and written
// back decodes the same. Atlas NAL units get emulation prevention bytes as the spec requires.
#include "vpcc/writer.h"

#include <algorithm>
#include <stdexcept>
#include <string>

#include "vpcc/bit_writer.h"

namespace vpcc {
namespace {

void require(bool ok, const char* what) {
  if (!ok) throw std::invalid_argument(std::string("V3C writer: ") + what);
}

// ---------------------------------------------------------------- VPS

void writePtl(BitWriter& w, const ProfileTierLevel& ptl) {
  w.flag(ptl.tier);
  w.u(ptl.codecGroup, 7);
  w.u(ptl.toolset, 8);
  w.u(ptl.reconstruction, 8);
  w.u(0, 16);
  w.u(0, 16);
  w.u(ptl.level, 8);
  w.u(ptl.subProfiles.size(), 6);
  w.flag(ptl.extendedSubProfile);
  for (uint64_t id : ptl.subProfiles) w.u(id, ptl.extendedSubProfile ? 64 : 32);
  w.flag(ptl.toolConstraintsPresent);
  if (ptl.toolConstraintsPresent) {
    w.flag(ptl.oneFrameOnly);
    w.flag(ptl.eomConstraint);
    w.u(ptl.maxMapCountMinus1, 4);
    w.u(ptl.maxAtlasCountMinus1, 4);
    w.flag(ptl.multipleMapStreamsConstraint);
    w.flag(ptl.plrConstraint);
    w.u(ptl.attributeMaxDimensionMinus1, 6);
    w.u(ptl.attributeMaxDimensionPartitionsMinus1, 6);
    w.flag(ptl.noEightOrientationsConstraint);
    w.flag(ptl.no45DegreeProjectionPatchConstraint);
    w.u(0, 6);
    w.u(ptl.reservedConstraintBytes.size(), 8);
    for (uint8_t b : ptl.reservedConstraintBytes) w.u(b, 8);
  }
}

void writeVps(BitWriter& w, const V3cParameterSet& vps) {
  writePtl(w, vps.ptl);
  w.u(vps.id, 4);
  w.u(0, 8);
  require(!vps.atlases.empty(), "VPS without atlases");
  w.u(vps.atlases.size() - 1, 6);
  for (const VpsAtlas& a : vps.atlases) {
    w.u(a.atlasId, 6);
    w.ue(a.frameWidth);
    w.ue(a.frameHeight);
    w.u(a.mapCountMinus1, 4);
    if (a.mapCountMinus1 > 0) w.flag(a.multipleMapStreams);
    for (unsigned i = 1; i <= a.mapCountMinus1; ++i) {
      if (a.multipleMapStreams) w.flag(a.mapAbsoluteCoding.at(i));
      if (!a.mapAbsoluteCoding.at(i)) w.ue(a.mapPredictorIndexDiff.at(i));
    }
    w.flag(a.auxiliaryVideo);
    w.flag(a.occupancyVideo);
    w.flag(a.geometryVideo);
    w.flag(a.attributeVideo);
    if (a.occupancyVideo) {
      w.u(a.occupancy.codecId, 8);
      w.u(a.occupancy.lossyThreshold, 8);
      w.u(a.occupancy.bitDepthMinus1, 5);
      w.flag(a.occupancy.msbAlign);
    }
    if (a.geometryVideo) {
      w.u(a.geometry.codecId, 8);
      w.u(a.geometry.bitDepthMinus1, 5);
      w.flag(a.geometry.msbAlign);
      w.u(a.geometry.coordinatesBitDepthMinus1, 5);
      if (a.auxiliaryVideo) w.u(a.geometry.auxiliaryCodecId, 8);
    }
    if (a.attributeVideo) {
      w.u(a.attributes.size(), 7);
      for (const AttributeInformation& ai : a.attributes) {
        w.u(ai.typeId, 4);
        w.u(ai.codecId, 8);
        if (a.auxiliaryVideo) w.u(ai.auxiliaryCodecId, 8);
        if (a.mapCountMinus1 > 0) w.flag(ai.mapAbsoluteCodingPersistence);
        w.u(ai.dimensionMinus1, 6);
        if (ai.dimensionMinus1 > 0) {
          w.u(ai.dimensionPartitionsMinus1, 6);
          int remaining = ai.dimensionMinus1;
          const int k = ai.dimensionPartitionsMinus1;
          for (int p = 0; p < k; ++p) {
            const uint32_t channels = ai.partitionChannelsMinus1.at(p);
            if (k - p != remaining) w.ue(channels);
            remaining -= static_cast<int>(channels) + 1;
          }
        }
        w.u(ai.bitDepthMinus1, 5);
        w.flag(ai.msbAlign);
      }
    }
  }
  w.flag(vps.extensionPresent);
  if (vps.extensionPresent) w.u(vps.extension8Bits, 8);
  if (vps.extension8Bits) {
    require(!vps.extensionData.empty(), "VPS extension flagged without data");
    w.ue(static_cast<uint32_t>(vps.extensionData.size() - 1));
    for (uint8_t b : vps.extensionData) w.u(b, 8);
  }
  w.byteAlignment();
}

// ---------------------------------------------------------------- atlas parameter sets

void writeRefList(BitWriter& w, const RefListStruct& list, const Asps& asps) {
  w.ue(static_cast<uint32_t>(list.size()));
  for (const RefListEntry& e : list) {
    if (asps.longTermRefAtlasFrames) w.flag(e.shortTerm);
    if (e.shortTerm) {
      w.ue(e.absDeltaAfoc);
      if (e.absDeltaAfoc > 0) w.flag(e.signPositive);
    } else {
      w.u(e.afocLsbLt, asps.log2MaxAfocLsbMinus4 + 4);
    }
  }
}

void writeAsps(BitWriter& w, const Asps& a) {
  w.ue(a.id);
  w.ue(a.frameWidth);
  w.ue(a.frameHeight);
  w.u(a.geometry3dBitDepthMinus1, 5);
  w.u(a.geometry2dBitDepthMinus1, 5);
  w.ue(a.log2MaxAfocLsbMinus4);
  w.ue(a.maxDecAtlasFrameBufferingMinus1);
  w.flag(a.longTermRefAtlasFrames);
  w.ue(static_cast<uint32_t>(a.refLists.size()));
  for (const auto& list : a.refLists) writeRefList(w, list, a);
  w.flag(a.useEightOrientations);
  w.flag(a.extendedProjection);
  if (a.extendedProjection) w.ue(a.maxNumberProjectionsMinus1);
  w.flag(a.normalAxisLimitsQuantization);
  w.flag(a.normalAxisMaxDeltaValue);
  w.flag(a.patchPrecedenceOrder);
  w.u(a.log2PatchPackingBlockSize, 3);
  w.flag(a.patchSizeQuantizerPresent);
  w.u(a.mapCountMinus1, 4);
  w.flag(a.pixelDeinterleaving);
  if (a.pixelDeinterleaving)
    for (unsigned i = 0; i <= a.mapCountMinus1; ++i) w.flag(a.pixelDeinterleavingMap.at(i));
  w.flag(a.rawPatchEnabled);
  w.flag(a.eomPatchEnabled);
  if (a.eomPatchEnabled && a.mapCountMinus1 == 0) w.u(a.eomFixBitCountMinus1, 4);
  if (a.rawPatchEnabled || a.eomPatchEnabled) w.flag(a.auxiliaryVideoEnabled);
  w.flag(a.plrEnabled);
  if (a.plrEnabled) {
    for (unsigned j = 0; j <= a.mapCountMinus1; ++j) {
      const PlrInformation& p = a.plr.at(j);
      w.flag(p.enabled);
      if (!p.enabled) continue;
      require(!p.modes.empty() && p.modes.size() <= 16, "PLR mode count");
      w.u(p.modes.size() - 1, 4);
      for (const PlrMode& m : p.modes) {
        w.flag(m.interpolate);
        w.flag(m.filling);
        w.u(m.minimumDepth, 2);
        w.u(m.neighbourMinus1, 2);
      }
      w.u(p.blockThresholdPerPatchMinus1, 6);
    }
  }
  require(!a.vuiPresent, "ASPS VUI is not supported");
  w.flag(false);
  w.flag(a.extension);
  if (a.extension) {
    w.flag(a.vpccExtension);
    w.u(a.extension7Bits, 7);
  }
  if (a.vpccExtension) {
    w.flag(a.removeDuplicatePoints);
    if (a.pixelDeinterleaving || a.plrEnabled) w.ue(a.surfaceThicknessMinus1);
  }
  w.rbspTrailingBits();
}

void writeTileInformation(BitWriter& w, const AtlasTileInformation& t, const Asps& asps) {
  w.flag(t.singleTile);
  if (!t.singleTile) {
    w.flag(t.uniformPartitionSpacing);
    if (t.uniformPartitionSpacing) {
      w.ue(t.partitionColumnWidthMinus1.at(0));
      w.ue(t.partitionRowHeightMinus1.at(0));
    } else {
      w.ue(t.numPartitionColumnsMinus1);
      w.ue(t.numPartitionRowsMinus1);
      for (uint32_t i = 0; i < t.numPartitionColumnsMinus1; ++i) w.ue(t.partitionColumnWidthMinus1.at(i));
      for (uint32_t i = 0; i < t.numPartitionRowsMinus1; ++i) w.ue(t.partitionRowHeightMinus1.at(i));
    }
    w.flag(t.singlePartitionPerTile);
    const uint32_t partitions = (t.numPartitionColumnsMinus1 + 1) * (t.numPartitionRowsMinus1 + 1);
    if (!t.singlePartitionPerTile) {
      w.ue(t.numTilesMinus1);
      for (uint32_t i = 0; i <= t.numTilesMinus1; ++i) {
        w.u(t.topLeftPartitionIdx.at(i), ceilLog2(partitions));
        w.ue(t.bottomRightColumnOffset.at(i));
        w.ue(t.bottomRightRowOffset.at(i));
      }
    }
  }
  if (asps.auxiliaryVideoEnabled) {
    w.ue(t.auxiliaryVideoTileRowWidthMinus1);
    for (uint32_t i = 0; i <= t.numTilesMinus1; ++i) w.ue(t.auxiliaryVideoTileRowHeight.at(i));
  }
  w.flag(t.signalledTileId);
  if (t.signalledTileId) {
    w.ue(t.tileIdLengthMinus1);
    for (uint32_t i = 0; i <= t.numTilesMinus1; ++i) w.u(t.tileIds.at(i), t.tileIdLengthMinus1 + 1);
  }
}

void writeAfps(BitWriter& w, const Afps& f, const Asps& asps) {
  w.ue(f.id);
  w.ue(f.aspsId);
  writeTileInformation(w, f.tiles, asps);
  w.flag(f.outputFlagPresent);
  w.ue(f.numRefIdxDefaultActiveMinus1);
  w.ue(f.additionalLtAfocLsbLen);
  w.flag(f.lodModeEnabled);
  w.flag(f.raw3dOffsetBitCountExplicit);
  w.flag(f.extension);
  if (f.extension) {
    require(f.extension8Bits == 0, "AFPS extensions are not supported");
    w.u(0, 8);
  }
  w.rbspTrailingBits();
}

// ---------------------------------------------------------------- atlas tile layer

void writeTileHeader(BitWriter& w, const AtlasTileHeader& h, const Asps& asps, const Afps& afps) {
  if (h.nalType >= kNalBlaWLp && h.nalType <= kNalRsvIrap29) w.flag(h.noOutputOfPriorFrames);
  w.ue(h.afpsId);
  w.ue(h.aapsId);
  const auto& tiles = afps.tiles;
  if (tiles.signalledTileId) {
    w.u(h.tileId, tiles.tileIdLengthMinus1 + 1);
  } else if (tiles.numTilesMinus1 != 0) {
    w.u(h.tileId, ceilLog2(tiles.numTilesMinus1 + 1));
  }
  w.ue(static_cast<uint32_t>(h.type));
  if (afps.outputFlagPresent) w.flag(h.outputFlag);
  w.u(h.afocLsb, asps.log2MaxAfocLsbMinus4 + 4);
  if (!asps.refLists.empty()) w.flag(h.refListFromAsps);
  if (!h.refListFromAsps) {
    writeRefList(w, h.refList, asps);
  } else if (asps.refLists.size() > 1) {
    w.u(h.refListIdx, ceilLog2(static_cast<uint32_t>(asps.refLists.size())));
  }
  size_t longTerm = 0;
  for (const auto& e : h.refList)
    if (!e.shortTerm) ++longTerm;
  for (size_t j = 0; j < longTerm; ++j) {
    const bool present = j < h.additionalAfocLsbPresent.size() && h.additionalAfocLsbPresent[j];
    w.flag(present);
    if (present) w.u(h.additionalAfocLsbVal.at(j), afps.additionalLtAfocLsbLen);
  }
  if (h.type != TileType::Skip) {
    if (asps.normalAxisLimitsQuantization) {
      w.u(h.posMinDQuantizer, 5);
      if (asps.normalAxisMaxDeltaValue) w.u(h.posDeltaMaxDQuantizer, 5);
    }
    if (asps.patchSizeQuantizerPresent) {
      w.u(h.patchSizeXQuantizer, 3);
      w.u(h.patchSizeYQuantizer, 3);
    }
    if (afps.raw3dOffsetBitCountExplicit) w.u(h.raw3dOffsetBitCountMinus1, floorLog2(asps.geometry3dBitDepthMinus1 + 1u));
    if (h.type == TileType::P && h.refList.size() > 1) {
      w.flag(h.numRefIdxActiveOverride);
      if (h.numRefIdxActiveOverride) w.ue(h.numRefIdxActiveMinus1);
    }
  }
  w.byteAlignment();
}

void writePlrData(BitWriter& w, const Asps& asps, const PlrData& plr) {
  for (unsigned i = 0; i <= asps.mapCountMinus1 && i < asps.plr.size(); ++i) {
    const auto& info = asps.plr[i];
    if (!info.enabled) continue;
    const uint64_t blocks = uint64_t{plr.widthBlocks} * plr.heightBlocks;
    const unsigned modeBits = ceilLog2(static_cast<uint32_t>(info.modes.size() - 1));
    if (blocks > info.blockThresholdPerPatchMinus1 + 1u) w.flag(plr.levelFlag);
    if (!plr.levelFlag) {
      for (uint64_t b = 0; b < blocks; ++b) {
        w.flag(plr.blockPresent.at(b));
        if (plr.blockPresent[b]) w.u(plr.blockModeMinus1.at(b), modeBits);
      }
    } else {
      w.flag(plr.presentFlag);
      if (plr.presentFlag) w.u(plr.modeMinus1, modeBits);
    }
  }
}

void writeAuxiliaryFlagAnd2d(BitWriter& w, const AtlasTileHeader& h, const Afps& afps, const PatchDataUnit& p) {
  const auto& tiles = afps.tiles;
  const size_t tileIndex = std::find(tiles.tileIds.begin(), tiles.tileIds.end(), h.tileId) - tiles.tileIds.begin();
  if (tileIndex < tiles.auxiliaryVideoTileRowHeight.size() && tiles.auxiliaryVideoTileRowHeight[tileIndex])
    w.flag(p.inAuxiliaryVideo);
  w.ue(p.pos2dX);
  w.ue(p.pos2dY);
  w.ue(p.size2dXMinus1);
  w.ue(p.size2dYMinus1);
}

void writeDelta2d(BitWriter& w, const PatchDataUnit& p) {
  w.se(p.deltaPos2dX);
  w.se(p.deltaPos2dY);
  w.se(p.deltaSize2dX);
  w.se(p.deltaSize2dY);
}

void writeDelta3d(BitWriter& w, const Asps& asps, const PatchDataUnit& p) {
  w.se(p.deltaOffset3dU);
  w.se(p.deltaOffset3dV);
  w.se(p.deltaOffset3dD);
  if (asps.normalAxisMaxDeltaValue) w.se(p.deltaRange3dD);
}

uint32_t patchModeCode(PatchMode mode, bool iTile) {
  if (iTile) {
    switch (mode) {
      case PatchMode::Intra: return 0;
      case PatchMode::Raw: return 1;
      case PatchMode::Eom: return 2;
      default: throw std::invalid_argument("V3C writer: inter, merge or skip patch in an I tile");
    }
  }
  switch (mode) {
    case PatchMode::Skip: return 0;
    case PatchMode::Merge: return 1;
    case PatchMode::Inter: return 2;
    case PatchMode::Intra: return 3;
    case PatchMode::Raw: return 4;
    case PatchMode::Eom: return 5;
  }
  return 0;
}

void writePatch(BitWriter& w, const PatchDataUnit& p, const AtlasTileHeader& h, const Asps& asps, const Afps& afps) {
  w.ue(patchModeCode(p.mode, h.type == TileType::I));
  const uint32_t refActive = numRefIdxActive(h, afps);
  switch (p.mode) {
    case PatchMode::Intra: {
      const unsigned bitsUV = asps.geometry3dBitDepthMinus1 + 1u;
      const int bitsD = int(asps.geometry3dBitDepthMinus1) - int(h.posMinDQuantizer) + 1;
      require(bitsD > 0, "pos min D quantizer exceeds the geometry bit depth");
      w.ue(p.pos2dX);
      w.ue(p.pos2dY);
      w.ue(p.size2dXMinus1);
      w.ue(p.size2dYMinus1);
      w.u(p.offset3dU, bitsUV);
      w.u(p.offset3dV, bitsUV);
      w.u(p.offset3dD, static_cast<unsigned>(bitsD));
      if (asps.normalAxisMaxDeltaValue) {
        const int bits = int(std::min(asps.geometry2dBitDepthMinus1, asps.geometry3dBitDepthMinus1)) + 1 -
                         int(h.posDeltaMaxDQuantizer);
        require(bits > 0, "pos delta max D quantizer too large");
        w.u(p.range3dD, static_cast<unsigned>(bits));
      }
      w.u(p.projectionId, ceilLog2(asps.maxNumberProjectionsMinus1 + 1));
      w.u(p.orientation, asps.useEightOrientations ? 3 : 1);
      if (afps.lodModeEnabled) {
        w.flag(p.lodEnabled);
        if (p.lodEnabled) {
          w.ue(p.lodScaleXMinus1);
          w.ue(p.lodScaleYIdc);
        }
      }
      if (asps.plrEnabled) writePlrData(w, asps, p.plr);
      break;
    }
    case PatchMode::Inter:
      if (refActive > 1) w.ue(p.refIndex);
      w.se(p.refPatchIndex);
      writeDelta2d(w, p);
      writeDelta3d(w, asps, p);
      if (asps.plrEnabled) writePlrData(w, asps, p.plr);  // its block map's size is implied (parser)
      break;
    case PatchMode::Merge:
      if (refActive > 1) w.ue(p.refIndex);
      w.flag(p.override2d);
      if (p.override2d) {
        writeDelta2d(w, p);
      } else {
        w.flag(p.override3d);
        if (p.override3d) {
          writeDelta3d(w, asps, p);
          if (asps.plrEnabled) w.flag(p.overridePlr);
        }
      }
      if (asps.plrEnabled && (p.override2d || p.overridePlr)) writePlrData(w, asps, p.plr);
      break;
    case PatchMode::Skip:
      break;
    case PatchMode::Raw: {
      const unsigned bits = h.raw3dOffsetBitCountMinus1 + 1;
      writeAuxiliaryFlagAnd2d(w, h, afps, p);
      w.u(p.offset3dU, bits);
      w.u(p.offset3dV, bits);
      w.u(p.offset3dD, bits);
      w.ue(p.rawPointsMinus1);
      break;
    }
    case PatchMode::Eom: {
      writeAuxiliaryFlagAnd2d(w, h, afps, p);
      require(!p.eomAssociatedPatches.empty() && p.eomAssociatedPatches.size() == p.eomPoints.size(),
              "EOM patch lists");
      w.ue(static_cast<uint32_t>(p.eomAssociatedPatches.size() - 1));
      for (size_t i = 0; i < p.eomAssociatedPatches.size(); ++i) {
        w.ue(p.eomAssociatedPatches[i]);
        w.ue(p.eomPoints[i]);
      }
      break;
    }
  }
}

// ---------------------------------------------------------------- NAL units and SEI

void nalHeader(BitWriter& w, uint8_t type) {
  w.u(0, 1);
  w.u(type, 6);
  w.u(0, 6);  // layer id
  w.u(1, 3);  // temporal id plus 1
}

std::vector<uint8_t> seiNal(const Sei& sei) {
  const uint8_t type = sei.prefix ? (sei.essential ? kNalPrefixEsei : kNalPrefixNsei)
                                  : (sei.essential ? kNalSuffixEsei : kNalSuffixNsei);
  BitWriter w;
  nalHeader(w, type);
  uint32_t t = sei.payloadType;
  for (; t >= 255; t -= 255) w.u(0xff, 8);
  w.u(t, 8);
  size_t size = sei.payload.size();
  for (; size >= 255; size -= 255) w.u(0xff, 8);
  w.u(size, 8);
  w.bytes(sei.payload);
  w.rbspTrailingBits();
  return w.take();
}

}  // namespace

std::vector<uint8_t> rbspToNal(const std::vector<uint8_t>& rbsp) {
  std::vector<uint8_t> out;
  out.reserve(rbsp.size() + rbsp.size() / 64);
  unsigned zeros = 0;
  for (uint8_t b : rbsp) {
    if (zeros >= 2 && b <= 3) {
      out.push_back(3);
      zeros = 0;
    }
    out.push_back(b);
    zeros = b == 0 ? zeros + 1 : 0;
  }
  return out;
}

std::vector<uint8_t> writeSampleStream(const std::vector<CodedSequence>& sequences) {
  constexpr unsigned kPrecision = 4;  // bytes per unit / NAL size
  auto appendSized = [](BitWriter& w, const std::vector<uint8_t>& unit) {
    require(unit.size() <= 0xffffffffu, "unit larger than 4 GiB");
    w.u(unit.size(), kPrecision * 8);
    w.bytes(unit);
  };
  BitWriter stream;
  stream.u(kPrecision - 1, 3);
  stream.u(0, 5);
  for (const CodedSequence& seq : sequences) {
    require(!seq.vps.atlases.empty(), "sequence without an atlas");
    BitWriter vps;
    vps.u(static_cast<uint8_t>(V3cUnitType::VPS), 5);
    vps.u(0, 27);
    writeVps(vps, seq.vps);
    appendSized(stream, vps.take());

    // Atlas data: one AD unit with the NAL sample stream.
    BitWriter ad;
    ad.u(static_cast<uint8_t>(V3cUnitType::AD), 5);
    ad.u(seq.vps.id, 4);
    ad.u(seq.vps.atlases[0].atlasId, 6);
    ad.u(0, 17);
    ad.u(kPrecision - 1, 3);
    ad.u(0, 5);
    auto appendNal = [&](const std::vector<uint8_t>& rbsp) { appendSized(ad, rbspToNal(rbsp)); };
    for (const Asps& asps : seq.asps) {
      BitWriter w;
      nalHeader(w, kNalAsps);
      writeAsps(w, asps);
      appendNal(w.take());
    }
    for (const Afps& afps : seq.afps) {
      BitWriter w;
      nalHeader(w, kNalAfps);
      writeAfps(w, afps, seq.asps.at(afps.aspsId));
      appendNal(w.take());
    }
    for (const AtlasTileLayer& layer : seq.tileLayers) {
      for (const Sei& sei : layer.prefixSei) appendNal(seiNal(sei));
      const Afps& afps = seq.afps.at(layer.header.afpsId);
      const Asps& asps = seq.asps.at(afps.aspsId);
      BitWriter w;
      nalHeader(w, layer.header.nalType);
      writeTileHeader(w, layer.header, asps, afps);
      if (layer.header.type != TileType::Skip) {
        for (const PatchDataUnit& p : layer.patches) writePatch(w, p, layer.header, asps, afps);
        w.ue(kPatchEnd);
      }
      w.rbspTrailingBits();
      appendNal(w.take());
      for (const Sei& sei : layer.suffixSei) appendNal(seiNal(sei));
    }
    appendSized(stream, ad.take());

    for (const VideoSubBitstream& v : seq.videos) {
      BitWriter unit;
      const V3cUnitHeader& h = v.header;
      unit.u(static_cast<uint8_t>(h.type), 5);
      unit.u(h.vpsId, 4);
      unit.u(h.atlasId, 6);
      if (h.type == V3cUnitType::AVD) {
        unit.u(h.attributeIndex, 7);
        unit.u(h.attributePartition, 5);
        unit.u(h.mapIndex, 4);
        unit.flag(h.auxiliaryVideo);
      } else if (h.type == V3cUnitType::GVD) {
        unit.u(h.mapIndex, 4);
        unit.flag(h.auxiliaryVideo);
        unit.u(0, 12);
      } else if (h.type == V3cUnitType::OVD) {
        unit.u(0, 17);
      } else {
        throw std::invalid_argument("V3C writer: video unit of a non-video type");
      }
      unit.bytes(v.data);
      appendSized(stream, unit.take());
    }
  }
  return stream.take();
}

}  // namespace vpcc
