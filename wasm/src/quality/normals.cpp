// Normals for D2: PCA estimation on the source, and pc_error's transfer to the decoded cloud.
#include "normals.h"

#include <cmath>

#include "common/eigen.h"

namespace vpcc::quality {

namespace {

/// Flips `n` to point away from the cloud's centre, or when it lies across that direction, so
/// that its largest component is positive: neighbours' normals then agree in sign, and the
/// transfer to the decoded cloud, which sums them, never cancels two of them.
void orient(std::array<double, 3>& n, const std::array<double, 3>& p, const double centre[3]) {
  const double outward = n[0] * (p[0] - centre[0]) + n[1] * (p[1] - centre[1]) + n[2] * (p[2] - centre[2]);
  int largest = 0;
  for (int c = 1; c < 3; ++c)
    if (std::fabs(n[c]) > std::fabs(n[largest])) largest = c;
  if (outward < -1e-9 || (std::fabs(outward) <= 1e-9 && n[largest] < 0))
    for (double& v : n) v = -v;
}

}  // namespace

Normals estimateNormals(const Points& points, const NearestSearch& search, unsigned neighbours) {
  Normals out(points.xyz.size(), {0, 0, 1});
  double centre[3] = {0, 0, 0};
  for (const auto& p : points.xyz)
    for (int c = 0; c < 3; ++c) centre[c] += p[c] / double(points.xyz.size());
  for (size_t i = 0; i < points.xyz.size(); ++i) {
    const Neighbours n = search.closest(points.xyz[i], neighbours);
    if (n.count < 3) continue;  // no plane through fewer than three points: keep +z
    double mean[3] = {0, 0, 0};
    for (size_t j = 0; j < n.count; ++j)
      for (int c = 0; c < 3; ++c) mean[c] += points.xyz[n.index[j]][c] / double(n.count);
    double cov[3][3] = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
    for (size_t j = 0; j < n.count; ++j) {
      const auto& p = points.xyz[n.index[j]];
      const double d[3] = {p[0] - mean[0], p[1] - mean[1], p[2] - mean[2]};
      for (int r = 0; r < 3; ++r)
        for (int c = 0; c < 3; ++c) cov[r][c] += d[r] * d[c];
    }
    out[i] = smallestEigenvector(cov);
    orient(out[i], points.xyz[i], centre);
  }
  return out;
}

Normals transferNormals(const Points& source, const Normals& sourceNormals, const NearestSearch& sourceSearch,
                        const Points& decoded, const NearestSearch& decodedSearch) {
  Normals out(decoded.xyz.size(), {0, 0, 0});
  std::vector<unsigned> received(decoded.xyz.size(), 0);
  for (size_t i = 0; i < source.xyz.size(); ++i) {
    const Neighbours n = decodedSearch.nearestTied(source.xyz[i]);
    for (size_t j = 0; j < n.tied; ++j) {
      for (int c = 0; c < 3; ++c) out[n.index[j]][c] += sourceNormals[i][c];
      ++received[n.index[j]];
    }
  }
  for (size_t i = 0; i < decoded.xyz.size(); ++i) {
    if (received[i] > 0) {
      for (int c = 0; c < 3; ++c) out[i][c] /= double(received[i]);
      continue;
    }
    const Neighbours n = sourceSearch.nearestTied(decoded.xyz[i]);
    for (size_t j = 0; j < n.tied; ++j)
      for (int c = 0; c < 3; ++c) out[i][c] += sourceNormals[n.index[j]][c] / double(n.tied);
  }
  return out;
}

}  // namespace vpcc::quality
