// Colour transfer from a source frame to the geometry the decoder will reconstruct.
//
// Geometry coding moves points (quantised depths, block-precision occupancy, level of detail),
// so the colour a point carried in the source belongs to a position the decoder no longer has.
// Quality is judged both ways (pc_error): every decoded point against its nearest source point
// (forward) and every source point against its nearest decoded point (backward). Given those
// nearest-neighbour pairings, the colour of a decoded point that minimises the sum of the two
// mean squared errors is a weighted mean of
//   - the colour of its nearest source point(s) (ties averaged), weight 1 / decoded count, and
//   - the colours of the source points whose nearest decoded point it is, each 1 / source count.
// (The mean is the same in RGB and Y'CbCr: the conversion is linear.) This is the idea of the
// reference encoder's recolouring — forward neighbours plus backward votes — in closed form.
#pragma once

#include <cstdint>
#include <vector>

#include "voxel_index.h"

namespace vpcc {

/// RGB (float, 0–255) for each of `targetCount` target points from the coloured source points.
template <typename SourceCoordinate, typename TargetCoordinate>
std::vector<float> transferColours(const SourceCoordinate* sourcePositions, const uint8_t* sourceColours,
                                   size_t sourceCount, const TargetCoordinate* targetPositions, size_t targetCount) {
  std::vector<float> colours(targetCount * 3, 0.f);
  if (targetCount == 0 || sourceCount == 0) return colours;
  const VoxelIndex sources(sourcePositions, sourceCount), targets(targetPositions, targetCount);

  // Backward votes: each source point adds its colour to its nearest target (the first of ties).
  std::vector<float> voteSum(targetCount * 3, 0.f);
  std::vector<uint32_t> votes(targetCount, 0);
  for (size_t s = 0; s < sourceCount; ++s) {
    const int32_t q[3] = {int32_t(sourcePositions[s * 3]), int32_t(sourcePositions[s * 3 + 1]), int32_t(sourcePositions[s * 3 + 2])};
    bool taken = false;
    targets.nearest(q, [&](uint32_t t) {
      if (taken) return;
      taken = true;
      for (int c = 0; c < 3; ++c) voteSum[size_t(t) * 3 + c] += sourceColours[s * 3 + c];
      ++votes[t];
    });
  }

  const float forwardWeight = 1.f / float(targetCount), backwardWeight = 1.f / float(sourceCount);
  for (size_t t = 0; t < targetCount; ++t) {
    const int32_t q[3] = {int32_t(targetPositions[t * 3]), int32_t(targetPositions[t * 3 + 1]), int32_t(targetPositions[t * 3 + 2])};
    float forward[3] = {0, 0, 0};
    unsigned tied = 0;
    sources.nearest(q, [&](uint32_t s) {
      for (int c = 0; c < 3; ++c) forward[c] += sourceColours[size_t(s) * 3 + c];
      ++tied;
    });
    const float f = forwardWeight / float(tied);
    const float total = forwardWeight + backwardWeight * float(votes[t]);
    for (int c = 0; c < 3; ++c) colours[t * 3 + c] = (f * forward[c] + backwardWeight * voteSum[t * 3 + c]) / total;
  }
  return colours;
}

}  // namespace vpcc
