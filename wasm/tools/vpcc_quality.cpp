// vpcc-quality: source PLY frames against decoded PLY frames, MPEG pc_error's figures (D1, D2,
// Y/U/V PSNR, symmetric) per frame and averaged over the frames (vpcc/quality.h).
//
//   vpcc-quality SRC_%04d.ply DEC_%04d.ply [--bits N | --peak N] [--first N] [--frames N] [--json]
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include "cli.h"
#include "frame_pattern.h"
#include "vpcc/ply.h"
#include "vpcc/quality.h"

using namespace vpcc;

namespace {

const char* const kHelp =
    "Usage: vpcc-quality SOURCE DECODED [options]\n"
    "\n"
    "Compares decoded point-cloud frames with their sources as MPEG's pc_error does: D1\n"
    "(point-to-point) and D2 (point-to-plane) geometry PSNR, Y/U/V colour PSNR (BT.709), each the\n"
    "worse of the two directions; per frame and averaged over the frames.\n"
    "\n"
    "SOURCE and DECODED are PLY files on an integer voxel grid, or numbered patterns such as\n"
    "frame_%04d.ply (%d or %0Nd); decoded frame N is compared with source frame N.\n"
    "\n"
    "  --bits N     voxel grid depth, 1 … 16: geometry peak 2^N - 1 (default 10, peak 1023)\n"
    "  --peak N     geometry peak itself (pc_error's --resolution), instead of --bits\n"
    "  --first N    first frame number of the patterns (default 0)\n"
    "  --frames N   frames to compare (default: every frame from --first on that both have)\n"
    "  --json       one JSON object on stdout instead of the table (infinite PSNR as null)\n"
    "\n"
    "Normals for D2 come from the source's nx ny nz when it has them, else from the plane of each\n"
    "source point's 12 nearest points. Identical clouds give an infinite PSNR (\"inf\").\n"
    "\n"
    "Exit codes: 0 done, 2 usage (unknown option, bad value), 3 input (a frame missing or unusable).\n";

int refuse(int code, const std::string& message) {
  std::fprintf(stderr, "vpcc-quality: %s\n", message.c_str());
  return code;
}

/// A file name or a numbered pattern of them.
struct Frames {
  bool numbered = false;
  cli::FramePattern pattern;
  std::string single;
  std::string path(unsigned long long n) const { return numbered ? pattern.path(n) : single; }
};

Frames framesOf(const std::string& what, const std::string& text) {
  Frames f;
  f.single = text;
  if (!cli::looksLikePattern(text)) return f;
  std::string error;
  if (!cli::parseFramePattern(text, f.pattern, error)) throw cli::UsageError(what + ": " + error);
  f.numbered = true;
  return f;
}

bool exists(const std::string& path) { return std::ifstream(path).good(); }

/// A PLY frame on the integer grid, as the metrics take it.
struct GridCloud {
  std::vector<int32_t> positions;
  std::vector<uint8_t> colors;
  std::vector<float> normals;
  CloudView view() const { return {positions.data(), colors.data(), colors.size() / 3, normals.empty() ? nullptr : normals.data()}; }
};

GridCloud load(const std::string& path) {
  PlyCloud ply;
  try {
    ply = readPly(path);
  } catch (const std::exception& e) {
    throw cli::InputError(e.what());
  }
  GridCloud c;
  c.positions.resize(ply.positions.size());
  for (size_t i = 0; i < ply.positions.size(); ++i) {
    const double r = std::round(ply.positions[i]);
    if (std::fabs(r - ply.positions[i]) > 0.01 || std::fabs(r) > 2147483647.0)
      throw cli::InputError(path + ": point " + std::to_string(i / 3) + " coordinate " + std::to_string(ply.positions[i]) +
                            " is not on an integer voxel grid");
    c.positions[i] = int32_t(r);
  }
  c.colors = std::move(ply.colors);
  c.normals = std::move(ply.normals);
  return c;
}

/// "%.4f", or "inf" / JSON null for an infinite PSNR.
std::string figure(double v, bool json) {
  if (!std::isfinite(v)) return json ? "null" : "inf";
  char text[64];
  std::snprintf(text, sizeof text, "%.4f", v);
  return text;
}

std::string jsonPsnrs(const Quality& q) {
  return "\"d1Psnr\": " + figure(q.d1Psnr, true) + ", \"d2Psnr\": " + figure(q.d2Psnr, true) + ", \"yPsnr\": " + figure(q.yPsnr, true) +
         ", \"uPsnr\": " + figure(q.uPsnr, true) + ", \"vPsnr\": " + figure(q.vPsnr, true);
}

/// One direction's mean squared errors (which side of the symmetric figure costs what).
std::string jsonDirection(const DirectionalErrors& e) {
  char text[256];
  std::snprintf(text, sizeof text, "{\"d1Mse\": %.9g, \"d2Mse\": %.9g, \"yMse\": %.9g, \"uMse\": %.9g, \"vMse\": %.9g}", e.d1, e.d2,
                e.y, e.u, e.v);
  return text;
}

std::string jsonFrame(unsigned long long n, const Quality& q) {
  char mse[320];
  std::snprintf(mse, sizeof mse, "\"d1Mse\": %.9g, \"d2Mse\": %.9g, \"yMse\": %.9g, \"uMse\": %.9g, \"vMse\": %.9g", q.d1Mse, q.d2Mse,
                q.yMse, q.uMse, q.vMse);
  return "{\"frame\": " + std::to_string(n) + ", \"sourcePoints\": " + std::to_string(q.sourcePoints) +
         ", \"decodedPoints\": " + std::to_string(q.decodedPoints) + ", " + jsonPsnrs(q) + ", " + mse +
         ", \"sourceToDecoded\": " + jsonDirection(q.sourceToDecoded) + ", \"decodedToSource\": " + jsonDirection(q.decodedToSource) + "}";
}

void printRow(const std::string& label, const Quality& q, const std::string& points) {
  std::printf("%-8s %17s %10s %10s %10s %10s %10s\n", label.c_str(), points.c_str(), figure(q.d1Psnr, false).c_str(),
              figure(q.d2Psnr, false).c_str(), figure(q.yPsnr, false).c_str(), figure(q.uPsnr, false).c_str(),
              figure(q.vPsnr, false).c_str());
}

}  // namespace

int main(int argc, char** argv) {
  QualityOptions options;
  bool json = false, bitsGiven = false, peakGiven = false;
  unsigned long long first = 0, count = 0;
  std::vector<std::string> names;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&] { return cli::valueAfter(argc, argv, i); };
      if (a == "--help" || a == "-h") {
        std::fputs(kHelp, stdout);
        return cli::kOk;
      } else if (a == "--bits") {
        options.peak = double((1u << cli::integer(a, next(), 1, 16)) - 1), bitsGiven = true;
      } else if (a == "--peak") {
        options.peak = cli::number(a, next(), 0, 1e9, true), peakGiven = true;
      } else if (a == "--first") {
        first = (unsigned long long)cli::integer(a, next(), 0, 999999999);
      } else if (a == "--frames") {
        count = (unsigned long long)cli::integer(a, next(), 1, 100000);
      } else if (a == "--json") {
        json = true;
      } else if (a.size() > 1 && a[0] == '-') {
        throw cli::UsageError("unknown option '" + a + "' (vpcc-quality --help)");
      } else {
        names.push_back(a);
      }
    }
    if (bitsGiven && peakGiven) throw cli::UsageError("--bits and --peak both set the peak: give one");
    if (names.size() != 2) throw cli::UsageError("give SOURCE and DECODED (vpcc-quality --help)");
  } catch (const cli::UsageError& e) {
    return refuse(cli::kUsage, e.what());
  }
  try {
    const Frames source = framesOf("SOURCE", names[0]), decoded = framesOf("DECODED", names[1]);
    if (source.numbered != decoded.numbered) throw cli::UsageError("SOURCE and DECODED must both be patterns, or both files");
    if (!source.numbered) count = 1;
    if (count == 0)  // every frame both patterns have, from --first on
      while (count < 100000 && exists(source.path(first + count)) && exists(decoded.path(first + count))) ++count;
    if (count == 0) throw cli::InputError("no frame " + std::to_string(first) + ": " + source.path(first) + " and " + decoded.path(first) + " are not both there");
    if (!json) std::printf("%-8s %17s %10s %10s %10s %10s %10s\n", "frame", "points src/dec", "D1 dB", "D2 dB", "Y dB", "U dB", "V dB");
    Quality sum;
    std::string frames;
    for (unsigned long long n = first; n < first + count; ++n) {
      const GridCloud a = load(source.path(n)), b = load(decoded.path(n));
      const Quality q = measureQuality(a.view(), b.view(), options);
      if (q.sourcePoints == 0 || q.decodedPoints == 0) throw cli::InputError("frame " + std::to_string(n) + " has no points to compare");
      sum.d1Psnr += q.d1Psnr, sum.d2Psnr += q.d2Psnr, sum.yPsnr += q.yPsnr, sum.uPsnr += q.uPsnr, sum.vPsnr += q.vPsnr;
      if (json) frames += std::string(frames.empty() ? "" : ",\n    ") + jsonFrame(n, q);
      else printRow(std::to_string(n), q, std::to_string(q.sourcePoints) + "/" + std::to_string(q.decodedPoints));
    }
    const double n = double(count);
    sum.d1Psnr /= n, sum.d2Psnr /= n, sum.yPsnr /= n, sum.uPsnr /= n, sum.vPsnr /= n;
    char peak[64];
    std::snprintf(peak, sizeof peak, "%.9g", options.peak);
    if (json) std::printf("{\n  \"peak\": %s,\n  \"frames\": [\n    %s\n  ],\n  \"average\": {%s}\n}\n", peak, frames.c_str(), jsonPsnrs(sum).c_str());
    else printRow("average", sum, std::to_string(count) + " frames");
  } catch (const cli::UsageError& e) {
    return refuse(cli::kUsage, e.what());
  } catch (const cli::InputError& e) {
    return refuse(cli::kInput, e.what());
  }
  return cli::kOk;
}
