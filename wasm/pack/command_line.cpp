// holoquic-pack's command line → a ScenePlan. Every option is checked here, before any input is
// read: an unknown option, an option of another mode, a missing or malformed value or a value
// out of range is a cli::UsageError that names the option.
#include "command_line.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <set>
#include <thread>

#include "cli.h"
#include "mpd.h"

namespace holoquic {
namespace {

/// Options and the modes that take them (space-separated).
struct OptionRule {
  const char* name;
  bool takesValue;
  const char* modes;
};
const OptionRule kOptions[] = {
    {"--out", true, "demo ply gltf sample scene"},
    {"--object", true, "ply gltf sample"},
    {"--seconds", true, "demo ply gltf sample"},
    {"--animation", true, "gltf sample"},
    {"--dense", false, "demo"},
    {"--bits", true, "ply gltf sample"},
    {"--scale", true, "ply gltf sample"},
    {"--fit", false, "ply"},
    {"--unit", true, "ply"},
    {"--codec", true, "demo ply gltf"},
    {"--inter", true, "demo ply gltf"},
    {"--smoothing", false, "demo ply gltf"},
    {"--frame-rate", true, "demo ply gltf sample"},
    {"--segment-seconds", true, "demo ply gltf sample"},
    {"--threads", true, "demo ply gltf scene"},
    {"--grow", false, "demo ply gltf scene"},
    {"--wt-endpoint", true, "demo ply gltf scene"},
};

std::string shortNumber(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%g", v);
  return text;
}

bool listed(const char* modes, const std::string& mode) {
  const std::string padded = std::string(" ") + modes + " ";
  return padded.find(" " + mode + " ") != std::string::npos;
}

}  // namespace

void checkObjectId(const std::string& id, const std::string& where) {
  if (id.empty() || id.size() > 64 || id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
    throw cli::UsageError(where + ": object id '" + id + "' must be 1 … 64 characters of a-z, 0-9 and '-'");
}

CommandLine parseCommandLine(int argc, char** argv) {
  CommandLine c;
  if (argc < 2) throw cli::UsageError("no mode given (demo, ply, gltf, sample or scene; holoquic-pack --help)");
  const std::string first = argv[1];
  if (first == "--help" || first == "-h" || first == "help") {
    c.help = true;
    c.helpText = helpText(argc > 2 && first == "help" ? argv[2] : "");
    return c;
  }
  if (!first.empty() && first[0] == '-') throw cli::UsageError("expected a mode before " + first + " (holoquic-pack --help)");
  helpText(first);  // refuses an unknown mode
  ScenePlan& p = c.plan;
  p.mode = first;
  p.threads = std::max(1u, std::thread::hardware_concurrency());
  bool fit = false;
  double unit = 0, scale = 0, segmentSeconds = 1;
  unsigned bits = 10, frameRate = 30;
  int animation = 0;
  bool dense = false;
  std::vector<std::pair<std::string, std::string>> objects;
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      c.help = true;
      c.helpText = helpText(p.mode);
      return c;
    }
    if (p.mode == "scene" && !a.empty() && a[0] != '-') {
      if (!c.sceneFile.empty()) throw cli::UsageError("one scene file only ('" + c.sceneFile + "', then '" + a + "')");
      c.sceneFile = a;
      continue;
    }
    const OptionRule* rule = nullptr;
    for (const OptionRule& r : kOptions)
      if (a == r.name) rule = &r;
    if (!rule) throw cli::UsageError("unknown option '" + a + "' for the " + p.mode + " mode (holoquic-pack " + p.mode + " --help)");
    if (!listed(rule->modes, p.mode)) throw cli::UsageError(a + " is not an option of the " + p.mode + " mode (holoquic-pack " + p.mode + " --help)");
    std::string v;
    if (rule->takesValue) {
      if (i + 1 >= argc || (argv[i + 1][0] == '-' && argv[i + 1][1] == '-')) throw cli::UsageError(a + " needs a value");
      v = argv[++i];
    }
    if (a == "--out") {
      if (v.empty()) throw cli::UsageError("--out: an empty path");
      p.out = v;
    } else if (a == "--object") {
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0 || eq + 1 == v.size()) throw cli::UsageError("--object: '" + v + "' is not ID=PATH");
      checkObjectId(v.substr(0, eq), "--object");
      objects.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else if (a == "--seconds") p.seconds = double(cli::integer(a, v, 1, 3600));
    else if (a == "--animation") animation = int(cli::integer(a, v, 0, 1 << 20));
    else if (a == "--dense") dense = true;
    else if (a == "--bits") bits = unsigned(cli::integer(a, v, 4, 15));
    else if (a == "--scale") scale = cli::number(a, v, 0, 1000, true);
    else if (a == "--fit") fit = true;
    else if (a == "--unit") unit = cli::number(a, v, 0, 1e6, true);
    else if (a == "--codec") p.codec = cli::choice(a, v, "avc|hevc");
    else if (a == "--inter") p.inter = cli::choice(a, v, "0|1") == "1";
    else if (a == "--smoothing") p.smoothing = true;
    else if (a == "--frame-rate") frameRate = unsigned(cli::integer(a, v, 1, 120));
    else if (a == "--segment-seconds") segmentSeconds = cli::number(a, v, 0.1, 60);
    else if (a == "--threads") p.threads = unsigned(cli::integer(a, v, 1, 256));
    else if (a == "--grow") p.grow = true;
    else if (a == "--wt-endpoint") {
      if (const std::string problem = webTransportEndpointProblem(v); !problem.empty())
        throw cli::UsageError("--wt-endpoint: '" + v + "': " + problem);
      if (p.webtransportEndpoints.size() == kMaxWebTransportEndpoints)
        throw cli::UsageError("--wt-endpoint: more than " + std::to_string(kMaxWebTransportEndpoints) + " endpoints");
      p.webtransportEndpoints.push_back(v);
    }
  }
  if (unit > 0 && !fit) throw cli::UsageError("--unit needs --fit (it says what one input unit measures)");
  p.frameRate = frameRate;
  p.segmentSeconds = segmentSeconds;
  const double frames = frameRate * segmentSeconds;
  if (std::fabs(frames - std::round(frames)) > 1e-6 || frames < 1)
    throw cli::UsageError("--segment-seconds: " + shortNumber(segmentSeconds) + " s at " + std::to_string(frameRate) +
                          " fps is not a whole number of frames");
  if (p.seconds > 0 && std::fabs(p.seconds / segmentSeconds - std::round(p.seconds / segmentSeconds)) > 1e-6)
    throw cli::UsageError("--seconds: not a whole number of " + shortNumber(segmentSeconds) + "-s segments");

  if (p.mode == "scene") {
    if (c.sceneFile.empty()) throw cli::UsageError("the scene mode needs a scene file (holoquic-pack scene SCENE.json)");
    return c;
  }
  if (p.mode == "demo") {
    if (p.out.empty()) p.out = "content/demo";
    for (unsigned i = 0; i < 4; ++i) {
      ObjectPlan o;
      o.id = "figure-" + std::to_string(i);
      o.kind = SourceKind::Demo;
      o.demoSeed = i;
      o.dense = dense;
      p.objects.push_back(o);
    }
    if (p.seconds == 0) p.seconds = 10;
    return c;
  }
  if (p.out.empty()) throw cli::UsageError("the " + p.mode + " mode needs --out DIR");
  if (objects.empty()) throw cli::UsageError("the " + p.mode + " mode needs at least one --object ID=" + (p.mode == "ply" ? "SOURCE" : "MODEL"));
  std::set<std::string> ids;
  for (const auto& [id, path] : objects) {
    if (!ids.insert(id).second) throw cli::UsageError("--object: the id '" + id + "' is given twice");
    ObjectPlan o;
    o.id = id;
    o.kind = p.mode == "ply" ? SourceKind::Ply : SourceKind::Gltf;
    o.path = path;
    o.animation = animation;
    o.bits = bits;
    o.metresPerVoxel = scale;
    o.fit = fit;
    o.unitMetres = unit > 0 ? unit : 1;
    p.objects.push_back(o);
  }
  return c;
}

}  // namespace holoquic
