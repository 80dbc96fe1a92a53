// measureQuality: pc_error's D1, D2 and colour PSNR of a decoded cloud against its source
// (definitions in vpcc/quality.h).
#include "vpcc/quality.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>
#include <numeric>
#include <vector>

#include "nearest.h"
#include "normals.h"

namespace vpcc {
namespace {

using quality::NearestSearch;
using quality::Neighbours;
using quality::Normals;
using quality::Points;

/// A cloud with each position once: duplicates merged, their colour the integer (truncated) mean
/// of theirs, their normal the first one's (pc_error's --dropdups=2 after its sort by position).
struct Distinct {
  Points points;
  std::vector<std::array<uint8_t, 3>> rgb;
  Normals normals;  // empty when the view has none
};

Distinct merged(const CloudView& view) {
  std::vector<uint32_t> order(view.count);
  std::iota(order.begin(), order.end(), 0u);
  const int32_t* p = view.positions;
  std::stable_sort(order.begin(), order.end(), [p](uint32_t a, uint32_t b) {
    return std::lexicographical_compare(p + size_t(a) * 3, p + size_t(a) * 3 + 3, p + size_t(b) * 3, p + size_t(b) * 3 + 3);
  });
  Distinct out;
  for (size_t start = 0; start < order.size();) {
    const int32_t* first = p + size_t(order[start]) * 3;
    size_t end = start + 1;
    while (end < order.size() && std::equal(first, first + 3, p + size_t(order[end]) * 3)) ++end;
    unsigned sum[3] = {0, 0, 0};
    for (size_t k = start; k < end; ++k)
      for (int c = 0; c < 3; ++c) sum[c] += view.colors[size_t(order[k]) * 3 + c];
    const unsigned count = unsigned(end - start);
    out.points.xyz.push_back({double(first[0]), double(first[1]), double(first[2])});
    out.rgb.push_back({uint8_t(sum[0] / count), uint8_t(sum[1] / count), uint8_t(sum[2] / count)});
    if (view.normals) {
      const float* n = view.normals + size_t(order[start]) * 3;
      out.normals.push_back({double(n[0]), double(n[1]), double(n[2])});
    }
    start = end;
  }
  return out;
}

/// BT.709 Y, Cb, Cr in [0, 1] of 8-bit RGB, kept in single precision as pc_error keeps them.
std::array<float, 3> yuv709(const std::array<uint8_t, 3>& rgb) {
  const double r = rgb[0], g = rgb[1], b = rgb[2];
  return {float((0.2126 * r + 0.7152 * g + 0.0722 * b) / 255.0), float((-0.1146 * r - 0.3854 * g + 0.5 * b) / 255.0 + 0.5),
          float((0.5 * r - 0.4542 * g - 0.0458 * b) / 255.0 + 0.5)};
}

/// Every point of `a` against its nearest points in `b` (normals of `b` for D2).
DirectionalErrors oneWay(const Distinct& a, const Distinct& b, const NearestSearch& searchB, const Normals& normalsB) {
  DirectionalErrors e;
  for (size_t i = 0; i < a.points.xyz.size(); ++i) {
    const auto& p = a.points.xyz[i];
    const Neighbours n = searchB.nearestTied(p);
    e.d1 += n.distance[0];
    // D2 and colour take every nearest point at the same distance: the mean of the projected
    // squared errors, and the rounded mean colour.
    double plane = 0;
    unsigned sum[3] = {0, 0, 0};
    for (size_t t = 0; t < n.tied; ++t) {
      const uint32_t j = n.index[t];
      const auto& q = b.points.xyz[j];
      const auto& normal = normalsB[j];
      const double projected = (p[0] - q[0]) * normal[0] + (p[1] - q[1]) * normal[1] + (p[2] - q[2]) * normal[2];
      plane += projected * projected;
      for (int c = 0; c < 3; ++c) sum[c] += b.rgb[j][c];
    }
    e.d2 += plane / double(n.tied);
    std::array<uint8_t, 3> mean;
    for (int c = 0; c < 3; ++c) mean[c] = uint8_t(std::lround(double(sum[c]) / double(n.tied)));
    const std::array<float, 3> ya = yuv709(a.rgb[i]), yb = yuv709(mean);
    const double dy = double(ya[0]) - yb[0], du = double(ya[1]) - yb[1], dv = double(ya[2]) - yb[2];
    e.y += dy * dy, e.u += du * du, e.v += dv * dv;
  }
  const double count = double(a.points.xyz.size());
  e.d1 /= count, e.d2 /= count, e.y /= count, e.u /= count, e.v /= count;
  return e;
}

}  // namespace

double psnrOf(double mse, double peak, double factor) {
  if (mse <= 0) return std::numeric_limits<double>::infinity();
  return 10 * std::log10(factor * peak * peak / mse);
}

Quality measureQuality(const CloudView& source, const CloudView& decoded, const QualityOptions& options) {
  const Distinct a = merged(source), b = merged(decoded);
  Quality q;
  q.sourcePoints = a.points.xyz.size();
  q.decodedPoints = b.points.xyz.size();
  if (q.sourcePoints == 0 || q.decodedPoints == 0) return q;
  const NearestSearch searchA(a.points), searchB(b.points);
  const Normals normalsA = a.normals.empty() ? quality::estimateNormals(a.points, searchA, options.normalNeighbours) : a.normals;
  const Normals normalsB = quality::transferNormals(a.points, normalsA, searchA, b.points, searchB);
  q.sourceToDecoded = oneWay(a, b, searchB, normalsB);
  q.decodedToSource = oneWay(b, a, searchA, normalsA);
  const DirectionalErrors& f = q.sourceToDecoded;
  const DirectionalErrors& r = q.decodedToSource;
  q.d1Mse = std::max(f.d1, r.d1), q.d2Mse = std::max(f.d2, r.d2);
  q.yMse = std::max(f.y, r.y), q.uMse = std::max(f.u, r.u), q.vMse = std::max(f.v, r.v);
  q.d1Psnr = psnrOf(q.d1Mse, options.peak, 3);
  q.d2Psnr = psnrOf(q.d2Mse, options.peak, 3);
  q.yPsnr = psnrOf(q.yMse, 1, 1);
  q.uPsnr = psnrOf(q.uMse, 1, 1);
  q.vPsnr = psnrOf(q.vMse, 1, 1);
  return q;
}

Quality measureQuality(const CloudView& source, const CloudView& decoded, unsigned bits) {
  QualityOptions options;
  options.peak = double((1ull << bits) - 1);
  return measureQuality(source, decoded, options);
}

}  // namespace vpcc
