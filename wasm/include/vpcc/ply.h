// PLY point clouds (binary little/big endian or ASCII): x y z (any numeric type) with optional
// red green blue (uchar), as 8i-style voxelized sequences store them.
#pragma once

#include <string>
#include <vector>

#include "vpcc/encoder.h"

namespace vpcc {

/// A PLY as read: float positions (voxelize with `voxelize`) and colours (grey when absent).
struct PlyCloud {
  std::vector<double> positions;  // x, y, z per point
  std::vector<uint8_t> colors;    // r, g, b per point
  size_t size() const { return positions.size() / 3; }
};

/// Reads a PLY file; throws std::runtime_error naming the file and what is wrong.
PlyCloud readPly(const std::string& path);

/// Points rounded to the integer grid; throws std::invalid_argument naming `what` when a
/// coordinate falls outside [0, 2^bits).
InputFrame voxelize(const PlyCloud& cloud, unsigned bits, const std::string& what);

/// Writes a binary little-endian PLY with short positions and uchar colours.
void writePly(const std::string& path, const int16_t* positions, const uint8_t* colors, size_t count);

}  // namespace vpcc
