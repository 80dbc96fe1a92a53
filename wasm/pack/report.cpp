// report.json and the table printed after packing (docs/packaging.md, "What it writes").
#include "report.h"

#include <algorithm>
#include <cstdio>
#include <fstream>

namespace holoquic {

void writeReport(const std::string& path, const std::string& scene, const std::vector<ObjectInfo>& objects,
                 const std::vector<std::vector<Measured>>& measured, const SceneTiming& timing) {
  std::ofstream report(path);
  std::string name;  // the scene name as a JSON string's content
  for (const char c : scene) {
    if (c == '"' || c == '\\') name += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) name += c;
  }
  report << "{\n  \"scene\": \"" << name << "\",\n  \"objects\": [\n";
  std::printf("%-10s %2s %9s %9s %7s %7s %7s %7s %7s\n", "object", "q", "kbit/s", "points", "bpp", "D1 dB", "D2 dB", "Y dB", "U dB");
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
      std::printf("%-10s %2zu %9.0f %9.0f %7.3f %7.2f %7.2f %7.2f %7.2f\n", objects[s].id.c_str(), q, kbps, r.pointsPerFrame, bpp,
                  m.d1 / n, m.d2 / n, m.y / n, m.u / n);
      char line[512];
      std::snprintf(line, sizeof line,
                    "      {\"quality\": %zu, \"avgKbps\": %.1f, \"pointsPerFrame\": %.0f, \"bitsPerPoint\": %.4f, \"d1Psnr\": %.2f, "
                    "\"d2Psnr\": %.2f, \"yPsnr\": %.2f, \"uPsnr\": %.2f, \"vPsnr\": %.2f}%s\n",
                    q, kbps, r.pointsPerFrame, bpp, m.d1 / n, m.d2 / n, m.y / n, m.u / n, m.v / n, q + 1 < rungs ? "," : "");
      report << line;
    }
    report << "    ]}" << (s + 1 < objects.size() ? "," : "") << "\n";
  }
  report << "  ]\n}\n";
}

}  // namespace holoquic
