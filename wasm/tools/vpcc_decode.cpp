// vpcc-decode: decodes a V3C/V-PCC sample stream and reports what it found, per frame: patch
// count, point count, the TMC2-style frame MD5 before post-processing and after it (geometry
// smoothing, colour transfer), with the time each stage took. Optionally writes each
// post-processed frame as an ASCII PLY.
//
//   vpcc-decode stream.bin [--ply out_%04d.ply]
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>

#include "vpcc/atlas.h"
#include "vpcc/bit_reader.h"
#include "vpcc/parser.h"
#include "vpcc/postprocess.h"
#include "vpcc/reconstruct.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: vpcc-decode stream.bin [--ply out_%%04d.ply]\n");
    return 2;
  }
  std::string plyPattern;
  for (int i = 2; i + 1 < argc; ++i)
    if (!std::strcmp(argv[i], "--ply")) plyPattern = argv[i + 1];
  std::ifstream in(argv[1], std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "vpcc-decode: cannot read %s\n", argv[1]);
    return 1;
  }
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
        if (!plyPattern.empty()) {
          char path[4096];
          std::snprintf(path, sizeof path, plyPattern.c_str(), frameBase + atlas.afoc);
          FILE* out = std::fopen(path, "w");
          if (!out) throw std::runtime_error(std::string("cannot write ") + path);
          std::fprintf(out, "ply\nformat ascii 1.0\nelement vertex %zu\nproperty float x\nproperty float y\n"
                            "property float z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n",
                       frame.size());
          for (size_t i = 0; i < frame.size(); ++i)
            std::fprintf(out, "%d %d %d %d %d %d\n", frame.positions[i * 3], frame.positions[i * 3 + 1],
                         frame.positions[i * 3 + 2], frame.colors[i * 3], frame.colors[i * 3 + 1], frame.colors[i * 3 + 2]);
          std::fclose(out);
        }
      }
      frameBase += uint32_t(frames.size());
    }
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::printf("%u frames in %.0f ms (%.1f frames/s)\n", frameBase, ms, frameBase * 1000.0 / ms);
  } catch (const vpcc::ParseError& e) {
    std::fprintf(stderr, "vpcc-decode: invalid bitstream: %s\n", e.what());
    return 1;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vpcc-decode: %s\n", e.what());
    return 1;
  }
  return 0;
}
