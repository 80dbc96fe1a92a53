// Scene files: a JSON description of a whole scene (docs/packaging.md, "Scene files") read into
// the ScenePlan the command-line flags would make.
#pragma once

#include <string>

#include "scene_plan.h"

namespace holoquic {

/// Reads `path` into `plan` (mode, threads and an --out given on the command line are kept).
/// Throws cli::InputError when the file cannot be read and cli::UsageError naming the file, the
/// key and what was expected when its content is wrong.
void readSceneFile(const std::string& path, ScenePlan& plan);

}  // namespace holoquic
