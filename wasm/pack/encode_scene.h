// The two things holoquic-pack makes from opened sources: a packed scene (segments per object ×
// rung, MPD, report) or, in the sample mode, the sources' frames as PLY files.
#pragma once

#include <vector>

#include "scene_plan.h"
#include "sources.h"

namespace holoquic {

/// The encoder's settings for one rung of the plan's ladder, on a grid of `bits`.
vpcc::EncoderConfig rungConfig(const ScenePlan& plan, const Rung& rung, unsigned bits);

/// Encodes and publishes the scene at plan.out. Throws cli::InputError when a source's frames
/// cannot be read, std::exception for encoding or writing failures; nothing is left behind then.
void packScene(const ScenePlan& plan, const std::vector<Source>& sources);

/// Writes every frame of every source as plan.out/ID/frame-NNNNN.ply.
void writeSampledFrames(const ScenePlan& plan, const std::vector<Source>& sources);

}  // namespace holoquic
