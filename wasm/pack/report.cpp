// report.json and the table printed after packing (docs/packaging.md, "What it writes"); the
// PSNRs are the quality library's (vpcc/quality.h: MPEG pc_error's definitions).
#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>

namespace holoquic {
namespace {

/// A PSNR as JSON: two decimals, or null when infinite (a rung that decodes losslessly; JSON has
/// no infinity). The printed table shows "inf".
std::string jsonPsnr(double db) {
  if (!std::isfinite(db)) return "null";
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", db);
  return text;
}

}  // namespace

void writeReport(const std::string& path, const std::string& scene, const std::vector<ObjectInfo>& objects,
                 const std::vector<std::vector<Rung>>& ladders, const std::vector<std::vector<Measured>>& measured,
                 const SceneTiming& timing) {
  std::ofstream report(path);
  std::string name;  // the scene name as a JSON string's content
  for (const char c : scene) {
    if (c == '"' || c == '\\') name += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) name += c;
  }
  report << "{\n  \"scene\": \"" << name << "\",\n  \"objects\": [\n";
  std::printf("%-10s %2s %9s %9s %7s %7s %7s %7s %7s %6s %6s\n", "object", "q", "kbit/s", "points", "bpp", "D1 dB", "D2 dB", "Y dB", "U dB",
              "QP g/a", "target");
  for (size_t s = 0; s < objects.size(); ++s) {
    report << "    {\"id\": \"" << objects[s].id << "\", \"qualities\": [\n";
    const size_t rungs = objects[s].representations.size();
    for (size_t q = 0; q < rungs; ++q) {
      const RepresentationInfo& r = objects[s].representations[q];
      const Measured& m = measured[s][q];
      const double n = double(std::max<size_t>(m.frames, 1));
      size_t total = 0;
      for (size_t b : r.segmentBytes) total += b;
      const double seconds = double(r.segmentBytes.size()) * timing.segmentSeconds();
      const double kbps = double(total) * 8 / seconds / 1000;
      const double bpp = double(total) * 8 / (double(r.segmentBytes.size()) * timing.framesPerSegment * std::max(r.pointsPerFrame, 1.0));
      const Rung& rung = ladders[s][q];
      char target[32] = "-";
      if (rung.targetMbps > 0) std::snprintf(target, sizeof target, "%.0f", rung.targetMbps * 1000);
      std::printf("%-10s %2zu %9.0f %9.0f %7.3f %7.2f %7.2f %7.2f %7.2f  %2d/%2d %6s\n", objects[s].id.c_str(), q, kbps, r.pointsPerFrame,
                  bpp, m.d1 / n, m.d2 / n, m.y / n, m.u / n, rung.geometryQp, rung.attributeQp, target);
      char line[512];
      std::snprintf(line, sizeof line, "      {\"quality\": %zu, \"avgKbps\": %.1f, \"pointsPerFrame\": %.0f, \"bitsPerPoint\": %.4f, "
                    "\"geometryQp\": %d, \"attributeQp\": %d, ", q, kbps, r.pointsPerFrame, bpp, rung.geometryQp, rung.attributeQp);
      if (rung.targetMbps > 0) std::snprintf(line + std::strlen(line), sizeof line - std::strlen(line), "\"targetKbps\": %.1f, ", rung.targetMbps * 1000);
      report << line << "\"d1Psnr\": " << jsonPsnr(m.d1 / n) << ", \"d2Psnr\": " << jsonPsnr(m.d2 / n) << ", \"yPsnr\": " << jsonPsnr(m.y / n)
             << ", \"uPsnr\": " << jsonPsnr(m.u / n) << ", \"vPsnr\": " << jsonPsnr(m.v / n) << "}" << (q + 1 < rungs ? "," : "") << "\n";
    }
    report << "    ]}" << (s + 1 < objects.size() ? "," : "") << "\n";
  }
  report << "  ]\n}\n";
}

}  // namespace holoquic
