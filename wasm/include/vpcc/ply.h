// PLY point clouds (binary little/big endian or ASCII): x y z (any numeric type) with optional
// colours (red green blue: uchar, ushort, or float 0 … 1) and normals (nx ny nz, read for the
// quality metrics only), other properties ignored. Coordinates
// either already on a voxel grid, as 8i-style voxelized sequences store them, or in any unit,
// then fitted onto the grid (scanned or exported clouds in metres or millimetres).
#pragma once

#include <array>
#include <string>
#include <vector>

#include "vpcc/encoder.h"

namespace vpcc {

/// A PLY as read: float positions (voxelize with `voxelize`) and colours (grey when absent).
struct PlyCloud {
  std::vector<double> positions;  // x, y, z per point
  std::vector<uint8_t> colors;    // r, g, b per point
  std::vector<float> normals;     // nx, ny, nz per point; empty when the file has none
  size_t size() const { return positions.size() / 3; }
};

/// Reads a PLY file; throws std::runtime_error naming the file and what is wrong.
PlyCloud readPly(const std::string& path);

/// Points already on the integer grid; throws std::invalid_argument naming `what` when a
/// coordinate is not a whole number (0.01 tolerance: the input needs fitting) or falls outside
/// [0, 2^bits).
InputFrame voxelize(const PlyCloud& cloud, unsigned bits, const std::string& what);

/// Input units → voxel grid: voxel = round((p − origin) · voxelsPerUnit).
struct GridFit {
  std::array<double, 3> origin{0, 0, 0};
  double voxelsPerUnit = 1;
};

/// Bounding box (min x y z, max x y z) of a cloud's positions, grown into `box`.
void growBounds(const PlyCloud& cloud, std::array<double, 6>& box);

/// The fit that puts `box` on a 2^bits grid: its minimum corner at voxel 0, its longest side
/// spanning 0 … 2^bits − 1, the aspect kept.
GridFit fitToGrid(const std::array<double, 6>& box, unsigned bits);

/// Points mapped through `fit` onto the grid; points sharing a voxel become one, with their mean
/// colour. Throws std::invalid_argument naming `what` for a point outside the grid.
InputFrame voxelize(const PlyCloud& cloud, unsigned bits, const GridFit& fit, const std::string& what);

/// Writes a binary little-endian PLY with short positions and uchar colours.
void writePly(const std::string& path, const int16_t* positions, const uint8_t* colors, size_t count);

}  // namespace vpcc
