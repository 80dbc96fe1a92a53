// A decoding session for callers that decode video themselves (the browser's WebCodecs, or a
// test feeding pictures dumped by the native build): load a segment, learn which video
// sub-bitstreams to decode, hand the decoded pictures back one by one, reconstruct each frame
// as soon as its pictures are in, then release them. Only the pictures of frames not yet
// released are held, so memory follows the decoder's look-ahead, not the segment length.
//
// The C API of the Emscripten module (src/decoder/api_c.cpp) is a thin layer over this class;
// the native CLI uses the same stream list to dump pictures for the wasm conformance test.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "vpcc/atlas.h"
#include "vpcc/limits.h"
#include "vpcc/parser.h"
#include "vpcc/reconstruct.h"
#include "vpcc/video.h"

namespace vpcc {

enum class Component : uint8_t { Occupancy = 0, Geometry = 1, Attribute = 2 };

/// One video sub-bitstream the caller must decode, in the order the segment stores them.
struct VideoStreamInfo {
  uint32_t sequence = 0;     // coded sequence of the segment it belongs to
  Component component = Component::Occupancy;
  bool auxiliary = false;    // an auxiliary video (raw points), sized by the encoder
  uint8_t map = 0;           // map index of the stream (0 when the maps are interleaved in it)
  uint8_t picturesPerFrame = 1;  // 2 when two maps alternate in one stream
  VideoCodec codec = VideoCodec::Hevc;
  uint8_t bitDepth = 8;      // nominal bit depth pictures are converted to
  uint32_t pictureCount = 0; // pictures expected, in output order
  uint32_t firstFrame = 0;   // segment-wide index of the sequence's first frame
  const VideoSubBitstream* bitstream = nullptr;  // coded NAL units, 4-byte length-prefixed
};

/// Decoded samples of one picture as a video decoder produced them: three planes of 8-bit or
/// 16-bit (little-endian, in the low bits) containers at `decodedBitDepth`, with strides in
/// samples. 4:2:0 chroma planes are ceil(width/2) × ceil(height/2); with `chromaInterleaved`
/// (NV12, what hardware decoders give) planes[1] holds U,V pairs and planes[2] is unused.
struct PictureInput {
  uint32_t width = 0, height = 0;
  bool sixteenBitSamples = false;
  uint8_t decodedBitDepth = 8;
  bool chroma444 = false;
  bool chromaInterleaved = false;
  const void* planes[3] = {nullptr, nullptr, nullptr};
  uint32_t strides[3] = {0, 0, 0};
};

/// One patch of a frame as a GPU reconstruction path needs it (fixed layout of 20 int32).
struct PatchRecord {
  int32_t tileX, tileY;              // tile position in the atlas, pixels
  int32_t u0, v0, sizeU0, sizeV0;    // 2D position and size in the tile, packing blocks
  int32_t u1, v1, d1, sizeD;         // 3D offsets (tangent, bitangent, normal) and depth range
  int32_t normalAxis, tangentAxis, bitangentAxis;
  int32_t projectionMode, orientation, axisOfAdditionalPlane;
  int32_t lodX, lodY;
  int32_t sizeXPixels, sizeYPixels;  // exact size when the patch size quantizer is used, else 0
};
static_assert(sizeof(PatchRecord) == 20 * sizeof(int32_t), "PatchRecord is read as 20 int32 from JS");

/// What a per-pixel (GPU) reconstruction of a frame needs besides its pictures, patches and
/// block-to-patch map (fixed layout of 12 int32, read from JS).
struct ReconstructionParams {
  int32_t atlasWidth, atlasHeight, blockSize;
  int32_t mapCount;          // geometry (and attribute) maps, 1 or 2
  int32_t absoluteD1;        // map 1 holds absolute depths (else a delta to map 0)
  int32_t removeDuplicates;  // a map-1 point equal to its map-0 point is dropped
  int32_t sizeQuantizer;     // patches carry their exact size in pixels (sizeXPixels, sizeYPixels)
  int32_t lossyThreshold;    // an occupancy sample above it is occupied
  int32_t bitDepth3d;        // geometry coordinate bit depth (45° planes)
  int32_t hasAttribute;
  /// Tools a per-pixel reconstruction cannot express: bit 0 point local reconstruction, bit 1
  /// pixel deinterleaving, bit 2 EOM patches.
  int32_t unsupported;
  /// Post-processing the stream asks for, which only the CPU path applies: bit 0 geometry
  /// smoothing, bit 1 attribute smoothing, bit 2 occupancy synthesis.
  int32_t postProcessing;
};
static_assert(sizeof(ReconstructionParams) == 12 * sizeof(int32_t), "ReconstructionParams is read as 12 int32 from JS");

class DecodeSession {
 public:
  /// Parses a segment and decodes its atlas; forgets the previous segment. Throws ParseError.
  void load(const uint8_t* data, size_t size);
  /// The V3C level (ptl_level_idc; 0: none) the manifest declares for the segments loaded from
  /// now on: `load` refuses one whose atlas exceeds that level's MaxAtlasSize while parsing,
  /// before anything sized by the atlas is allocated (limits.h).
  void setManifestLevel(uint8_t levelIdc) { manifestLevel_ = levelIdc; }

  const std::vector<VideoStreamInfo>& streams() const { return streams_; }
  uint32_t frameCount() const { return uint32_t(frames_.size()); }

  /// Stores picture `index` (output order) of stream `stream`, converted to the stream's nominal
  /// bit depth. Throws ParseError when it does not fit what the stream needs (index, size,
  /// bit depth), so a corrupt video cannot make reconstruction read out of bounds.
  void putPicture(uint32_t stream, uint32_t index, const PictureInput& input);
  /// The stored picture (empty when not given or released).
  const Picture& picture(uint32_t stream, uint32_t index) const;

  /// Whether every picture frame `frame` needs has been given.
  bool frameReady(uint32_t frame) const;
  /// Reconstructs a frame (post-processed when `postProcess` and the stream asks for it) into
  /// `lastFrame()`. Throws ParseError when pictures are missing or the data is inconsistent.
  const PointCloudFrame& reconstruct(uint32_t frame, bool postProcess);
  const PointCloudFrame& lastFrame() const { return output_; }
  /// Frees the pictures of a frame (reconstruct it first), and `lastFrame()` when it is this
  /// frame's: read its points before.
  void releaseFrame(uint32_t frame);

  /// Caps the bytes of decoded pictures held at once (16-bit samples, all planes; default
  /// kDefaultPictureBudgetBytes). A picture that would take the session past it is refused with
  /// a ParseError before its samples are allocated: release frames to make room.
  void setPictureBudget(size_t bytes) { pictureBudget_ = bytes; }
  size_t heldPictureBytes() const { return heldPictureBytes_; }

  /// Patches of a frame, every tile, in coding order.
  std::vector<PatchRecord> patches(uint32_t frame) const;
  /// Everything else a per-pixel reconstruction of a frame needs.
  ReconstructionParams reconstructionParams(uint32_t frame) const;
  /// Packing block size of a frame, in pixels.
  uint32_t blockSize(uint32_t frame) const;
  /// Block-to-patch map of a frame over the whole atlas (blocks wide × blocks high): 0 for no
  /// patch, else 1 + the index into patches(frame). Needs the frame's occupancy picture.
  std::vector<uint32_t> blockToPatch(uint32_t frame) const;
  uint32_t atlasWidth(uint32_t frame) const;
  uint32_t atlasHeight(uint32_t frame) const;

 private:
  struct FrameRef {
    uint32_t sequence, atlasFrame;
  };
  struct SequenceState {
    std::vector<DecodedAtlasFrame> atlas;
    DecodedVideo video;
  };
  std::vector<Picture>& slots(uint32_t stream);
  const std::vector<Picture>& slots(uint32_t stream) const;
  const FrameRef& frameRef(uint32_t frame) const;
  /// The (stream, picture index) pairs frame `frame` needs.
  std::vector<std::pair<uint32_t, uint32_t>> picturesOf(uint32_t frame) const;

  std::vector<CodedSequence> sequences_;  // never resized after load: atlas frames point into it
  std::vector<SequenceState> states_;
  std::vector<VideoStreamInfo> streams_;
  std::vector<FrameRef> frames_;
  PointCloudFrame output_;
  uint32_t outputFrame_ = UINT32_MAX;  // the frame output_ holds (none: UINT32_MAX)
  uint8_t manifestLevel_ = 0;
  size_t pictureBudget_ = kDefaultPictureBudgetBytes;
  size_t heldPictureBytes_ = 0;  // samples of every stored picture, in bytes
};

}  // namespace vpcc
