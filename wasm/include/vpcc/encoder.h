// The V-PCC encoder: coloured voxelized point-cloud frames → one V3C sequence (a holoquic
// segment). Patch generation projects the cloud onto the six axis planes, packs the patches into
// an atlas, and codes occupancy, geometry and attribute pictures with a video encoder. Colours
// are transferred onto the geometry as the decoder reconstructs it (so the encoder decodes its
// own geometry video, with libavcodec).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vpcc/video.h"
#include "vpcc/video_encoder.h"

namespace vpcc {

/// One input frame: integer voxel positions and 8-bit RGB colours.
struct InputFrame {
  std::vector<uint16_t> positions;  // x, y, z per point, each < 2^geometryBits
  std::vector<uint8_t> colors;      // r, g, b per point
  size_t size() const { return positions.size() / 3; }
};

struct EncoderConfig {
  unsigned geometryBits = 10;     // voxel grid depth of the input coordinates
  unsigned mapCount = 2;          // 1: near layer only; 2: near and far layer (within the thickness)
  unsigned surfaceThickness = 4;  // far layer depth range above the near layer
  unsigned occupancyPrecision = 4;
  /// Level of detail: 1 keeps every point; 2 projects 2×2 tangent-plane cells to one pixel
  /// (a quarter of the points, coded with per-patch LoD scaling).
  unsigned lod = 1;
  unsigned atlasWidth = 0;        // pixels, multiple of 16; 0 picks one from the patch area
  /// Smaller connected components are dropped (fewer patches: cheaper atlas and occupancy) while
  /// what they hold stays within 2 % of a frame's points; components under 8 pixels always.
  unsigned minPatchPixels = 32;
  unsigned maxPasses = 4;         // patch generation passes over points not yet covered
  /// Atlas frames after a sequence's first as P tiles: a patch that shows the same surface as one
  /// of the previous frame is coded as its deltas (INTER) or as a copy (SKIP). The decoded patches
  /// are the same as intra-only coding's; only the atlas sub-bitstream is smaller.
  bool interPrediction = true;
  /// Ask decoders for Rec1 grid geometry smoothing (geometry smoothing SEI in every frame, grid 8,
  /// threshold 64 as in MPEG's common test conditions): smoother patch seams for some decoding
  /// time. The colours coded stay those of the unsmoothed points; decoders recolour moved ones.
  bool geometrySmoothing = false;
  VideoCodec codec = VideoCodec::Avc;
  // AVC occupancy is 0/255 with threshold 127: at QP 36 no sample crosses it (decoded points and
  // PSNR identical to QP 28 on the demo figures, segments 9–10 % smaller); HEVC codes it losslessly.
  int geometryQp = 24, attributeQp = 30, occupancyQp = 36;
  /// Chroma quantiser offset of the attribute video (−12…12, VideoEncodeSettings::chromaQpOffset):
  /// +6 codes colour differences coarser and spends their bits on luma — about 5 % less rate
  /// at equal luma PSNR on CesiumMan all-intra and 1 % on Fox, for a 1.5 dB lower U and V
  /// (docs/benchmarks.md, "the attribute video"). 0: chroma at the luma quantiser.
  int attributeChromaQpOffset = 0;
  /// x264/x265 preset; none: the codec's default (defaultPreset in vpcc/video_encoder.h).
  const char* preset = nullptr;
  /// MPEG's all-intra condition instead of one GOP per sequence: each frame's map 0 picture intra
  /// coded, its map 1 picture predicted from it (VideoEncodeSettings::allIntra); the atlas is
  /// unaffected (its P tiles cost a few bytes and no video quality).
  bool allIntra = false;
  int threads = 1;
  /// Frames per second (1–120), declared in the video sub-bitstreams' timing information
  /// (VideoEncodeSettings::pictureRate).
  unsigned frameRate = 30;
};

/// What the encoder did, for quality reports and benchmarks.
struct EncodeStats {
  size_t frames = 0, inputPoints = 0, coveredPoints = 0, patches = 0;
  uint32_t atlasWidth = 0, atlasHeight = 0;
  size_t atlasBytes = 0, occupancyBytes = 0, geometryBytes = 0, attributeBytes = 0, totalBytes = 0;
  size_t pTiles = 0, interPatches = 0, skipPatches = 0;  // atlas coding (the other patches are INTRA)
  double segmentationMs = 0, videoMs = 0;
  double transferMs = 0;  // decoding the geometry back, reconstructing it, colour transfer
};

/// Encodes frames as one independently decodable V3C sample stream (VPS, atlas, three videos).
/// Throws std::invalid_argument for unusable input (empty frames, coordinates out of range).
std::vector<uint8_t> encodeSequence(const std::vector<InputFrame>& frames, const EncoderConfig& config,
                                    VideoEncoder& video, EncodeStats* stats = nullptr);

}  // namespace vpcc
