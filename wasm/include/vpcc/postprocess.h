// Post-processing of a reconstructed frame as the reconstruction profile and the SEI ask
// (ISO/IEC 23090-5 Annex H, reconstruction profile Rec1), matching the reference decoder
// (TMC2) bit-exactly — its post-processed frame checksums are the conformance point:
//  1. grid geometry smoothing (geometry smoothing SEI, method 1): boundary points whose cell
//     neighbourhood mixes patches move to the trilinearly interpolated centroid of the 2×2×2
//     surrounding grid cells when far enough from it;
//  2. colour transfer to the moved points: forward (8 nearest points of the unsmoothed frame,
//     distance-weighted) and backward (unsmoothed points whose nearest smoothed point is the
//     moved one and of nearly equal colour) in 16-bit Y'CbCr; nearest neighbours are searched
//     with the reference's k-d tree order so that ties resolve identically;
//  3. attribute smoothing (attribute smoothing SEI, Rec1 and Rec2): a boundary point near cells
//     whose points come from different patches takes the trilinear blend of the 2×2×2
//     surrounding cells' mean colours when its luma differs enough from it; cells whose luma
//     mean and median disagree (texture, not a seam) or whose luma is far from the point's own
//     cell stay out of the blend. As TMC2 does it: cells of the occupancy precision's size (not
//     the SEI's grid size, which TMC2 reads but does not use), 16-bit Y'CbCr, points moved by
//     step 1 left alone;
//  4. back to 8-bit RGB.
// No conformance stream of ../shared uses SEI 67, so step 3 follows TMC2's code but has no
// TMC2 checksum to match yet.
#pragma once

#include "vpcc/atlas.h"
#include "vpcc/parser.h"
#include "vpcc/reconstruct.h"

namespace vpcc {

struct PostProcessReport {
  bool geometrySmoothed = false;
  size_t movedPoints = 0;
  bool attributesSmoothed = false;
  size_t recolouredPoints = 0;
  /// The frame asks for Rec2's occupancy synthesis (patch border filtering, SEI 65), which this
  /// decoder does not apply yet: the frame is then not the one a conforming Rec2 decoder makes.
  bool occupancySynthesisSkipped = false;
};

/// Most cells a geometry smoothing grid may have (cells of the grid size a side up to the
/// frame's largest coordinate, plus one per axis): a larger one is refused with a ParseError
/// before anything is allocated for it. 10-bit geometry with TMC2's 8-voxel cells needs 129³.
constexpr size_t kMaxGeometrySmoothingGridCells = size_t(1) << 25;

/// Geometry smoothing parameters in effect for a frame (from its SEI and the profile), if any.
struct GridSmoothingParams {
  uint32_t gridSize = 8;
  uint32_t threshold = 64;
};
bool gridSmoothingFor(const CodedSequence& seq, const DecodedAtlasFrame& frame, GridSmoothingParams& params);

/// Attribute smoothing thresholds in effect for a frame (the SEI's last live instance), if any.
struct AttributeSmoothingParams {
  /// Least luma change, in 10/256 steps of the 16-bit value, for a point to take the blend.
  uint32_t threshold = 0;
  /// Largest |mean − median| of a cell's luma, in 256ths, for the cell to join the blend.
  uint32_t thresholdVariation = 0;
  /// Largest luma difference from the point's own cell, in 256ths, for a cell to join.
  uint32_t thresholdDifference = 0;
};
bool attributeSmoothingFor(const CodedSequence& seq, const DecodedAtlasFrame& frame, AttributeSmoothingParams& params);

/// The post-processed frame (the input is what reconstructFrame returned for `frame`).
PointCloudFrame postProcess(const CodedSequence& seq, const DecodedAtlasFrame& frame, const PointCloudFrame& input,
                            PostProcessReport* report = nullptr);
/// The same, reusing the input's arrays (no copy of the frame).
PointCloudFrame postProcess(const CodedSequence& seq, const DecodedAtlasFrame& frame, PointCloudFrame&& input,
                            PostProcessReport* report = nullptr);

/// The two steps on their own (exposed for tests and tools).
/// Smooths positions in place; marks moved points (1) in `moved`. Needs input.boundary/patchIndex.
size_t smoothGeometryGrid(PointCloudFrame& frame, const GridSmoothingParams& params, std::vector<uint8_t>& moved);
/// Recolours the moved points of `target` (16-bit colours) from `source` (the frame before smoothing).
void transferColors(const PointCloudFrame& source, PointCloudFrame& target, const std::vector<uint8_t>& moved);
/// Smooths the 16-bit colours of boundary points not in `moved` (empty: none moved); marks the
/// changed ones in `recoloured`. Needs frame.boundary/patchIndex/occupancyPrecision/bitDepth3d.
size_t smoothAttributesGrid(PointCloudFrame& frame, const AttributeSmoothingParams& params,
                            const std::vector<uint8_t>& moved, std::vector<uint8_t>& recoloured);

}  // namespace vpcc
