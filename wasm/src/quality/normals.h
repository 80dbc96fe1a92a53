// Normals for D2 (point-to-plane): estimated on the source when it carries none, and carried
// over from the source to the decoded cloud the way pc_error derives the decoded cloud's normals.
#pragma once

#include <array>
#include <vector>

#include "nearest.h"

namespace vpcc::quality {

using Normals = std::vector<std::array<double, 3>>;

/// Unit normal of each point: the direction of least spread (smallest eigenvector of the
/// covariance) of its `neighbours` nearest points, itself included; oriented away from the
/// cloud's centre (largest component positive when the normal lies across that direction).
Normals estimateNormals(const Points& points, const NearestSearch& search, unsigned neighbours);

/// The decoded cloud's normals from the source's (pc_error's derivation): every source point adds
/// its normal to each decoded point nearest to it (all of those tied at the smallest distance);
/// a decoded point that received any takes their mean (not re-normalised), one that received none
/// the mean normal of its own nearest source points (ties likewise).
Normals transferNormals(const Points& source, const Normals& sourceNormals, const NearestSearch& sourceSearch,
                        const Points& decoded, const NearestSearch& decodedSearch);

}  // namespace vpcc::quality
