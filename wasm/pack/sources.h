// Where each object's frames come from: the demo's procedural figures, PLY frames (on the grid
// already, or fitted onto it) or an animated glTF model sampled onto a grid; all delivered one
// segment at a time, so a long scene never sits in memory.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "scene_plan.h"
#include "vpcc/encoder.h"

namespace holoquic {

struct Source {
  std::string id;
  /// The frames of segment k; throws cli::InputError naming the file when they cannot be made.
  std::function<std::vector<vpcc::InputFrame>(unsigned segment)> segment;
  unsigned segments = 0, bits = 10;
  double metresPerVoxel = 0.002;
  std::string playMode = "loop";  // MPD hq:playMode
};

/// Opens every object's input (files listed, models loaded, PLY sequences fitted) and settles
/// the scene's length: the plan's, else the longest source's; shorter sources loop. Throws
/// cli::InputError for missing or unusable input, before anything is encoded.
std::vector<Source> openSources(const ScenePlan& plan);

}  // namespace holoquic
