// Point cloud reconstruction from decoded atlas frames and video pictures (ISO/IEC 23090-5
// §9.x and Annex H): occupancy, block-to-patch map, projected points from one or two geometry
// maps, duplicate removal, 45° planes, colours from the attribute maps.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "vpcc/atlas.h"
#include "vpcc/video.h"

namespace vpcc {

/// A reconstructed frame: positions and RGB colours in flat arrays (what the renderer uploads).
struct PointCloudFrame {
  std::vector<int16_t> positions;  // x, y, z per point
  std::vector<uint8_t> colors;     // r, g, b per point
  /// Y, Cb, Cr per point at 16 bits (chroma offset 32768): the precision post-processing works
  /// in (empty when the sequence has no attribute). With `rgbColours`, R, G, B samples as coded.
  std::vector<uint16_t> colors16;
  /// The attribute video is 4:4:4, which the reference decoder takes as GBR-coded RGB: colours16
  /// hold R, G, B at the video's bit depth and become 8-bit by a plain cast, with no Y'CbCr.
  bool rgbColours = false;
  /// Per point, filled only when the frame's SEI asks for geometry or attribute smoothing (what
  /// they need):
  /// whether the point's pixel is a patch boundary pixel (within two pixels of an unoccupied
  /// pixel or of the tile border), and the index of its patch in its tile.
  std::vector<uint8_t> boundary;
  std::vector<uint32_t> patchIndex;
  /// Per point, filled only when reconstructFrame is asked to record pixels (the encoder does, to
  /// write colours back where the decoder will read them): its atlas pixel (y · width + x) and
  /// the map it was read from.
  std::vector<uint32_t> pixel;
  std::vector<uint8_t> map;
  uint32_t projectedPoints = 0, rawPoints = 0, eomPoints = 0;
  /// Atlas pixels per occupancy-map sample, and the 3D coordinate bit depth (the grid attribute
  /// smoothing works on: TMC2 sizes its cells by the occupancy precision).
  uint32_t occupancyPrecision = 1;
  uint32_t bitDepth3d = 10;
  size_t size() const { return positions.size() / 3; }
};

/// The decoded video of one sequence, by component, in output order.
struct DecodedVideo {
  std::vector<Picture> occupancy;
  std::vector<Picture> geometry[4];   // per map (map 0 only when maps are interleaved in one stream)
  std::vector<Picture> attribute[4];  // first attribute, per map
  /// Auxiliary videos (raw points' coordinates and colours, EOM points' colours, when the ASPS
  /// puts them there).
  std::vector<Picture> auxiliaryGeometry, auxiliaryAttribute;
  bool mapsInterleaved = true;        // one stream carries map 0 and map 1 of each frame alternately
};

/// Decodes the video sub-bitstreams of a sequence with `decoder`.
DecodedVideo decodeVideo(const CodedSequence& seq, VideoDecoder& decoder);

/// Reconstructs one frame before post-processing (TMC2's "pcframe" conformance point).
/// A sequence without attribute information yields geometry only (colours left grey).
PointCloudFrame reconstructFrame(const CodedSequence& seq, const DecodedAtlasFrame& atlas,
                                 const DecodedVideo& video, bool recordPixels = false);

/// The 8-bit RGB colours of points [first, end) from their 16-bit ones (Y'CbCr → RGB, or a plain
/// cast for `rgbColours`).
void toRgb8(PointCloudFrame& frame, size_t first, size_t end);

/// TMC2's conformance checksum of a frame: points sorted by (x, y, z), duplicates merged with the
/// truncated mean colour, MD5 over int16 positions then uint8 colours.
std::string frameMd5(const PointCloudFrame& frame);

}  // namespace vpcc
