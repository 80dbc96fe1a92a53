// holoquic-pack's command line: modes, options and their checks, and the help texts.
#pragma once

#include <string>

#include "scene_plan.h"

namespace holoquic {

/// What the command line asks for: help text to print, or a plan to carry out.
struct CommandLine {
  bool help = false;
  std::string helpText;
  ScenePlan plan;
  std::string sceneFile;  // scene mode: the file the plan is read from
};

/// Parses argv; throws cli::UsageError naming the option and what it expects.
CommandLine parseCommandLine(int argc, char** argv);

/// The tool's help (empty mode) or one mode's; throws cli::UsageError for an unknown mode.
std::string helpText(const std::string& mode);

/// Throws cli::UsageError unless `id` can name an object (a directory and an MPD id).
void checkObjectId(const std::string& id, const std::string& where);

}  // namespace holoquic
