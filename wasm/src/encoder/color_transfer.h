// Colour transfer from a source frame to the geometry the decoder will reconstruct.
//
// Geometry coding moves points (quantised depths, block-precision occupancy, level of detail),
// so the colour a point carried in the source belongs to a position the decoder no longer has.
// Quality is judged both ways, as pc_error judges it: every decoded point against its nearest
// source point (forward) and every source point against its nearest decoded point (backward),
// after decoded points at one position are merged into one (their mean colour), and with the
// colours of every point tied at the nearest distance averaged. The colours here minimise the
// sum of the two mean squared errors under exactly those rules:
//   - targets at one position form one group and get one colour (the merged point's);
//   - forward: a group's colour is pulled towards the mean colour of its nearest source points,
//     weight 1 / group count;
//   - backward: each source point pulls the MEAN of the groups tied nearest to it towards its
//     own colour, weight 1 / source count.
// Without ties this is a weighted mean per group (the idea of the reference encoder's
// recolouring — forward neighbours plus backward votes — in closed form). A source point with
// several tied groups couples them: the least-squares system is solved by a few Gauss–Seidel
// sweeps started from the votes shared equally between the tied groups. (The mean is the same
// in RGB and Y'CbCr: the conversion is linear.)
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "voxel_index.h"

namespace vpcc {

/// Gauss–Seidel sweeps over the coupled least-squares system. Measured on the shared sequences
/// (docs/benchmarks.md, "the attribute video", A3): 4 and 12 sweeps give the same streams'
/// luma within 0.01 dB, so 4.
constexpr int kTransferSweeps = 4;

/// RGB (float, 0–255) for each of `targetCount` target points from the coloured source points.
template <typename SourceCoordinate, typename TargetCoordinate>
std::vector<float> transferColours(const SourceCoordinate* sourcePositions, const uint8_t* sourceColours,
                                   size_t sourceCount, const TargetCoordinate* targetPositions, size_t targetCount) {
  std::vector<float> colours(targetCount * 3, 0.f);
  if (targetCount == 0 || sourceCount == 0) return colours;
  const VoxelIndex sources(sourcePositions, sourceCount), targets(targetPositions, targetCount);
  auto position = [](const auto* xyz, size_t i, int32_t q[3]) {
    for (int d = 0; d < 3; ++d) q[d] = int32_t(xyz[i * 3 + d]);
  };

  // Each target's group: the smallest index among the targets at its position.
  std::vector<uint32_t> group(targetCount), groups;
  for (size_t t = 0; t < targetCount; ++t) {
    int32_t q[3];
    position(targetPositions, t, q);
    uint32_t first = uint32_t(t);
    targets.nearest(q, [&](uint32_t other) { first = std::min(first, other); });
    group[t] = first;
    if (first == t) groups.push_back(first);
  }

  // Backward pairings: the distinct groups tied nearest to each source point (compressed rows),
  // then the same pairs by group.
  std::vector<uint32_t> tiedBegin(sourceCount + 1, 0), tied;
  tied.reserve(sourceCount + sourceCount / 2);
  for (size_t s = 0; s < sourceCount; ++s) {
    int32_t q[3];
    position(sourcePositions, s, q);
    const size_t begin = tied.size();
    targets.nearest(q, [&](uint32_t t) {
      if (std::find(tied.begin() + begin, tied.end(), group[t]) == tied.end()) tied.push_back(group[t]);
    });
    tiedBegin[s + 1] = uint32_t(tied.size());
  }
  std::vector<uint32_t> votersBegin(targetCount + 1, 0), voters(tied.size());
  for (uint32_t g : tied) ++votersBegin[g + 1];
  for (size_t t = 0; t < targetCount; ++t) votersBegin[t + 1] += votersBegin[t];
  {
    std::vector<uint32_t> next(votersBegin.begin(), votersBegin.end() - 1);
    for (size_t s = 0; s < sourceCount; ++s)
      for (uint32_t k = tiedBegin[s]; k < tiedBegin[s + 1]; ++k) voters[next[tied[k]]++] = uint32_t(s);
  }
  auto tiedCount = [&](uint32_t s) { return float(tiedBegin[s + 1] - tiedBegin[s]); };

  // Forward colours per group, the diagonal of the normal equations, and the start: each source
  // point's vote shared equally between its tied groups.
  const float forwardWeight = 1.f / float(groups.size()), backwardWeight = 1.f / float(sourceCount);
  std::vector<float> forward(targetCount * 3, 0.f), diagonal(targetCount, 0.f);
  for (uint32_t g : groups) {
    int32_t q[3];
    position(targetPositions, g, q);
    unsigned nearestCount = 0;
    sources.nearest(q, [&](uint32_t s) {
      for (int c = 0; c < 3; ++c) forward[size_t(g) * 3 + c] += sourceColours[size_t(s) * 3 + c];
      ++nearestCount;
    });
    float sum[3], weight = forwardWeight;
    for (int c = 0; c < 3; ++c) sum[c] = forwardWeight * (forward[size_t(g) * 3 + c] /= float(nearestCount));
    diagonal[g] = forwardWeight;
    for (uint32_t k = votersBegin[g]; k < votersBegin[g + 1]; ++k) {
      const uint32_t s = voters[k];
      const float share = backwardWeight / tiedCount(s);
      for (int c = 0; c < 3; ++c) sum[c] += share * sourceColours[size_t(s) * 3 + c];
      weight += share;
      diagonal[g] += share / tiedCount(s);
    }
    for (int c = 0; c < 3; ++c) colours[size_t(g) * 3 + c] = sum[c] / weight;
  }

  // Gauss–Seidel on the normal equations of
  //   Σ_g forwardWeight·|c_g − forward_g|² + Σ_s backwardWeight·|colour_s − mean of c over s's tied groups|².
  for (int sweep = 0; sweep < kTransferSweeps; ++sweep)
    for (uint32_t g : groups) {
      float sum[3];
      for (int c = 0; c < 3; ++c) sum[c] = forwardWeight * forward[size_t(g) * 3 + c];
      for (uint32_t k = votersBegin[g]; k < votersBegin[g + 1]; ++k) {
        const uint32_t s = voters[k];
        const float n = tiedCount(s);
        float others[3] = {0, 0, 0};
        for (uint32_t j = tiedBegin[s]; j < tiedBegin[s + 1]; ++j)
          if (tied[j] != g)
            for (int c = 0; c < 3; ++c) others[c] += colours[size_t(tied[j]) * 3 + c];
        for (int c = 0; c < 3; ++c) sum[c] += backwardWeight / n * (float(sourceColours[size_t(s) * 3 + c]) - others[c] / n);
      }
      // Clamped to the range the pictures can carry, so a neighbour's update sees what is coded.
      for (int c = 0; c < 3; ++c) colours[size_t(g) * 3 + c] = std::min(255.f, std::max(0.f, sum[c] / diagonal[g]));
    }

  for (size_t t = 0; t < targetCount; ++t)
    if (group[t] != t)
      for (int c = 0; c < 3; ++c) colours[t * 3 + c] = colours[size_t(group[t]) * 3 + c];
  return colours;
}

}  // namespace vpcc
