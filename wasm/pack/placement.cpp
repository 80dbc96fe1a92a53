// Placement of an object: scene = position + rotate(q, scale · voxel), with the position chosen
// so that the bottom centre of the object's voxel bounds lands where the plan puts it.
#include "placement.h"

#include <algorithm>
#include <cmath>

namespace holoquic {
namespace {

std::array<double, 3> rotate(const std::array<double, 4>& q, const std::array<double, 3>& v) {
  // v + 2w (u × v) + 2 u × (u × v), u = (x, y, z)
  const std::array<double, 3> u = {q[0], q[1], q[2]};
  auto cross = [](const std::array<double, 3>& a, const std::array<double, 3>& b) {
    return std::array<double, 3>{a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]};
  };
  const auto uv = cross(u, v), uuv = cross(u, uv);
  return {v[0] + 2 * (q[3] * uv[0] + uuv[0]), v[1] + 2 * (q[3] * uv[1] + uuv[1]), v[2] + 2 * (q[3] * uv[2] + uuv[2])};
}

}  // namespace

Placed place(const ObjectPlan& object, const std::array<double, 6>& vb, double metresPerVoxel, size_t index, size_t count) {
  Placed p;
  p.scale = metresPerVoxel * object.size;
  const double angle = 2 * M_PI * double(index) / double(std::max<size_t>(count, 1));
  const double radius = count > 1 ? 2.0 : 0.0;
  // Facing outward: the object's +z turns to the direction (sin a, 0, cos a).
  p.rotation = object.rotation ? *object.rotation : std::array<double, 4>{0, std::sin(angle / 2), 0, std::cos(angle / 2)};
  const std::array<double, 3> stand = object.position ? *object.position : std::array<double, 3>{radius * std::sin(angle), 0, radius * std::cos(angle)};
  const std::array<double, 3> bottomCentre = {(vb[0] + vb[3]) / 2 * p.scale, vb[1] * p.scale, (vb[2] + vb[5]) / 2 * p.scale};
  const auto turned = rotate(p.rotation, bottomCentre);
  for (int c = 0; c < 3; ++c) p.position[c] = stand[c] - turned[c];
  p.bbox = {1e300, 1e300, 1e300, -1e300, -1e300, -1e300};
  for (int corner = 0; corner < 8; ++corner) {
    const std::array<double, 3> v = {(corner & 1 ? vb[3] : vb[0]) * p.scale, (corner & 2 ? vb[4] : vb[1]) * p.scale,
                                     (corner & 4 ? vb[5] : vb[2]) * p.scale};
    const auto r = rotate(p.rotation, v);
    for (int c = 0; c < 3; ++c) {
      p.bbox[c] = std::min(p.bbox[c], r[c] + p.position[c]);
      p.bbox[c + 3] = std::max(p.bbox[c + 3], r[c] + p.position[c]);
    }
  }
  return p;
}

}  // namespace holoquic
