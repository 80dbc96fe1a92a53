// holoquic-pack: turns point-cloud sequences, animated glTF models or nothing (the built-in demo)
// into a content directory the origin serves — per object × quality × segment V-PCC files and a
// DASH MPD (docs/mpd.md) — plus a quality report. `holoquic-pack --help` and
// docs/packaging.md describe the modes, options, scene files and exit codes.
//
// This file maps the work onto exit codes: the command line (command_line.cpp) or a scene file
// (scene_file.cpp) becomes a ScenePlan, sources.cpp opens the inputs, encode_scene.cpp packs.
#include <cstdio>
#include <exception>
#include <filesystem>

#include "cli.h"
#include "command_line.h"
#include "encode_scene.h"
#include "scene_file.h"
#include "sources.h"

extern "C" {
#include <libavutil/log.h>
}

using namespace holoquic;

namespace {

int refuse(int code, const std::string& message) {
  std::fprintf(stderr, "holoquic-pack: %s\n", message.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  av_log_set_level(AV_LOG_ERROR);  // x264/x265 statistics are not ours to print
  CommandLine command;
  try {
    command = parseCommandLine(argc, argv);
    if (command.help) {
      std::fputs(command.helpText.c_str(), stdout);
      return cli::kOk;
    }
    if (command.plan.mode == "scene") readSceneFile(command.sceneFile, command.plan);
  } catch (const cli::UsageError& e) {
    return refuse(cli::kUsage, e.what());
  } catch (const cli::InputError& e) {
    return refuse(cli::kInput, e.what());
  }
  const ScenePlan& plan = command.plan;
  std::vector<Source> sources;
  try {
    sources = openSources(plan);
  } catch (const cli::UsageError& e) {
    return refuse(cli::kUsage, e.what());
  } catch (const std::exception& e) {
    return refuse(cli::kInput, e.what());
  }
  try {
    if (plan.mode == "sample") writeSampledFrames(plan, sources);
    else packScene(plan, sources);
  } catch (const cli::InputError& e) {
    return refuse(cli::kInput, e.what());
  } catch (const std::exception& e) {
    return refuse(cli::kOutput, e.what());
  }
  return cli::kOk;
}
