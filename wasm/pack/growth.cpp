// Stages, cost estimates and the resume log of a growing scene (see growth.h).
#include "growth.h"

#include <csignal>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <unistd.h>

#include "content_dir.h"
#include "json.h"

namespace fs = std::filesystem;

namespace holoquic {
namespace {

std::string jsonString(const std::string& text) {
  std::string out = "\"";
  for (const char c : text) {
    if (c == '"' || c == '\\') out += '\\', out += c;
    else if (static_cast<unsigned char>(c) < 0x20) {
      char escape[8];
      std::snprintf(escape, sizeof escape, "\\u%04x", unsigned(c));
      out += escape;
    } else out += c;
  }
  return out + "\"";
}

/// A number as JSON: exact enough to round-trip, null for an infinite PSNR sum (a lossless rung).
std::string jsonNumber(double v) {
  if (!std::isfinite(v)) return "null";
  char text[40];
  std::snprintf(text, sizeof text, "%.17g", v);
  return text;
}

double numberOrInfinity(const JsonValue& v) { return v.isNull() ? std::numeric_limits<double>::infinity() : v.number(); }

/// One log line back into a cell, or false when it is not one (a line cut short by a stop).
bool readCell(const std::string& line, size_t objects, size_t rungs, unsigned segments, Cell& cell, CellResult& r) {
  try {
    const JsonValue v = JsonValue::parse(line);
    cell.object = size_t(v["object"].number());
    cell.rung = unsigned(v["rung"].number());
    cell.segment = unsigned(v["segment"].number());
    if (cell.object >= objects || cell.rung >= rungs || cell.segment >= segments) return false;
    r.bytes = size_t(v["bytes"].number());
    r.pointsPerFrame = v["points"].number();
    r.width = unsigned(v["width"].number());
    r.height = unsigned(v["height"].number());
    r.levelIdc = uint8_t(v["level"].number());  // a line of an older log has none: encoded again
    for (size_t i = 0; i < 6; ++i) r.voxelBox[i] = v["box"].at(i).number();
    const JsonValue& q = v["quality"];
    r.measured = {numberOrInfinity(q.at(0)), numberOrInfinity(q.at(1)), numberOrInfinity(q.at(2)),
                  numberOrInfinity(q.at(3)), numberOrInfinity(q.at(4)), size_t(q.at(5).number())};
    return true;
  } catch (const std::exception&) {
    return false;
  }
}

std::string stopMessage;  // set before the handler is installed, never changed after

void onStopSignal(int signal) {
  // Only async-signal-safe calls here: write and _exit.
  ssize_t ignored = write(STDERR_FILENO, stopMessage.data(), stopMessage.size());
  (void)ignored;
  _exit(128 + signal);
}

}  // namespace

std::vector<Stage> growthStages(unsigned segments, unsigned rungs, unsigned firstSegments) {
  std::vector<Stage> stages;
  if (firstSegments > 0 && firstSegments < segments) stages.push_back({firstSegments, 1});
  for (unsigned r = 1; r <= rungs; ++r) stages.push_back({segments, r});
  return stages;
}

std::string describePlan(const ScenePlan& plan, const std::vector<Source>& sources) {
  std::ostringstream d;
  d << "mode=" << plan.mode << " fps=" << plan.frameRate << " frames/segment=" << plan.framesPerSegment()
    << " segments=" << sources.front().segments << " codec=" << plan.codec << " inter=" << plan.inter
    << " smoothing=" << plan.smoothing << " ladder=";
  for (const Rung& r : plan.ladder) {
    d << r.lod << "," << r.maps << ",";
    if (r.targetMbps > 0) d << "target " << jsonNumber(r.targetMbps) << "+" << r.attributeQpOffset << ";";
    else d << r.geometryQp << "," << r.attributeQp << ";";
  }
  for (const ObjectPlan& o : plan.objects)
    d << " object=" << o.id << "," << int(o.kind) << "," << o.path << "," << o.animation << "," << o.demoSeed << "," << o.dense
      << "," << o.fit << "," << jsonNumber(o.unitMetres) << "," << o.bits << "," << jsonNumber(o.metresPerVoxel);
  return d.str();
}

PackLog::PackLog(const fs::path& directory, const std::string& plan, const std::vector<std::string>& objectIds, size_t rungs,
                 unsigned segments)
    : path_(directory / kFileName) {
  std::error_code ec;
  if (fs::exists(path_)) {
    std::ifstream in(path_);
    std::string line;
    std::getline(in, line);
    bool same = false;
    try {
      same = JsonValue::parse(line)["plan"].string() == plan;
    } catch (const std::exception&) {
    }
    if (same) {
      resuming_ = true;
      Cell cell;
      CellResult result;
      while (std::getline(in, line)) {
        if (!readCell(line, objectIds.size(), rungs, segments, cell, result)) continue;
        // Only cells whose file is there, whole, count: anything else is encoded again.
        const fs::path file = directory / segmentFile(objectIds[cell.object], cell.rung, cell.segment);
        if (fs::file_size(file, ec) == result.bytes && !ec) resumed_.emplace_back(cell, result);
      }
    } else {
      std::fprintf(stderr, "holoquic-pack: %s was being packed with other settings: starting it again\n", directory.c_str());
      for (const auto& entry : fs::directory_iterator(directory)) fs::remove_all(entry.path());
    }
  } else if (fs::exists(directory) && !fs::is_empty(directory)) {
    throw std::runtime_error("--grow: " + directory.string() +
                          (fs::exists(directory / "manifest.mpd") ? " holds a finished scene" : " is not empty") +
                          "; remove it to pack it again as it grows, or pack without --grow to replace it in one step");
  }
  fs::create_directories(directory, ec);
  if (ec) throw std::runtime_error(directory.string() + ": cannot create (" + ec.message() + ")");
  if (resuming_) {
    file_ = std::fopen(path_.c_str(), "a+");
    // A line cut short by a stop is ended first, so the next one starts on a line of its own.
    if (file_ && std::fseek(file_, -1, SEEK_END) == 0 && std::fgetc(file_) != '\n') std::fputc('\n', file_);
  } else {
    file_ = std::fopen(path_.c_str(), "w");
    if (file_) std::fprintf(file_, "{\"plan\": %s}\n", jsonString(plan).c_str());
  }
  if (!file_ || std::fflush(file_) != 0) throw std::runtime_error(path_.string() + ": cannot write");
}

PackLog::~PackLog() {
  if (file_) std::fclose(file_);
}

void PackLog::append(const Cell& cell, const CellResult& r) {
  const Measured& m = r.measured;
  std::string box;
  for (size_t i = 0; i < 6; ++i) box += (i ? "," : "") + jsonNumber(r.voxelBox[i]);
  // One write per line: a stop can cut only the last line short, and a short line is skipped.
  const std::string line = "{\"object\": " + std::to_string(cell.object) + ", \"rung\": " + std::to_string(cell.rung) +
                           ", \"segment\": " + std::to_string(cell.segment) + ", \"bytes\": " + std::to_string(r.bytes) +
                           ", \"points\": " + jsonNumber(r.pointsPerFrame) + ", \"width\": " + std::to_string(r.width) +
                           ", \"height\": " + std::to_string(r.height) + ", \"level\": " + std::to_string(r.levelIdc) +
                           ", \"box\": [" + box + "], \"quality\": [" +
                           jsonNumber(m.d1) + "," + jsonNumber(m.d2) + "," + jsonNumber(m.y) + "," + jsonNumber(m.u) + "," +
                           jsonNumber(m.v) + "," + std::to_string(m.frames) + "]}\n";
  if (std::fwrite(line.data(), 1, line.size(), file_) != line.size() || std::fflush(file_) != 0)
    throw std::runtime_error(path_.string() + ": cannot write");
}

void PackLog::finish() {
  std::fclose(file_);
  file_ = nullptr;
  fs::remove(path_);
}

void stopCleanlyOnSignal(const std::string& out) {
  stopMessage = "\nholoquic-pack: stopped. " + out + " stays playable as far as it got; the same command finishes it.\n";
  struct sigaction action = {};
  action.sa_handler = onStopSignal;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);
}

}  // namespace holoquic
