// vpcc-decode: decodes a V3C/V-PCC sample stream and reports what it found, per frame: patch
// count, point count, the TMC2-style frame MD5 before post-processing and after it (geometry
// smoothing, colour transfer), with the time each stage took. Optionally writes each
// post-processed frame as an ASCII PLY.
//
//   vpcc-decode stream.bin [--ply out_%04d.ply]   (vpcc-decode --help)
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "cli.h"
#include "frame_pattern.h"
#include "vpcc/atlas.h"
#include "vpcc/bit_reader.h"
#include "vpcc/parser.h"
#include "vpcc/postprocess.h"
#include "vpcc/reconstruct.h"

namespace {

/// A PLY file could not be written (exit kOutput; every other failure is the stream's).
struct OutputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

const char* const kHelp =
    "Usage: vpcc-decode STREAM.v3c [--ply OUT_%04d.ply]\n"
    "\n"
    "Decodes a V3C (V-PCC) sample stream and prints, per frame, the patch and point counts, the frame MD5\n"
    "before and after post-processing and the time each stage took.\n"
    "\n"
    "  --ply PATTERN   also write each post-processed frame as an ASCII PLY; PATTERN holds the frame\n"
    "                  number as %d or %0Nd (e.g. out_%04d.ply)\n"
    "\n"
    "Exit codes: 0 done, 2 usage (unknown option, bad value), 3 input (STREAM missing, unreadable or not\n"
    "a valid V3C stream), 4 output (a PLY file could not be written).\n";

int refuse(int code, const std::string& message) {
  std::fprintf(stderr, "vpcc-decode: %s\n", message.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  std::string streamPath;
  cli::FramePattern plyPattern;
  bool writePly = false;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      if (a == "--help" || a == "-h") {
        std::fputs(kHelp, stdout);
        return cli::kOk;
      } else if (a == "--ply") {
        const std::string pattern = cli::valueAfter(argc, argv, i);
        std::string error;
        if (!cli::parseFramePattern(pattern, plyPattern, error)) throw cli::UsageError("--ply: " + error);
        writePly = true;
      } else if (a.size() > 1 && a[0] == '-') {
        throw cli::UsageError("unknown option '" + a + "' (vpcc-decode --help)");
      } else if (streamPath.empty()) {
        streamPath = a;
      } else {
        throw cli::UsageError("one stream at a time ('" + streamPath + "', then '" + a + "')");
      }
    }
    if (streamPath.empty()) throw cli::UsageError("no stream given (vpcc-decode STREAM.v3c; vpcc-decode --help)");
  } catch (const cli::UsageError& e) {
    return refuse(cli::kUsage, e.what());
  }
  std::ifstream in(streamPath, std::ios::binary);
  if (!in) return refuse(cli::kInput, "cannot read " + streamPath);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  try {
    const auto t0 = std::chrono::steady_clock::now();
    const auto sequences = vpcc::parseSampleStream(bytes);
    auto decoder = vpcc::makeLibavDecoder();
    uint32_t frameBase = 0;
    bool warnedOccupancySynthesis = false;
    for (const auto& seq : sequences) {
      const auto video = vpcc::decodeVideo(seq, *decoder);
      const auto frames = vpcc::decodeAtlas(seq);
      for (const auto& atlas : frames) {
        const auto r0 = std::chrono::steady_clock::now();
        const auto reconstructed = vpcc::reconstructFrame(seq, atlas, video);
        const auto r1 = std::chrono::steady_clock::now();
        vpcc::PostProcessReport report;
        const auto frame = vpcc::postProcess(seq, atlas, reconstructed, &report);
        const auto r2 = std::chrono::steady_clock::now();
        auto ms = [](auto a, auto b) { return std::chrono::duration<double, std::milli>(b - a).count(); };
        std::printf("frame %u: patches %zu, points %zu, md5 %s, post-processed md5 %s (%zu points smoothed, %zu recoloured); "
                    "reconstruction %.1f ms, post-processing %.1f ms\n",
                    frameBase + atlas.afoc, atlas.patchCount(), frame.size(), vpcc::frameMd5(reconstructed).c_str(),
                    vpcc::frameMd5(frame).c_str(), report.movedPoints, report.recolouredPoints, ms(r0, r1), ms(r1, r2));
        if (report.occupancySynthesisSkipped && !warnedOccupancySynthesis) {
          std::fprintf(stderr, "vpcc-decode: warning: the stream asks for occupancy synthesis (Rec2 patch border "
                               "filtering), which this decoder does not apply; frames differ from a conforming Rec2 "
                               "decoder's\n");
          warnedOccupancySynthesis = true;
        }
        if (writePly) {
          const std::string path = plyPattern.path(frameBase + atlas.afoc);
          FILE* out = std::fopen(path.c_str(), "w");
          if (!out) throw OutputError("cannot write " + path);
          std::fprintf(out, "ply\nformat ascii 1.0\nelement vertex %zu\nproperty float x\nproperty float y\n"
                            "property float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n",
                       frame.size());
          for (size_t i = 0; i < frame.size(); ++i)
            std::fprintf(out, "%d %d %d %d %d %d\n", frame.positions[i * 3], frame.positions[i * 3 + 1],
                         frame.positions[i * 3 + 2], frame.colors[i * 3], frame.colors[i * 3 + 1], frame.colors[i * 3 + 2]);
          if (std::fclose(out) != 0) throw OutputError("cannot write " + path);
        }
      }
      frameBase += uint32_t(frames.size());
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%u frames in %.0f ms (%.1f frames/s)\n", frameBase, ms, frameBase * 1000.0 / ms);
  } catch (const OutputError& e) {
    return refuse(cli::kOutput, e.what());
  } catch (const vpcc::ParseError& e) {
    return refuse(cli::kInput, std::string("invalid bitstream: ") + e.what());
  } catch (const std::exception& e) {
    return refuse(cli::kInput, streamPath + ": " + e.what());
  }
  return cli::kOk;
}
