// V3C / V-PCC syntax structures (ISO/IEC 23090-5), as parsed. Field names follow the spec's
// syntax element names without their prefixes; values are the coded values ("minus1" kept where
// the spec has it) so the structures can be written back unchanged by the encoder.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vpcc {

// Atlas NAL unit types (Table 4) and the patch mode that ends a tile's patch list.
constexpr uint8_t kNalTrailN = 0, kNalTrailR = 1, kNalSkipR = 11;
constexpr uint8_t kNalBlaWLp = 16, kNalIdrNLp = 23, kNalRsvIrap29 = 29;
constexpr uint8_t kNalAsps = 36, kNalAfps = 37, kNalAud = 38, kNalV3cAud = 39, kNalEos = 40, kNalEob = 41,
                  kNalFd = 42, kNalPrefixNsei = 43, kNalSuffixNsei = 44, kNalPrefixEsei = 45,
                  kNalSuffixEsei = 46, kNalAaps = 47;
constexpr uint32_t kPatchEnd = 14;

/// Ceil(Log2(v)) and Floor(Log2(v)) as the spec uses them for fixed-length field widths.
inline unsigned ceilLog2(uint32_t v) {
  unsigned bits = 0;
  while ((uint64_t{1} << bits) < v) ++bits;
  return bits;
}
inline unsigned floorLog2(uint32_t v) {
  unsigned bits = 0;
  while (v > 1) {
    v >>= 1;
    ++bits;
  }
  return bits;
}

enum class V3cUnitType : uint8_t { VPS = 0, AD = 1, OVD = 2, GVD = 3, AVD = 4, CAD = 5, PVD = 6 };

struct V3cUnitHeader {
  V3cUnitType type = V3cUnitType::VPS;
  uint8_t vpsId = 0;
  uint8_t atlasId = 0;
  uint8_t attributeIndex = 0;
  uint8_t attributePartition = 0;
  uint8_t mapIndex = 0;
  bool auxiliaryVideo = false;
};

enum class CodecGroup : uint8_t { AvcProgressiveHigh = 0, HevcMain10 = 1, Hevc444 = 2, VvcMain10 = 3, Mp4ra = 127 };

struct ProfileTierLevel {
  bool tier = false;
  uint8_t codecGroup = 1;
  uint8_t toolset = 0;          // 0 = V-PCC Basic, 1 = V-PCC Extended
  uint8_t reconstruction = 0;   // 0 = Rec0, 1 = Rec1, 2 = Rec2
  uint8_t level = 0;
  std::vector<uint64_t> subProfiles;
  bool extendedSubProfile = false;
  bool toolConstraintsPresent = false;
  // profile_toolset_constraints_information (kept whole for round trips)
  bool oneFrameOnly = false, eomConstraint = false;
  uint8_t maxMapCountMinus1 = 0, maxAtlasCountMinus1 = 0;
  bool multipleMapStreamsConstraint = false, plrConstraint = false;
  uint8_t attributeMaxDimensionMinus1 = 0, attributeMaxDimensionPartitionsMinus1 = 0;
  bool noEightOrientationsConstraint = false, no45DegreeProjectionPatchConstraint = false;
  std::vector<uint8_t> reservedConstraintBytes;
};

struct OccupancyInformation {
  uint8_t codecId = 0;
  uint8_t lossyThreshold = 0;
  uint8_t bitDepthMinus1 = 7;
  bool msbAlign = false;
};

struct GeometryInformation {
  uint8_t codecId = 0;
  uint8_t bitDepthMinus1 = 7;
  bool msbAlign = false;
  uint8_t coordinatesBitDepthMinus1 = 9;
  uint8_t auxiliaryCodecId = 0;
};

struct AttributeInformation {
  uint8_t typeId = 0;  // 0 = texture
  uint8_t codecId = 0;
  uint8_t auxiliaryCodecId = 0;
  bool mapAbsoluteCodingPersistence = true;
  uint8_t dimensionMinus1 = 2;
  uint8_t dimensionPartitionsMinus1 = 0;
  std::vector<uint32_t> partitionChannelsMinus1;
  uint8_t bitDepthMinus1 = 7;
  bool msbAlign = false;
};

struct VpsAtlas {
  uint8_t atlasId = 0;
  uint32_t frameWidth = 0, frameHeight = 0;
  uint8_t mapCountMinus1 = 0;
  bool multipleMapStreams = false;
  std::vector<bool> mapAbsoluteCoding{true};
  std::vector<uint32_t> mapPredictorIndexDiff{0};
  bool auxiliaryVideo = false, occupancyVideo = true, geometryVideo = true, attributeVideo = true;
  OccupancyInformation occupancy;
  GeometryInformation geometry;
  std::vector<AttributeInformation> attributes;
};

struct V3cParameterSet {
  ProfileTierLevel ptl;
  uint8_t id = 0;
  std::vector<VpsAtlas> atlases;
  bool extensionPresent = false;
  uint8_t extension8Bits = 0;
  std::vector<uint8_t> extensionData;
};

struct RefListEntry {
  bool shortTerm = true;
  uint32_t absDeltaAfoc = 0;
  bool signPositive = true;  // strpf_entry_sign_flag
  uint32_t afocLsbLt = 0;
};
using RefListStruct = std::vector<RefListEntry>;

struct PlrMode {
  bool interpolate = false, filling = false;
  uint8_t minimumDepth = 0, neighbourMinus1 = 0;
};
struct PlrInformation {
  bool enabled = false;
  std::vector<PlrMode> modes;
  uint8_t blockThresholdPerPatchMinus1 = 0;
};

struct Asps {
  uint32_t id = 0;
  uint32_t frameWidth = 0, frameHeight = 0;
  uint8_t geometry3dBitDepthMinus1 = 9, geometry2dBitDepthMinus1 = 7;
  uint32_t log2MaxAfocLsbMinus4 = 4;
  uint32_t maxDecAtlasFrameBufferingMinus1 = 0;
  bool longTermRefAtlasFrames = false;
  std::vector<RefListStruct> refLists;
  bool useEightOrientations = false;
  bool extendedProjection = false;
  uint32_t maxNumberProjectionsMinus1 = 5;
  bool normalAxisLimitsQuantization = false, normalAxisMaxDeltaValue = false;
  bool patchPrecedenceOrder = false;
  uint8_t log2PatchPackingBlockSize = 4;
  bool patchSizeQuantizerPresent = false;
  uint8_t mapCountMinus1 = 0;
  bool pixelDeinterleaving = false;
  std::vector<bool> pixelDeinterleavingMap;
  bool rawPatchEnabled = false, eomPatchEnabled = false;
  uint8_t eomFixBitCountMinus1 = 0;
  bool auxiliaryVideoEnabled = false;
  bool plrEnabled = false;
  std::vector<PlrInformation> plr;
  bool vuiPresent = false;
  bool extension = false, vpccExtension = false;
  uint8_t extension7Bits = 0;
  // asps_vpcc_extension
  bool removeDuplicatePoints = false;
  uint32_t surfaceThicknessMinus1 = 3;
};

struct AtlasTileInformation {
  bool singleTile = true;
  bool uniformPartitionSpacing = false;
  uint32_t numPartitionColumnsMinus1 = 0, numPartitionRowsMinus1 = 0;
  std::vector<uint32_t> partitionColumnWidthMinus1, partitionRowHeightMinus1;
  bool singlePartitionPerTile = true;
  uint32_t numTilesMinus1 = 0;
  std::vector<uint32_t> topLeftPartitionIdx, bottomRightColumnOffset, bottomRightRowOffset;
  uint32_t auxiliaryVideoTileRowWidthMinus1 = 0;
  std::vector<uint32_t> auxiliaryVideoTileRowHeight;
  bool signalledTileId = false;
  uint32_t tileIdLengthMinus1 = 0;
  std::vector<uint32_t> tileIds;
};

struct Afps {
  uint32_t id = 0, aspsId = 0;
  AtlasTileInformation tiles;
  bool outputFlagPresent = false;
  uint32_t numRefIdxDefaultActiveMinus1 = 0;
  uint32_t additionalLtAfocLsbLen = 0;
  bool lodModeEnabled = false;
  bool raw3dOffsetBitCountExplicit = false;
  bool extension = false;
  uint8_t extension8Bits = 0;
};

enum class TileType : uint8_t { P = 0, I = 1, Skip = 2 };

struct AtlasTileHeader {
  uint8_t nalType = 0;
  bool noOutputOfPriorFrames = false;
  uint32_t afpsId = 0, aapsId = 0;
  uint32_t tileId = 0;
  TileType type = TileType::I;
  bool outputFlag = true;
  uint32_t afocLsb = 0;
  bool refListFromAsps = false;
  uint32_t refListIdx = 0;
  RefListStruct refList;  // the active list (copied from the ASPS when refListFromAsps)
  std::vector<bool> additionalAfocLsbPresent;
  std::vector<uint32_t> additionalAfocLsbVal;
  uint8_t posMinDQuantizer = 0, posDeltaMaxDQuantizer = 0;
  uint8_t patchSizeXQuantizer = 0, patchSizeYQuantizer = 0;
  uint32_t raw3dOffsetBitCountMinus1 = 0;
  bool numRefIdxActiveOverride = false;
  uint32_t numRefIdxActiveMinus1 = 0;
};

enum class PatchMode : uint8_t { Intra, Inter, Merge, Skip, Raw, Eom };

struct PlrData {
  bool levelFlag = true;
  bool presentFlag = false;
  uint32_t modeMinus1 = 0;
  std::vector<bool> blockPresent;
  std::vector<uint32_t> blockModeMinus1;
  uint32_t widthBlocks = 0, heightBlocks = 0;
};

/// One patch_information_data() with the fields of its mode; unused fields stay zero.
struct PatchDataUnit {
  PatchMode mode = PatchMode::Intra;
  // INTRA (pdu), also 2D position for RAW/EOM
  uint32_t pos2dX = 0, pos2dY = 0;
  uint32_t size2dXMinus1 = 0, size2dYMinus1 = 0;
  uint64_t offset3dU = 0, offset3dV = 0, offset3dD = 0;
  uint64_t range3dD = 0;
  uint32_t projectionId = 0;
  uint32_t orientation = 0;
  bool lodEnabled = false;
  uint32_t lodScaleXMinus1 = 0, lodScaleYIdc = 0;
  // INTER / MERGE (deltas against a reference patch)
  uint32_t refIndex = 0;
  int32_t refPatchIndex = 0;
  int32_t deltaPos2dX = 0, deltaPos2dY = 0, deltaSize2dX = 0, deltaSize2dY = 0;
  int32_t deltaOffset3dU = 0, deltaOffset3dV = 0, deltaOffset3dD = 0, deltaRange3dD = 0;
  bool override2d = false, override3d = false, overridePlr = false;
  // RAW
  bool inAuxiliaryVideo = false;
  uint32_t rawPointsMinus1 = 0;
  // EOM
  std::vector<uint32_t> eomAssociatedPatches, eomPoints;
  PlrData plr;
};

/// SEI messages that change reconstruction, plus the rest kept as raw payloads.
struct GeometrySmoothingInstance {
  bool cancel = false;
  uint32_t methodType = 0;
  bool filterEomPoints = false;
  uint8_t gridSizeMinus2 = 0, threshold = 0;
};
struct AttributeSmoothingInstance {
  bool cancel = false;
  uint32_t methodType = 0;
  bool filterEomPoints = false;
  uint8_t gridSizeMinus2 = 0, threshold = 0, thresholdVariation = 0, thresholdDifference = 0;
};
/// One attribute's entry of an attribute smoothing SEI: cancelled as a whole, or its instances.
struct AttributeSmoothingUpdate {
  uint8_t attributeIndex = 0;
  bool cancel = false;
  std::vector<std::pair<uint8_t, AttributeSmoothingInstance>> instances;  // (instance index, instance)
};
struct OccupancySynthesisInstance {
  bool cancel = false;
  uint32_t methodType = 0;
  uint8_t log2ThresholdMinus1 = 0, passesCountMinus1 = 0, filterSizeMinus1 = 0;
};

struct Sei {
  uint32_t payloadType = 0;
  bool prefix = true, essential = false;
  std::vector<uint8_t> payload;  // raw payload bytes
  // Parsed forms (filled for the types the decoder acts on)
  bool persistence = false, reset = false;
  std::vector<std::pair<uint8_t, GeometrySmoothingInstance>> geometrySmoothing;
  std::vector<std::pair<uint8_t, OccupancySynthesisInstance>> occupancySynthesis;
  std::vector<AttributeSmoothingUpdate> attributeSmoothing;
  // decoded atlas information hash (19/21): MD5 only (CRC/checksum kept raw)
  uint8_t hashType = 0;
  std::optional<std::array<uint8_t, 16>> highLevelMd5, atlasMd5, atlasB2pMd5;
  // component codec mapping (11): codec id → 4CC
  std::vector<std::pair<uint8_t, std::string>> codecMappings;
};

struct AtlasTileLayer {
  AtlasTileHeader header;
  std::vector<PatchDataUnit> patches;
  std::vector<Sei> prefixSei, suffixSei;
};

}  // namespace vpcc
