// vpcc-encode: PLY frames → one V3C (V-PCC) segment, with an optional quality report that
// decodes the result with our decoder and compares it with the input (pc_error-style PSNR).
//
//   vpcc-encode -o out.v3c [options] frame0.ply frame1.ply ...
//     --codec avc|hevc   video codec group (default avc)
//     --maps 1|2         geometry/attribute maps (default 2)
//     --lod 1|2|3|4      level of detail (default 1)
//     --qp-geo N --qp-attr N --qp-occ N --occupancy-precision 1|2|4 --bits N --threads N
//     --inter 0|1        atlas frames after the first predicted from the previous one (default 1)
//     --smoothing        ask decoders for grid geometry smoothing (Rec1, SEI 66: grid 8, threshold 64)
//     --report           decode and print PSNR, bits per point and rates
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "vpcc/atlas.h"
#include "vpcc/encoder.h"
#include "vpcc/parser.h"
#include "vpcc/ply.h"
#include "vpcc/quality.h"
#include "vpcc/reconstruct.h"

extern "C" {
#include <libavutil/log.h>
}

using namespace vpcc;

static int usage() {
  std::fprintf(stderr,
               "usage: vpcc-encode -o out.v3c [--codec avc|hevc] [--maps 1|2] [--lod N] [--qp-geo N] [--qp-attr N] [--qp-occ N]\n"
               "                   [--occupancy-precision 1|2|4] [--bits N] [--threads N] [--inter 0|1] [--smoothing]\n"
               "                   [--report]\n"
               "                   frame.ply...\n");
  return 2;
}

int main(int argc, char** argv) {
  EncoderConfig cfg;
  std::string output;
  bool report = false;
  std::vector<std::string> inputs;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "-o") output = next();
      else if (a == "--codec") {
        const std::string c = next();
        if (c != "avc" && c != "hevc") throw std::invalid_argument("--codec is avc or hevc");
        cfg.codec = c == "avc" ? VideoCodec::Avc : VideoCodec::Hevc;
      } else if (a == "--maps") cfg.mapCount = unsigned(std::stoul(next()));
      else if (a == "--lod") cfg.lod = unsigned(std::stoul(next()));
      else if (a == "--qp-geo") cfg.geometryQp = std::stoi(next());
      else if (a == "--qp-attr") cfg.attributeQp = std::stoi(next());
      else if (a == "--qp-occ") cfg.occupancyQp = std::stoi(next());
      else if (a == "--occupancy-precision") cfg.occupancyPrecision = unsigned(std::stoul(next()));
      else if (a == "--bits") cfg.geometryBits = unsigned(std::stoul(next()));
      else if (a == "--threads") cfg.threads = std::stoi(next());
      else if (a == "--inter") {
        const std::string v = next();
        if (v != "0" && v != "1") throw std::invalid_argument("--inter is 0 or 1");
        cfg.interPrediction = v == "1";
      } else if (a == "--smoothing") cfg.geometrySmoothing = true;
      else if (a == "--report") report = true;
      else if (a.rfind("--", 0) == 0) return usage();
      else inputs.push_back(a);
    } catch (const std::exception& e) {
      std::fprintf(stderr, "vpcc-encode: %s\n", e.what());
      return 2;
    }
  }
  if (output.empty() || inputs.empty()) return usage();
  av_log_set_level(AV_LOG_ERROR);  // x264/x265 statistics are not ours to print
  try {
    std::vector<InputFrame> frames;
    for (const auto& path : inputs) frames.push_back(voxelize(readPly(path), cfg.geometryBits, path));
    const auto t0 = std::chrono::steady_clock::now();
    auto video = makeLibavEncoder();
    EncodeStats st;
    const std::vector<uint8_t> bytes = encodeSequence(frames, cfg, *video, &st);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::ofstream(output, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    std::printf("frames %zu  points/frame %.0f  covered %.2f%%  patches/frame %.1f  atlas %ux%u\n", st.frames,
                double(st.inputPoints) / st.frames, 100.0 * double(st.coveredPoints) / double(st.inputPoints),
                double(st.patches) / st.frames, st.atlasWidth, st.atlasHeight);
    std::printf("bytes %zu (atlas %zu, occupancy %zu, geometry %zu, attribute %zu)  %.2f Mbit/s at 30 fps\n", st.totalBytes,
                st.atlasBytes, st.occupancyBytes, st.geometryBytes, st.attributeBytes,
                double(st.totalBytes) * 8 * 30 / double(st.frames) / 1e6);
    std::printf("atlas tiles: %zu P of %zu; patches %zu INTER, %zu SKIP, %zu INTRA\n", st.pTiles, st.frames, st.interPatches,
                st.skipPatches, st.patches - st.interPatches - st.skipPatches);
    std::printf("time %.0f ms (patches+images %.0f, video %.0f, colour transfer %.0f)  %.2f frames/s\n", ms,
                st.segmentationMs, st.videoMs, st.transferMs, 1000.0 * double(st.frames) / ms);
    if (report) {
      const auto seqs = parseSampleStream(bytes);
      auto decoder = makeLibavDecoder();
      const DecodedVideo decoded = decodeVideo(seqs.at(0), *decoder);
      const auto atlas = decodeAtlas(seqs[0]);
      Quality sum;
      size_t decodedPoints = 0;
      for (size_t f = 0; f < atlas.size(); ++f) {
        const PointCloudFrame out = reconstructFrame(seqs[0], atlas[f], decoded);
        decodedPoints += out.size();
        std::vector<int32_t> src(frames[f].positions.begin(), frames[f].positions.end());
        std::vector<int32_t> dec(out.positions.begin(), out.positions.end());
        const Quality q = measureQuality({src.data(), frames[f].colors.data(), frames[f].size()},
                                         {dec.data(), out.colors.data(), out.size()}, cfg.geometryBits);
        sum.d1Psnr += q.d1Psnr, sum.d2Psnr += q.d2Psnr, sum.yPsnr += q.yPsnr, sum.uPsnr += q.uPsnr, sum.vPsnr += q.vPsnr;
      }
      const double n = double(atlas.size());
      std::printf("quality  D1 %.2f dB  D2 %.2f dB  Y %.2f dB  U %.2f dB  V %.2f dB  decoded points/frame %.0f  bpp %.3f\n",
                  sum.d1Psnr / n, sum.d2Psnr / n, sum.yPsnr / n, sum.uPsnr / n, sum.vPsnr / n, double(decodedPoints) / n,
                  double(st.totalBytes) * 8 / double(st.inputPoints));
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "vpcc-encode: %s\n", e.what());
    return 1;
  }
  return 0;
}
