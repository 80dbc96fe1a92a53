// vpcc-bench: per-frame CPU time of the native decoder's stages on a segment — parse + atlas
// decoding, reconstruction, post-processing — measured the same way as the wasm module's
// wasm/tools/wasm_bench.ts (CPU time, not wall: the machine is shared; medians), so the two can
// be compared. Video decoding (libavcodec) is timed too but reported separately. With helper
// threads (VPCC_THREADS=N) it also gives each stage's critical path (parallel::criticalPathMs:
// the time on idle cores, however busy this machine is).
//
//   vpcc-bench STREAM.bin... [--repeat N]
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "vpcc/api_session.h"
#include "vpcc/bit_reader.h"
#include "vpcc/postprocess.h"
#include "common/parallel.h"

namespace {

double cpuMs() {
  timespec t;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  int repeat = 3;
  std::vector<std::string> paths;
  for (int i = 1; i < argc; ++i) {
    if (!std::strcmp(argv[i], "--repeat") && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else paths.push_back(argv[i]);
  }
  if (paths.empty()) {
    std::fprintf(stderr, "usage: vpcc-bench STREAM.bin... [--repeat N]\n");
    return 2;
  }
  try {
    auto videoDecoder = vpcc::makeLibavDecoder();
    for (const auto& path : paths) {
      std::ifstream in(path, std::ios::binary);
      if (!in) throw std::runtime_error("cannot read " + path);
      const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
      std::vector<double> parse, video, reconstruct, post, reconstructPath, postPath;
      size_t points = 0;
      for (int r = 0; r < repeat; ++r) {
        vpcc::DecodeSession session;
        double t0 = cpuMs();
        session.load(bytes.data(), bytes.size());
        parse.push_back(cpuMs() - t0);
        // Pictures through the same path as in wasm (putPicture), decoded natively.
        t0 = cpuMs();
        for (uint32_t s = 0; s < session.streams().size(); ++s) {
          const auto& info = session.streams()[s];
          const auto pictures = videoDecoder->decode(info.bitstream->data, info.codec, info.bitDepth);
          for (uint32_t i = 0; i < pictures.size() && i < info.pictureCount; ++i) {
            const vpcc::Picture& p = pictures[i];
            vpcc::PictureInput input;
            input.width = p.width;
            input.height = p.height;
            input.sixteenBitSamples = true;
            input.decodedBitDepth = p.bitDepth;
            input.chroma444 = p.chroma444;
            for (int c = 0; c < 3; ++c) {
              input.planes[c] = p.planes[c].samples.data();
              input.strides[c] = p.planes[c].width;
            }
            session.putPicture(s, i, input);
          }
        }
        video.push_back((cpuMs() - t0) / std::max(1u, session.frameCount()));
        for (uint32_t f = 0; f < session.frameCount(); ++f) {
          t0 = cpuMs();
          double path0 = vpcc::parallel::criticalPathMs();
          points = session.reconstruct(f, false).size();
          const double plain = cpuMs() - t0, plainPath = vpcc::parallel::criticalPathMs() - path0;
          t0 = cpuMs();
          path0 = vpcc::parallel::criticalPathMs();
          session.reconstruct(f, true);
          reconstruct.push_back(plain);
          post.push_back(cpuMs() - t0 - plain);
          reconstructPath.push_back(plainPath);
          postPath.push_back(vpcc::parallel::criticalPathMs() - path0 - plainPath);
        }
      }
      std::printf("%s: %zu points/frame; parse + atlas %.1f ms/segment, video decoding %.1f ms/frame, "
                  "reconstruction %.1f ms/frame, post-processing %.1f ms/frame (CPU time, medians of %d runs)\n",
                  path.c_str(), points, median(parse), median(video), median(reconstruct), median(post), repeat);
      if (vpcc::parallel::helpers() > 0)
        std::printf("  %u threads, critical path: reconstruction %.1f ms/frame, post-processing %.1f ms/frame\n",
                    vpcc::parallel::helpers() + 1, median(reconstructPath), median(postPath));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vpcc-bench: %s\n", e.what());
    return 1;
  }
  return 0;
}
