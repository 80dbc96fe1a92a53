// Procedural human-like figures for the built-in demo: an articulated body of capsules (torso,
// head, arms, legs, feet) with skin, hair and clothing colours, dancing in place. Each figure is
// voxelized per frame as a one-voxel-thick shell, like a captured and voxelized person.
#pragma once

#include <cstdint>

#include "vpcc/encoder.h"

namespace holoquic {

struct FigureStyle {
  uint32_t seed = 0;       // picks clothing colours, hair and the dance's phase and tempo
  unsigned bits = 9;       // voxel grid depth
  double metresPerVoxel = 0.0055;
};

/// The figure at time `seconds`, voxelized on a 2^bits grid: the figure stands on y ≈ 8 voxels,
/// centred on x = z = 2^(bits−1), facing +z.
vpcc::InputFrame figureFrame(const FigureStyle& style, double seconds);

}  // namespace holoquic
