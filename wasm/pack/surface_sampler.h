// Posed glTF meshes → voxelized coloured point clouds: every triangle is sampled densely (at most
// half a voxel between samples), each sample takes its base colour (texture × factor × vertex
// colour), and the samples falling into one voxel are averaged into one point — a surface one
// voxel thick, like a captured and voxelized person.
#pragma once

#include <array>
#include <vector>

#include "gltf.h"
#include "vpcc/encoder.h"

namespace holoquic {

/// Model space → voxel grid: voxel = (p − origin) · voxelsPerUnit, on a 2^bits grid.
struct VoxelGrid {
  std::array<double, 3> origin{0, 0, 0};
  double voxelsPerUnit = 1;
  unsigned bits = 10;
};

/// A grid that holds `box` (min x y z, max x y z, model units) with a two-voxel margin, its longest
/// side spanning the grid.
VoxelGrid fitGrid(const std::array<double, 6>& box, unsigned bits);

/// Bounding box of posed meshes (min x y z, max x y z), grown into `box`.
void growBox(const std::vector<PosedPrimitive>& posed, std::array<double, 6>& box);

/// The coloured voxels of the posed meshes' surfaces.
vpcc::InputFrame voxelizeSurfaces(const GltfModel& model, const std::vector<PosedPrimitive>& posed, const VoxelGrid& grid);

}  // namespace holoquic
