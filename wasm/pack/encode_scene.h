// The two things holoquic-pack makes from opened sources: a packed scene (segments per object ×
// rung, MPD, report) or, in the sample mode, the sources' frames as PLY files.
#pragma once

#include <vector>

#include "scene_plan.h"
#include "sources.h"

namespace holoquic {

/// Encodes and publishes the scene at plan.out. Throws cli::InputError when a source's frames
/// cannot be read, std::exception for encoding or writing failures; nothing is left behind then.
void packScene(const ScenePlan& plan, const std::vector<Source>& sources);

/// Writes every frame of every source as plan.out/ID/frame-NNNNN.ply.
void writeSampledFrames(const ScenePlan& plan, const std::vector<Source>& sources);

}  // namespace holoquic
