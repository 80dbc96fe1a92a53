// Small dense linear algebra shared by the encoder (normals for segmentation) and the quality
// library (normals for D2, src/quality): internal to the vpcc sources.
#pragma once

#include <array>

namespace vpcc {

/// Unit eigenvector of the smallest eigenvalue of a symmetric 3×3 matrix (cyclic Jacobi
/// rotations); `a` is overwritten.
std::array<double, 3> smallestEigenvector(double a[3][3]);

}  // namespace vpcc
