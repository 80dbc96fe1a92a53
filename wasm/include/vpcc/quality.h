// Objective quality of a decoded point cloud against its source, with the definitions of MPEG's
// pc_error (mpeg-pcc-dmetric, the tool of the point-cloud common test conditions; docs/packaging.md,
// "Measuring quality", says each convention and where it comes from):
//   - each cloud's points at the same position are first merged into one (pc_error's default
//     --dropdups=2), its colour the integer mean of theirs;
//   - D1 (point-to-point): the mean over the points of one cloud of the squared distance to the
//     nearest point of the other; D2 (point-to-plane): the same error vector projected onto the
//     nearest point's normal;
//   - colour: BT.709 Y, Cb, Cr in [0, 1] of the point against the rounded mean colour of all the
//     nearest points at the same distance (--neighborsProc=1);
//   - symmetric: each figure is the worse of source→decoded and decoded→source;
//   - PSNR: geometry 10·log10(3·peak² / MSE) (peak = 2^bits − 1, pc_error's --resolution), colour
//     10·log10(1 / MSE); identical clouds give +infinity, as pc_error prints it ("inf").
#pragma once

#include <cstddef>
#include <cstdint>

namespace vpcc {

/// A point cloud on an integer voxel grid, borrowed from its owner.
struct CloudView {
  const int32_t* positions;         // x, y, z per point
  const uint8_t* colors;            // r, g, b per point
  size_t count;
  const float* normals = nullptr;   // nx, ny, nz per point, or none (then estimated; see QualityOptions)
};

struct QualityOptions {
  /// The geometry PSNR's peak (pc_error's --resolution): 2^bits − 1 for a bits-deep grid.
  double peak = 1023;
  /// Neighbours (the point included) whose covariance gives a source normal when the source
  /// carries none. pc_error itself never estimates normals (without them it reports D1 only);
  /// MPEG's test material ships them. Ours: the plane of the k nearest points, k = 12.
  unsigned normalNeighbours = 12;
};

/// Mean squared errors of one direction: every point of one cloud against the other.
struct DirectionalErrors {
  double d1 = 0, d2 = 0;        // squared voxel distances
  double y = 0, u = 0, v = 0;   // squared differences of Y, Cb, Cr in [0, 1]
};

struct Quality {
  double d1Psnr = 0, d2Psnr = 0;           // dB, peak QualityOptions::peak, factor 3
  double yPsnr = 0, uPsnr = 0, vPsnr = 0;  // dB, BT.709, peak 1 (255 on 8-bit values)
  double d1Mse = 0, d2Mse = 0;             // the symmetric (worse) squared errors
  double yMse = 0, uMse = 0, vMse = 0;
  DirectionalErrors sourceToDecoded, decodedToSource;
  size_t sourcePoints = 0, decodedPoints = 0;  // distinct positions, after merging duplicates
};

/// Compares `decoded` with `source`. Either cloud empty: every PSNR 0 and the MSEs 0 (nothing
/// to compare), the point counts still reported.
Quality measureQuality(const CloudView& source, const CloudView& decoded, const QualityOptions& options);

/// The same with peak 2^bits − 1 and the default options.
Quality measureQuality(const CloudView& source, const CloudView& decoded, unsigned bits);

/// 10·log10(factor·peak² / mse); +infinity when mse is 0.
double psnrOf(double mse, double peak, double factor);

}  // namespace vpcc
