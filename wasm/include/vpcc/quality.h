// Objective quality of a decoded point cloud against its source, as MPEG's pc_error reports it:
// D1 (point-to-point) and D2 (point-to-plane) geometry PSNR and colour PSNR per YUV channel,
// each the worse of the two directions (source→decoded, decoded→source).
#pragma once

#include <cstddef>
#include <cstdint>

namespace vpcc {

struct CloudView {
  const int32_t* positions;  // x, y, z per point
  const uint8_t* colors;     // r, g, b per point
  size_t count;
};

struct Quality {
  double d1Psnr = 0, d2Psnr = 0;        // dB, peak = 2^bits − 1
  double yPsnr = 0, uPsnr = 0, vPsnr = 0;  // dB, BT.709, peak 255
  double d1Mse = 0, d2Mse = 0;
};

/// Compares `decoded` with `source` (both on the same voxel grid of `bits` bits).
Quality measureQuality(const CloudView& source, const CloudView& decoded, unsigned bits);

}  // namespace vpcc
