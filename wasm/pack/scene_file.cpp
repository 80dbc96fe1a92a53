// Scene file (JSON) → ScenePlan. Every key is checked: an unknown key (a typo), a value of the
// wrong type or out of range is refused with the file, the key's path (objects[1].position) and
// what was expected, before any input is read.
#include "scene_file.h"

#include <cmath>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <set>

#include "cli.h"
#include "command_line.h"
#include "json.h"
#include "mpd.h"

namespace fs = std::filesystem;

namespace holoquic {
namespace {

class SceneReader {
 public:
  explicit SceneReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw cli::UsageError(file_ + ": " + key + ": " + what);
  }

  /// Refuses members of `object` not in `known` (space-separated).
  void onlyKeys(const JsonValue& object, const std::string& where, const std::string& known) const {
    for (const auto& [key, value] : object.object())
      if ((" " + known + " ").find(" " + key + " ") == std::string::npos)
        fail(where.empty() ? key : where + "." + key, "unknown key (expected one of: " + known + ")");
  }

  double number(const JsonValue& v, const std::string& key, double min, double max) const {
    if (!v.isNumber()) fail(key, "expected a number");
    const double x = v.number();
    if (!(x >= min && x <= max)) fail(key, numberText(x) + " is out of range (" + numberText(min) + " … " + numberText(max) + ")");
    return x;
  }
  long long integer(const JsonValue& v, const std::string& key, long long min, long long max) const {
    const double x = number(v, key, double(min), double(max));
    if (x != std::floor(x)) fail(key, "expected a whole number, got " + numberText(x));
    return (long long)x;
  }
  bool boolean(const JsonValue& v, const std::string& key) const {
    if (v.type() != JsonValue::Type::Bool) fail(key, "expected true or false");
    return v.boolean();
  }
  const std::string& string(const JsonValue& v, const std::string& key) const {
    if (!v.isString() || v.string().empty()) fail(key, "expected a non-empty string");
    return v.string();
  }
  template <size_t N>
  std::array<double, N> numbers(const JsonValue& v, const std::string& key) const {
    if (!v.isArray() || v.size() != N) fail(key, "expected an array of " + std::to_string(N) + " numbers");
    std::array<double, N> out{};
    for (size_t i = 0; i < N; ++i) out[i] = number(v.at(i), key + "[" + std::to_string(i) + "]", -1e6, 1e6);
    return out;
  }

  static std::string numberText(double x) {
    char text[32];
    std::snprintf(text, sizeof text, "%g", x);
    return text;
  }

 private:
  std::string file_;
};

/// "JSON: ... at byte N" → "line L, column C: ..." for a person looking at the file.
std::string locate(const std::string& message, const std::string& text) {
  const size_t at = message.rfind(" at byte ");
  if (at == std::string::npos) return message;
  const size_t offset = std::min<size_t>(std::strtoull(message.c_str() + at + 9, nullptr, 10), text.size());
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset; ++i) text[i] == '\n' ? (++line, column = 1) : ++column;
  return "line " + std::to_string(line) + ", column " + std::to_string(column) + ": " + message.substr(0, at);
}

/// A rung: level of detail, maps and either both quantisers or a target rate (with an optional
/// offset of the attribute quantiser above the geometry one).
Rung readRung(const SceneReader& r, const JsonValue& v, const std::string& key) {
  if (!v.isObject()) r.fail(key, "expected an object {\"lod\", \"maps\", \"geometryQp\", \"attributeQp\"} or {\"lod\", \"maps\", \"targetMbps\"}");
  r.onlyKeys(v, key, "lod maps geometryQp attributeQp targetMbps attributeQpOffset");
  for (const char* required : {"lod", "maps"})
    if (!v.has(required)) r.fail(key, std::string("missing \"") + required + "\"");
  Rung rung;
  rung.lod = unsigned(r.integer(v["lod"], key + ".lod", 1, 4));
  rung.maps = unsigned(r.integer(v["maps"], key + ".maps", 1, 2));
  if (v.has("targetMbps")) {
    for (const char* given : {"geometryQp", "attributeQp"})
      if (v.has(given)) r.fail(key + "." + given, "a rung with \"targetMbps\" has its quantisers chosen by the packer");
    rung.targetMbps = r.number(v["targetMbps"], key + ".targetMbps", 0.01, 1000);
    if (v.has("attributeQpOffset")) rung.attributeQpOffset = int(r.integer(v["attributeQpOffset"], key + ".attributeQpOffset", -20, 20));
    return rung;
  }
  if (v.has("attributeQpOffset")) r.fail(key + ".attributeQpOffset", "only with \"targetMbps\"");
  for (const char* required : {"geometryQp", "attributeQp"})
    if (!v.has(required)) r.fail(key, std::string("missing \"") + required + "\" (or give \"targetMbps\")");
  rung.geometryQp = int(r.integer(v["geometryQp"], key + ".geometryQp", 0, 51));
  rung.attributeQp = int(r.integer(v["attributeQp"], key + ".attributeQp", 0, 51));
  return rung;
}

/// A quaternion, or a number: degrees about the up axis (y).
std::array<double, 4> readRotation(const SceneReader& r, const JsonValue& v, const std::string& key) {
  if (v.isNumber()) {
    const double a = r.number(v, key, -360, 360) * M_PI / 180;
    return {0, std::sin(a / 2), 0, std::cos(a / 2)};
  }
  if (!v.isArray()) r.fail(key, "expected degrees about y, or a quaternion [x, y, z, w]");
  std::array<double, 4> q = r.numbers<4>(v, key);
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (std::fabs(n - 1) > 1e-3) r.fail(key, "the quaternion's length is " + SceneReader::numberText(n) + ", not 1");
  for (double& c : q) c /= n;
  return q;
}

ObjectPlan readObject(const SceneReader& r, const JsonValue& v, const std::string& key, const fs::path& base, unsigned bits) {
  if (!v.isObject()) r.fail(key, "expected an object with \"id\" and one of \"ply\", \"gltf\", \"demo\"");
  r.onlyKeys(v, key, "id ply gltf demo fit unit animation bits metresPerVoxel position rotation size");
  ObjectPlan o;
  o.id = r.string(v["id"], key + ".id");
  try {
    checkObjectId(o.id, key + ".id");
  } catch (const cli::UsageError&) {
    r.fail(key + ".id", "'" + o.id + "' must be 1 … 64 characters of a-z, 0-9 and '-'");
  }
  const int kinds = int(v.has("ply")) + int(v.has("gltf")) + int(v.has("demo"));
  if (kinds != 1) r.fail(key, "expected exactly one source: \"ply\", \"gltf\" or \"demo\"");
  o.bits = v.has("bits") ? unsigned(r.integer(v["bits"], key + ".bits", 4, 15)) : bits;
  if (v.has("ply")) {
    o.kind = SourceKind::Ply;
    o.path = (base / r.string(v["ply"], key + ".ply")).string();
    if (v.has("fit")) o.fit = r.boolean(v["fit"], key + ".fit");
    if (v.has("unit")) {
      if (!o.fit) r.fail(key + ".unit", "needs \"fit\": true (it says what one input unit measures)");
      o.unitMetres = r.number(v["unit"], key + ".unit", 1e-9, 1e6);
    }
  } else if (v.has("gltf")) {
    o.kind = SourceKind::Gltf;
    o.path = (base / r.string(v["gltf"], key + ".gltf")).string();
    if (v.has("animation")) o.animation = int(r.integer(v["animation"], key + ".animation", 0, 1 << 20));
  } else {
    o.kind = SourceKind::Demo;
    const JsonValue& d = v["demo"];
    if (!d.isObject()) r.fail(key + ".demo", "expected an object {\"seed\": N, \"dense\": true|false}");
    r.onlyKeys(d, key + ".demo", "seed dense");
    if (d.has("seed")) o.demoSeed = unsigned(r.integer(d["seed"], key + ".demo.seed", 0, 1 << 20));
    if (d.has("dense")) o.dense = r.boolean(d["dense"], key + ".demo.dense");
    if (v.has("bits")) r.fail(key + ".bits", "a demo figure's grid is set by \"dense\"");
  }
  for (const char* only : {"fit", "unit"})
    if (v.has(only) && o.kind != SourceKind::Ply) r.fail(key + "." + only, "only for \"ply\" sources");
  if (v.has("animation") && o.kind != SourceKind::Gltf) r.fail(key + ".animation", "only for \"gltf\" sources");
  if (v.has("metresPerVoxel")) o.metresPerVoxel = r.number(v["metresPerVoxel"], key + ".metresPerVoxel", 1e-9, 1000);
  if (v.has("position")) o.position = r.numbers<3>(v["position"], key + ".position");
  if (v.has("rotation")) o.rotation = readRotation(r, v["rotation"], key + ".rotation");
  if (v.has("size")) o.size = r.number(v["size"], key + ".size", 1e-6, 1e6);
  return o;
}

}  // namespace

void readSceneFile(const std::string& path, ScenePlan& plan) {
  std::ifstream in(path, std::ios::binary);
  if (!in || fs::is_directory(path)) throw cli::InputError(path + ": cannot read the scene file");
  const std::string text((std::istreambuf_iterator<char>(in)), {});
  JsonValue doc;
  try {
    doc = JsonValue::parse(text);
  } catch (const std::exception& e) {
    throw cli::UsageError(path + ": " + locate(e.what(), text));
  }
  const SceneReader r(path);
  if (!doc.isObject()) r.fail("(top level)", "expected an object");
  r.onlyKeys(doc, "", "out frameRate segmentSeconds seconds codec inter smoothing bits ladder objects webtransportEndpoints");
  const fs::path base = fs::path(path).parent_path();
  if (doc.has("out") && plan.out.empty()) plan.out = (base / r.string(doc["out"], "out")).string();
  if (plan.out.empty()) plan.out = (fs::path("content") / fs::path(path).stem()).string();
  if (doc.has("frameRate")) plan.frameRate = unsigned(r.integer(doc["frameRate"], "frameRate", 1, 120));
  if (doc.has("segmentSeconds")) plan.segmentSeconds = r.number(doc["segmentSeconds"], "segmentSeconds", 0.1, 60);
  const double frames = plan.frameRate * plan.segmentSeconds;
  if (std::fabs(frames - std::round(frames)) > 1e-6)
    r.fail("segmentSeconds", SceneReader::numberText(plan.segmentSeconds) + " s at " + std::to_string(plan.frameRate) +
                                 " fps is not a whole number of frames");
  if (doc.has("seconds")) {
    plan.seconds = r.number(doc["seconds"], "seconds", plan.segmentSeconds, 3600);
    const double segments = plan.seconds / plan.segmentSeconds;
    if (std::fabs(segments - std::round(segments)) > 1e-6)
      r.fail("seconds", "not a whole number of " + SceneReader::numberText(plan.segmentSeconds) + "-s segments");
  }
  if (doc.has("codec")) {
    plan.codec = r.string(doc["codec"], "codec");
    if (plan.codec != "avc" && plan.codec != "hevc") r.fail("codec", "expected \"avc\" or \"hevc\", got \"" + plan.codec + "\"");
  }
  if (doc.has("inter")) plan.inter = r.boolean(doc["inter"], "inter");
  if (doc.has("smoothing")) plan.smoothing = r.boolean(doc["smoothing"], "smoothing");
  const unsigned bits = doc.has("bits") ? unsigned(r.integer(doc["bits"], "bits", 4, 15)) : 10;
  if (doc.has("ladder")) {
    const JsonValue& ladder = doc["ladder"];
    if (!ladder.isArray() || ladder.size() < 1 || ladder.size() > 10) r.fail("ladder", "expected an array of 1 … 10 rungs, lowest quality first");
    plan.ladder.clear();
    for (size_t i = 0; i < ladder.size(); ++i) plan.ladder.push_back(readRung(r, ladder.at(i), "ladder[" + std::to_string(i) + "]"));
  }
  // --wt-endpoint on the command line replaces the file's list, as --out replaces "out".
  if (doc.has("webtransportEndpoints")) {
    const JsonValue& list = doc["webtransportEndpoints"];
    if (!list.isArray() || list.size() > kMaxWebTransportEndpoints)
      r.fail("webtransportEndpoints", "expected an array of at most " + std::to_string(kMaxWebTransportEndpoints) + " https URLs");
    std::vector<std::string> urls;
    for (size_t i = 0; i < list.size(); ++i) {
      const std::string key = "webtransportEndpoints[" + std::to_string(i) + "]";
      const std::string& url = r.string(list.at(i), key);
      if (const std::string problem = webTransportEndpointProblem(url); !problem.empty()) r.fail(key, "'" + url + "': " + problem);
      urls.push_back(url);
    }
    if (plan.webtransportEndpoints.empty()) plan.webtransportEndpoints = urls;
  }
  const JsonValue& objects = doc["objects"];
  if (!objects.isArray() || objects.size() == 0) r.fail("objects", "expected an array of at least one object");
  std::set<std::string> ids;
  for (size_t i = 0; i < objects.size(); ++i) {
    const std::string key = "objects[" + std::to_string(i) + "]";
    plan.objects.push_back(readObject(r, objects.at(i), key, base, bits));
    if (!ids.insert(plan.objects.back().id).second) r.fail(key + ".id", "'" + plan.objects.back().id + "' is used twice");
  }
}

}  // namespace holoquic
