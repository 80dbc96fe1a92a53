// The atlas sequence: the parameter sets (VPS, ASPS, AFPS) and one atlas tile layer per frame,
// the first an I tile and, with inter prediction, each later one a P tile predicted from the
// previous frame when that costs fewer bits (atlas_prediction.cpp); optionally the geometry
// smoothing SEI. Videos and attribute information are added by the driver (encoder.cpp).
#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "stages.h"
#include "vpcc/bit_writer.h"
#include "vpcc/limits.h"

namespace vpcc::encoding {
namespace {

/// The geometry smoothing SEI (payload type 66) asking for grid smoothing: one persistent
/// instance, method 1, grid 8, threshold 64, EOM points not filtered (there are none).
Sei geometrySmoothingSei() {
  Sei sei;
  sei.payloadType = 66;
  sei.prefix = true;
  sei.essential = true;
  sei.persistence = true;
  GeometrySmoothingInstance instance;
  instance.methodType = 1;
  instance.gridSizeMinus2 = 8 - 2;
  instance.threshold = 64;
  sei.geometrySmoothing.emplace_back(0, instance);
  BitWriter w;
  w.flag(sei.persistence);
  w.flag(sei.reset);
  w.u(1, 8);  // instances updated
  w.u(0, 8);  // instance index
  w.flag(instance.cancel);
  w.ue(instance.methodType);
  w.flag(instance.filterEomPoints);
  w.u(instance.gridSizeMinus2, 7);
  w.u(instance.threshold, 8);
  w.rbspTrailingBits();  // the payload's byte alignment
  sei.payload = w.take();
  return sei;
}

}  // namespace

/// The sequence's parameter sets and atlas tile layers, without attribute information and videos:
/// the encoder first reconstructs the geometry through it. The first frame is an I tile; with
/// inter prediction, each later frame is a P tile predicted from the previous frame when that
/// costs fewer bits than an I tile.
CodedSequence describeSequence(const std::vector<FramePatches>& framePatches, const EncoderConfig& cfg, uint32_t width,
                               uint32_t height, EncodeStats& stats) {
  CodedSequence seq;
  ProfileTierLevel& ptl = seq.vps.ptl;
  ptl.codecGroup = cfg.codec == VideoCodec::Avc ? uint8_t(CodecGroup::AvcProgressiveHigh) : uint8_t(CodecGroup::HevcMain10);
  ptl.toolset = 0;
  // Rec1: duplicate point removal (two maps) is a Rec1 tool; without post-processing SEI, Rec1
  // adds nothing else (Rec0 decoders, TMC2's among them, keep the duplicates).
  ptl.reconstruction = 1;
  // The lowest level whose MaxAtlasSize holds the atlas (decoders refuse atlases above it).
  ptl.level = lowestLevelFor(uint64_t(width) * height);
  VpsAtlas atlas;
  atlas.frameWidth = width;
  atlas.frameHeight = height;
  atlas.mapCountMinus1 = uint8_t(cfg.mapCount - 1);
  atlas.mapAbsoluteCoding.assign(cfg.mapCount, true);
  atlas.mapPredictorIndexDiff.assign(cfg.mapCount, 0);
  atlas.occupancy.lossyThreshold = occupancyThreshold(cfg);
  atlas.geometry.coordinatesBitDepthMinus1 = uint8_t(cfg.geometryBits - 1);
  seq.vps.atlases.push_back(atlas);

  const uint32_t frameCount = uint32_t(framePatches.size());
  const bool inter = cfg.interPrediction && frameCount > 1;
  Asps asps;
  asps.frameWidth = width;
  asps.frameHeight = height;
  asps.geometry3dBitDepthMinus1 = uint8_t(cfg.geometryBits - 1);
  asps.geometry2dBitDepthMinus1 = 7;
  asps.log2MaxAfocLsbMinus4 = ceilLog2(frameCount) > 4 ? ceilLog2(frameCount) - 4 : 0;
  if (inter) {
    RefListEntry previousFrame;  // short-term, AFOC difference +1
    previousFrame.absDeltaAfoc = 1;
    asps.refLists.push_back({previousFrame});
    asps.maxDecAtlasFrameBufferingMinus1 = 1;  // the reference and the frame being decoded
  }
  asps.log2PatchPackingBlockSize = 4;
  asps.mapCountMinus1 = uint8_t(cfg.mapCount - 1);
  asps.extension = true;
  asps.vpccExtension = true;
  asps.removeDuplicatePoints = cfg.mapCount > 1;
  seq.asps.push_back(asps);
  Afps afps;
  afps.lodModeEnabled = cfg.lod > 1;
  seq.afps.push_back(afps);

  std::vector<PatchDataUnit> previous;
  for (size_t f = 0; f < framePatches.size(); ++f) {
    std::vector<PatchDataUnit> intra;
    std::vector<int> reference;
    for (const EncPatch& p : framePatches[f].patches) {
      intra.push_back(intraPatch(p, cfg));
      reference.push_back(p.reference);
    }
    AtlasTileLayer layer;
    layer.header.nalType = f == 0 ? kNalIdrNLp : kNalTrailR;
    layer.header.type = TileType::I;
    layer.header.afocLsb = uint32_t(f % (size_t(1) << (asps.log2MaxAfocLsbMinus4 + 4)));
    layer.header.raw3dOffsetBitCountMinus1 = 0;
    if (inter) {
      layer.header.refListFromAsps = true;
      layer.header.refList = asps.refLists[0];
    }
    layer.patches = intra;
    if (inter && f > 0) {
      std::vector<PatchDataUnit> predicted = predictTile(intra, reference, previous, cfg);
      if (tileBits(predicted, TileType::P, cfg) < tileBits(intra, TileType::I, cfg)) {
        layer.header.type = TileType::P;
        layer.patches = std::move(predicted);
        ++stats.pTiles;
      }
    }
    if (cfg.geometrySmoothing) layer.prefixSei.push_back(geometrySmoothingSei());
    for (const PatchDataUnit& d : layer.patches) {
      if (d.mode == PatchMode::Inter) ++stats.interPatches;
      if (d.mode == PatchMode::Skip) ++stats.skipPatches;
    }
    seq.tileLayers.push_back(std::move(layer));
    previous = std::move(intra);
  }
  return seq;
}

}  // namespace vpcc::encoding
