// What the encoder's stages hand one another: the patch as segmentation builds it, packing
// places it, and image generation and atlas coding read it; and each stage's entry point.
// Internal to the encoder (src/encoder/); its public interface is vpcc/encoder.h.
//
//   segmentation.cpp      frame → patches (normals, projection planes, connected components)
//   packing.cpp           patches → places in the atlas, kept from frame to frame where they fit
//   empty_pixels.cpp      depths for the pixels no point projected to
//   images.cpp            patches → occupancy, geometry and attribute pictures (padding, colour)
//   atlas_prediction.cpp  a frame's patches as INTRA, or INTER/SKIP against the previous frame
//   atlas_sequence.cpp    parameter sets and one atlas tile layer per frame
//   encoder.cpp           the driver: runs the stages over a sequence and writes the V3C bitstream
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vpcc/atlas.h"
#include "vpcc/encoder.h"
#include "vpcc/reconstruct.h"
#include "vpcc/video.h"

namespace vpcc::encoding {

constexpr uint32_t kBlock = 16;  // patch packing block (log2 = 4)

/// Projection planes 0–5 (projection ids of ISO/IEC 23090-5 Table 11): mode 0 stores the depth
/// above the patch's minimum (surfaces facing −axis), mode 1 below its maximum (facing +axis).
struct Plane6 {
  uint8_t normal, tangent, bitangent, mode;
};
constexpr Plane6 kPlanes[6] = {{0, 2, 1, 0}, {1, 2, 0, 0}, {2, 0, 1, 0}, {0, 2, 1, 1}, {1, 2, 0, 1}, {2, 0, 1, 1}};

/// A patch as the encoder builds it: depths per pixel of its block-rounded rectangle. (Colours
/// are not kept here: they are transferred onto the decoded geometry later.)
struct EncPatch {
  uint8_t plane = 0;
  uint32_t tangentMin = 0, bitangentMin = 0;  // in LoD pixels
  int32_t minDepth = 0;                        // minimum of the plane's depth coordinate s
  uint32_t width = 0, height = 0;              // pixels (block-rounded)
  std::vector<int16_t> nearDepth, farDepth;    // −1 where no point projects
  std::vector<uint8_t> occupied;               // pixels a point projected to (before filling)
  Patch placement;                             // position/orientation in the atlas (blocks)
  int reference = -1;                          // the previous frame's patch of the same surface, or −1
  size_t pixels = 0;
  bool pixelOccupied(uint32_t u, uint32_t v) const { return occupied[size_t(v) * width + u] != 0; }
};

/// A frame's patches, and how many of its points they code.
struct FramePatches {
  std::vector<EncPatch> patches;
  size_t covered = 0;
};

// ------------------------------------------------------------------ segmentation.cpp

/// The patches of one frame, unplaced; their depth rectangles keep holes until fillPatch.
FramePatches generatePatches(const InputFrame& frame, const EncoderConfig& cfg);

// ------------------------------------------------------------------ packing.cpp

/// Matches `patches` with `previous` (their `reference`) and orders them for prediction;
/// `videoAcrossFrames`: the videos predict a frame's pictures from the previous frame's.
void orderForPrediction(std::vector<EncPatch>& patches, const std::vector<EncPatch>& previous, bool videoAcrossFrames);
/// Places every patch in an atlas `widthBlocks` wide, the sequence's atlas `rowsSoFar` blocks high
/// until now; returns the height used, in blocks.
uint32_t packPatches(std::vector<EncPatch>& patches, const std::vector<EncPatch>* previous, uint32_t widthBlocks,
                     uint32_t rowsSoFar, bool videoAcrossFrames);

// ------------------------------------------------------------------ images.cpp

/// Fills the empty pixels of a patch's depth rectangle from their nearest filled pixel.
void fillPatch(EncPatch& p);

// ------------------------------------------------------------------ empty_pixels.cpp

/// Depths for every patch's empty pixels (fillPatch, then source points for those the decoder
/// will reconstruct as points; far layer equal to near).
void fillEmptyPixels(std::vector<EncPatch>& patches, const InputFrame& frame, const EncoderConfig& cfg);
/// Whether the occupancy video is coded losslessly, and the threshold its decoder applies.
bool losslessOccupancy(const EncoderConfig& cfg);
uint32_t occupancyThreshold(const EncoderConfig& cfg);

/// Occupancy and geometry pictures of one frame.
struct GeometryImages {
  Picture occupancy;
  std::vector<Picture> geometry;  // per map
  std::vector<uint8_t> emptyBlocks;  // per kRepeatBlock² block (row by row): no depth there is read
};

/// The occupancy picture and a geometry picture per map of one frame's placed patches.
GeometryImages renderGeometry(const std::vector<EncPatch>& patches, uint32_t width, uint32_t height, const EncoderConfig& cfg);
/// Side of the attribute blocks repeated from the picture before (repeatEmptyBlocks): 8, HEVC's
/// smallest coding unit; 16 and 4 gained less (docs/benchmarks.md, "the attribute video", A4).
constexpr uint32_t kRepeatBlock = 8;

/// One frame's attribute pictures (one per map), and per picture which kRepeatBlock² blocks
/// (row by row) hold no pixel the decoder reads.
struct AttributeImages {
  std::vector<Picture> pictures;
  std::vector<std::vector<uint8_t>> emptyBlocks;
};

/// The attribute pictures (one per map) carrying `colours`, one RGB triple per decoded point.
AttributeImages renderAttributes(const PointCloudFrame& decoded, const std::vector<float>& colours, uint32_t width,
                                 uint32_t height, unsigned mapCount);
/// Padding for intra coding: each empty kRepeatBlock² block (chroma: its 4:2:0 share) repeats
/// the sample row just above it down the block (the top row of blocks: the sample column to its
/// left across), in raster order, so empty areas continue their upper neighbours' edge. HEVC's
/// vertical and horizontal intra modes predict such a block exactly from its reconstructed
/// neighbours, where push-pull's flat means left a step at every block edge; on CesiumMan's
/// all-intra map-0 pictures luma rate −5.5 % and chroma −8 % at equal PSNR of the occupied
/// pixels (docs/benchmarks.md, "the attribute video", A5). The encoder applies it to the intra
/// pictures of all-intra coding only (each frame's map 0).
void extendIntoEmptyBlocks(Picture& picture, const std::vector<uint8_t>& emptyBlocks);
/// Gives the empty blocks of each inter-coded picture (every picture but the first of each
/// `intraPeriod`, in coding order) the previous picture's samples, so that padding which no
/// point reads stays the same from picture to picture and the video codec skips it, instead of
/// following each picture's push-pull means.
void repeatEmptyBlocks(std::vector<Picture>& pictures, const std::vector<std::vector<uint8_t>>& emptyBlocks, size_t intraPeriod);

// ------------------------------------------------------------------ atlas_prediction.cpp

/// A placed patch as an INTRA patch data unit (absolute parameters).
PatchDataUnit intraPatch(const EncPatch& p, const EncoderConfig& cfg);
/// Bits of a tile's patch data units as the writer codes them.
size_t tileBits(const std::vector<PatchDataUnit>& patches, TileType type, const EncoderConfig& cfg);
/// A frame's patches (`intra`) coded in a P tile against the previous frame's.
std::vector<PatchDataUnit> predictTile(const std::vector<PatchDataUnit>& intra, const std::vector<int>& reference,
                                       const std::vector<PatchDataUnit>& previous, const EncoderConfig& cfg);

// ------------------------------------------------------------------ atlas_sequence.cpp

/// The sequence's parameter sets and atlas tile layers, before attribute information and videos.
CodedSequence describeSequence(const std::vector<FramePatches>& framePatches, const EncoderConfig& cfg, uint32_t width,
                               uint32_t height, EncodeStats& stats);

}  // namespace vpcc::encoding
