// Where each object stands in the scene: the MPD's position, rotation, scale and bounding box
// from the object's voxel bounds and its placement in the plan (or the default circle).
#pragma once

#include <array>
#include <cstddef>

#include "scene_plan.h"

namespace holoquic {

struct Placed {
  std::array<double, 3> position{};
  std::array<double, 4> rotation{0, 0, 0, 1};  // x y z w
  double scale = 1;                            // metres per voxel, the size factor included
  std::array<double, 6> bbox{};                // scene metres
};

/// `voxelBox`: min x y z, max x y z (exclusive) of the object's voxels over all frames.
/// Without a position the object stands on a circle of 2 m radius around the origin (at its centre
/// when it is the scene's only object, `index` of `count`), facing outward unless rotated; the
/// bottom centre of its bounding box is what stands at the position.
Placed place(const ObjectPlan& object, const std::array<double, 6>& voxelBox, double metresPerVoxel, size_t index, size_t count);

}  // namespace holoquic
