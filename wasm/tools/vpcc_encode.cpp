// vpcc-encode: PLY frames → one V3C (V-PCC) segment, with an optional quality report that
// decodes the result with our decoder and compares it with the input (pc_error-style PSNR).
//
//   vpcc-encode -o out.v3c [options] frame0.ply frame1.ply ...   (vpcc-encode --help lists them)
#include <array>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "cli.h"
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

namespace {

const char* const kHelp =
    "Usage: vpcc-encode -o OUT.v3c [options] FRAME.ply...\n"
    "\n"
    "Encodes PLY frames into one V3C (V-PCC) sample stream with explicit settings.\n"
    "\n"
    "  -o FILE                    output V3C file (required)\n"
    "  --codec avc|hevc           video codec group (default avc)\n"
    "  --maps 1|2                 geometry/attribute maps (default 2)\n"
    "  --lod 1|2|3|4              level of detail (default 1)\n"
    "  --qp-geo N, --qp-attr N    geometry and attribute quantisers, 0 … 51 (default 24, 30)\n"
    "  --qp-occ N                 occupancy quantiser, 0 … 51 (default 36)\n"
    "  --chroma-qp-offset N       attribute chroma quantiser minus luma's, -12 … 12 (default 0)\n"
    "  --occupancy-precision 1|2|4  (default 4)\n"
    "  --bits N                   voxel grid bit depth, 4 … 16 (default 10)\n"
    "  --fit                      float coordinates in any unit: scaled onto the grid, aspect kept\n"
    "  --threads N                video encoding threads, 1 … 256 (default 1)\n"
    "  --inter 0|1                predict atlas frames from the previous one (default 1)\n"
    "  --all-intra                every video picture intra coded (default: one GOP per sequence)\n"
    "  --preset NAME              x264/x265 preset (default veryfast for AVC, slow for HEVC)\n"
    "  --smoothing                ask decoders for grid geometry smoothing (SEI: grid 8, threshold 64)\n"
    "  --report                   decode the result and print PSNR, bits per point and rates\n"
    "\n"
    "Exit codes: 0 done, 2 usage (unknown option, bad value), 3 input (a frame missing or unusable),\n"
    "4 output (encoding failed or OUT could not be written).\n";

int refuse(int code, const std::string& message) {
  std::fprintf(stderr, "vpcc-encode: %s\n", message.c_str());
  return code;
}

}  // namespace

int main(int argc, char** argv) {
  EncoderConfig cfg;
  std::string output;
  bool report = false, fit = false;
  std::string preset;
  std::vector<std::string> inputs;
  try {
    for (int i = 1; i < argc; ++i) {
      const std::string a = argv[i];
      auto next = [&] { return cli::valueAfter(argc, argv, i); };
      if (a == "--help" || a == "-h") {
        std::fputs(kHelp, stdout);
        return cli::kOk;
      } else if (a == "-o") output = next();
      else if (a == "--codec") cfg.codec = cli::choice(a, next(), "avc|hevc") == "avc" ? VideoCodec::Avc : VideoCodec::Hevc;
      else if (a == "--maps") cfg.mapCount = unsigned(cli::integer(a, next(), 1, 2));
      else if (a == "--lod") cfg.lod = unsigned(cli::integer(a, next(), 1, 4));
      else if (a == "--qp-geo") cfg.geometryQp = int(cli::integer(a, next(), 0, 51));
      else if (a == "--qp-attr") cfg.attributeQp = int(cli::integer(a, next(), 0, 51));
      else if (a == "--chroma-qp-offset") cfg.attributeChromaQpOffset = int(cli::integer(a, next(), -12, 12));
      else if (a == "--qp-occ") cfg.occupancyQp = int(cli::integer(a, next(), 0, 51));
      else if (a == "--occupancy-precision") cfg.occupancyPrecision = unsigned(std::stoul(cli::choice(a, next(), "1|2|4")));
      else if (a == "--bits") cfg.geometryBits = unsigned(cli::integer(a, next(), 4, 16));
      else if (a == "--threads") cfg.threads = int(cli::integer(a, next(), 1, 256));
      else if (a == "--inter") cfg.interPrediction = cli::choice(a, next(), "0|1") == "1";
      else if (a == "--smoothing") cfg.geometrySmoothing = true;
      else if (a == "--all-intra") cfg.allIntra = true;
      else if (a == "--preset") preset = cli::choice(a, next(), "ultrafast|superfast|veryfast|faster|fast|medium|slow|slower|veryslow|placebo");
      else if (a == "--fit") fit = true;
      else if (a == "--report") report = true;
      else if (a.size() > 1 && a[0] == '-') throw cli::UsageError("unknown option '" + a + "' (vpcc-encode --help)");
      else inputs.push_back(a);
    }
    if (output.empty()) throw cli::UsageError("no output file (-o OUT.v3c; vpcc-encode --help)");
    if (inputs.empty()) throw cli::UsageError("no input frames (FRAME.ply...; vpcc-encode --help)");
  } catch (const cli::UsageError& e) {
    return refuse(cli::kUsage, e.what());
  }
  av_log_set_level(AV_LOG_ERROR);  // x264/x265 statistics are not ours to print
  std::vector<InputFrame> frames;
  try {
    std::vector<PlyCloud> clouds;
    std::array<double, 6> box = {1e300, 1e300, 1e300, -1e300, -1e300, -1e300};
    for (const auto& path : inputs) {
      clouds.push_back(readPly(path));
      growBounds(clouds.back(), box);
    }
    const GridFit grid = fitToGrid(box, cfg.geometryBits);
    for (size_t i = 0; i < inputs.size(); ++i) {
      frames.push_back(fit ? voxelize(clouds[i], cfg.geometryBits, grid, inputs[i]) : voxelize(clouds[i], cfg.geometryBits, inputs[i]));
      if (frames.back().size() == 0) throw std::runtime_error(inputs[i] + ": no points");
    }
    if (fit) std::printf("fitted: %.6g voxels per input unit\n", grid.voxelsPerUnit);
  } catch (const std::exception& e) {
    return refuse(cli::kInput, e.what());
  }
  try {
    const auto t0 = std::chrono::steady_clock::now();
    auto video = makeLibavEncoder();
    EncodeStats st;
    if (!preset.empty()) cfg.preset = preset.c_str();
    const std::vector<uint8_t> bytes = encodeSequence(frames, cfg, *video, &st);
    const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    std::ofstream file(output, std::ios::binary);
    file.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
    file.close();
    if (!file) throw std::runtime_error(output + ": cannot write");
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
    return refuse(cli::kOutput, e.what());
  }
  return cli::kOk;
}
