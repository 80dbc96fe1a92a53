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
//  3. back to 8-bit RGB.
// Attribute smoothing (SEI 67) is not implemented yet (no conformance stream uses it); frames
// that ask for it are returned after steps 1–3 and `attributeSmoothingSkipped` is set.
#pragma once

#include "vpcc/atlas.h"
#include "vpcc/parser.h"
#include "vpcc/reconstruct.h"

namespace vpcc {

struct PostProcessReport {
  bool geometrySmoothed = false;
  size_t movedPoints = 0;
  bool attributeSmoothingSkipped = false;
};

/// Geometry smoothing parameters in effect for a frame (from its SEI and the profile), if any.
struct GridSmoothingParams {
  uint32_t gridSize = 8;
  uint32_t threshold = 64;
};
bool gridSmoothingFor(const CodedSequence& seq, const DecodedAtlasFrame& frame, GridSmoothingParams& params);

/// The post-processed frame (the input is what reconstructFrame returned for `frame`).
PointCloudFrame postProcess(const CodedSequence& seq, const DecodedAtlasFrame& frame, const PointCloudFrame& input,
                            PostProcessReport* report = nullptr);

/// The two steps on their own (exposed for tests and tools).
/// Smooths positions in place; marks moved points (1) in `moved`. Needs input.boundary/patchIndex.
size_t smoothGeometryGrid(PointCloudFrame& frame, const GridSmoothingParams& params, std::vector<uint8_t>& moved);
/// Recolours the moved points of `target` (16-bit colours) from `source` (the frame before smoothing).
void transferColors(const PointCloudFrame& source, PointCloudFrame& target, const std::vector<uint8_t>& moved);

}  // namespace vpcc
