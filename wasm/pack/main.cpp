// holoquic-pack: turns point-cloud sequences (or nothing: the built-in demo) into a content
// directory the origin serves — per object × quality × 1-second segment V-PCC files and a DASH
// MPD (docs/mpd.md) — plus a quality report.
//
//   holoquic-pack demo [--out content/demo] [--seconds 10] [--dense] [--codec avc|hevc] [--threads N]
//   holoquic-pack ply --out content/NAME --object ID=DIR [--object ID=DIR ...] [--bits 10]
//                     [--scale METRES_PER_VOXEL] [--codec avc|hevc] [--threads N]
//   holoquic-pack gltf --out content/NAME --object ID=MODEL.glb [--object ...] [--seconds N]
//                      [--animation INDEX] [--bits 10] [--codec avc|hevc] [--threads N]
//   holoquic-pack sample --out DIR --object ID=MODEL.glb [...]   (the gltf mode's point clouds as
//                      PLY frames DIR/ID/frame-NNNNN.ply, nothing encoded)
//   Every encoding mode also takes --inter 0|1: atlas frames after a segment's first predicted
//   from the previous one (INTER/SKIP patches; default 1, a smaller atlas for the same points),
//   and --smoothing: decoders are asked for grid geometry smoothing (Rec1 SEI; smoother seams,
//   more decoding work).
#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "figures.h"
#include "gltf.h"
#include "mpd.h"
#include "surface_sampler.h"
#include "vpcc/atlas.h"
#include "vpcc/encoder.h"
#include "vpcc/parser.h"
#include "vpcc/ply.h"
#include "vpcc/quality.h"
#include "vpcc/reconstruct.h"

extern "C" {
#include <libavutil/log.h>
}

namespace fs = std::filesystem;
using namespace vpcc;
using namespace holoquic;

namespace {

constexpr unsigned kFramesPerSegment = 30;
constexpr unsigned kQualities = 5;

/// The quality ladder: level of detail, map count and quantisers from lowest to highest.
struct Rung {
  unsigned lod, maps;
  int geometryQp, attributeQp;
};
/// About a 10× rate span (the reference paper's objects span 2.4 → 54 Mbit/s at ~800 k points; a
/// 200 k-point object here spans ~1.4 → ~15 Mbit/s): a quarter of the points at coarse
/// quantisers at the bottom, two maps at fine ones at the top.
constexpr Rung kLadder[kQualities] = {{2, 1, 36, 46}, {2, 1, 30, 38}, {1, 1, 28, 34}, {1, 2, 22, 28}, {1, 2, 14, 22}};

struct Source {
  std::string id;
  // Frames of segment k (the demo generates them; PLY objects read them).
  std::function<std::vector<InputFrame>(unsigned segment)> segment;
  unsigned segments = 0, bits = 10;
  double scale = 0.002;
};

struct Options {
  std::string mode, out, codec = "avc";
  unsigned seconds = 10, threads = std::max(1u, std::thread::hardware_concurrency());
  bool secondsGiven = false;
  int animation = 0;
  bool dense = false;
  bool inter = true;
  bool smoothing = false;
  unsigned bits = 10;
  double scale = 0;
  std::vector<std::pair<std::string, std::string>> objects;
};

[[noreturn]] void fail(const std::string& message) {
  std::fprintf(stderr, "holoquic-pack: %s\n", message.c_str());
  std::exit(1);
}

std::vector<Source> demoSources(const Options& o) {
  std::vector<Source> sources;
  for (uint32_t i = 0; i < 4; ++i) {
    FigureStyle style;
    style.seed = i;
    style.bits = o.dense ? 10 : 9;
    style.metresPerVoxel = o.dense ? 0.0021 : 0.0055;
    Source s;
    s.id = "figure-" + std::to_string(i);
    s.bits = style.bits;
    s.scale = style.metresPerVoxel;
    s.segments = o.seconds;
    s.segment = [style](unsigned k) {
      std::vector<InputFrame> frames;
      for (unsigned f = 0; f < kFramesPerSegment; ++f) frames.push_back(figureFrame(style, k + f / double(kFramesPerSegment)));
      return frames;
    };
    sources.push_back(std::move(s));
  }
  return sources;
}

std::vector<Source> plySources(const Options& o) {
  std::vector<Source> sources;
  for (const auto& [id, dir] : o.objects) {
    std::vector<std::string> files;
    std::error_code ec;
    for (const auto& entry : fs::directory_iterator(dir, ec))
      if (entry.path().extension() == ".ply") files.push_back(entry.path().string());
    if (ec) fail(dir + ": " + ec.message());
    std::sort(files.begin(), files.end());
    if (files.empty()) fail(dir + ": no .ply files");
    Source s;
    s.id = id;
    s.bits = o.bits;
    s.scale = o.scale > 0 ? o.scale : 1.8 / double(1u << o.bits);
    // Whole seconds; a sequence shorter than one second is played forward then backward to fill it.
    s.segments = std::max<unsigned>(1, unsigned(files.size() / kFramesPerSegment));
    const unsigned bits = o.bits;
    s.segment = [files, bits](unsigned k) {
      std::vector<InputFrame> frames;
      const size_t n = files.size();
      for (unsigned f = 0; f < kFramesPerSegment; ++f) {
        size_t index = size_t(k) * kFramesPerSegment + f;
        if (n < kFramesPerSegment) {  // ping-pong over the short sequence
          const size_t period = n > 1 ? 2 * n - 2 : 1;
          index %= period;
          if (index >= n) index = period - index;
        }
        frames.push_back(voxelize(readPly(files[index]), bits, files[index]));
        if (frames.back().size() == 0) throw std::runtime_error(files[index] + ": no points");
      }
      return frames;
    };
    sources.push_back(std::move(s));
  }
  return sources;
}

/// Animated glTF models sampled at 30 fps onto a voxel grid that holds the whole animation.
/// Without --seconds the scene lasts the longest animation rounded up to whole seconds (at least
/// one); every animation loops.
std::vector<Source> gltfSources(const Options& o) {
  std::vector<std::shared_ptr<const GltfModel>> models;
  unsigned longest = 1;  // whole seconds of the longest animation: every object loops to it
  for (const auto& [id, file] : o.objects) {
    try {
      models.push_back(std::make_shared<const GltfModel>(loadGltf(file)));
    } catch (const std::exception& e) {
      fail(e.what());
    }
    const auto& animations = models.back()->animations;
    if (!animations.empty() && o.animation >= 0 && size_t(o.animation) < animations.size())
      longest = std::max(longest, unsigned(std::ceil(animations[size_t(o.animation)].end - animations[size_t(o.animation)].start - 1e-6)));
  }
  std::vector<Source> sources;
  for (size_t m = 0; m < models.size(); ++m) {
    const std::string& id = o.objects[m].first;
    const std::string& file = o.objects[m].second;
    const std::shared_ptr<const GltfModel> model = models[m];
    const int animation = model->animations.empty() ? -1 : o.animation;
    if (animation >= int(model->animations.size()))
      fail(file + ": no animation " + std::to_string(o.animation) + " (it has " + std::to_string(model->animations.size()) + ")");
    Source s;
    s.id = id;
    s.bits = o.bits;
    s.segments = o.secondsGiven ? o.seconds : longest;
    std::array<double, 6> box = {1e300, 1e300, 1e300, -1e300, -1e300, -1e300};
    for (unsigned f = 0; f < s.segments * kFramesPerSegment; ++f)
      growBox(poseModel(*model, animation, f / double(kFramesPerSegment)), box);
    if (box[0] > box[3]) fail(file + ": the model has no triangles to sample");
    const VoxelGrid grid = fitGrid(box, o.bits);
    s.scale = o.scale > 0 ? o.scale : 1 / grid.voxelsPerUnit;  // glTF units are metres
    s.segment = [model, animation, grid, file](unsigned k) {
      std::vector<InputFrame> frames;
      for (unsigned f = 0; f < kFramesPerSegment; ++f) {
        const unsigned index = k * kFramesPerSegment + f;
        frames.push_back(voxelizeSurfaces(*model, poseModel(*model, animation, index / double(kFramesPerSegment)), grid));
        if (frames.back().size() == 0) throw std::runtime_error(file + ": frame " + std::to_string(index) + " samples to no points");
      }
      return frames;
    };
    sources.push_back(std::move(s));
  }
  return sources;
}

/// Publishes a finished staging directory atomically: `out` is either the old one or the
/// complete new one, never half written.
void publish(const fs::path& staging, const std::string& out) {
  const fs::path old = out + ".old";
  fs::remove_all(old);
  if (fs::exists(out)) fs::rename(out, old);
  fs::rename(staging, out);
  fs::remove_all(old);
}

/// The sample mode: every frame of every object as a PLY file (what the gltf mode would encode).
int writeSampledFrames(const std::vector<Source>& sources, const std::string& out) {
  const fs::path staging = out + ".partial";
  fs::remove_all(staging);
  for (const Source& s : sources) {
    fs::create_directories(staging / s.id);
    for (unsigned k = 0; k < s.segments; ++k) {
      const std::vector<InputFrame> frames = s.segment(k);
      for (size_t f = 0; f < frames.size(); ++f) {
        char name[32];
        std::snprintf(name, sizeof name, "frame-%05zu.ply", size_t(k) * kFramesPerSegment + f);
        const std::vector<int16_t> positions(frames[f].positions.begin(), frames[f].positions.end());
        writePly((staging / s.id / name).string(), positions.data(), frames[f].colors.data(), frames[f].size());
      }
    }
    std::printf("%s: %u frames on a %u-bit grid, %.5f m per voxel\n", s.id.c_str(), s.segments * kFramesPerSegment, s.bits, s.scale);
  }
  publish(staging, out);
  std::printf("wrote %s\n", out.c_str());
  return 0;
}

void checkObjectIds(const Options& o) {
  for (const auto& [id, path] : o.objects)
    if (id.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789-") != std::string::npos)
      fail("object id '" + id + "' must be [a-z0-9-]+");
}

struct Measured {
  double d1 = 0, d2 = 0, y = 0, u = 0, v = 0;
  size_t frames = 0;
};

}  // namespace

int main(int argc, char** argv) {
  av_log_set_level(AV_LOG_ERROR);  // x264/x265 statistics are not ours to print
  Options o;
  if (argc < 2) fail("usage: holoquic-pack demo|ply|gltf|sample [options] (see the header of wasm/pack/main.cpp or README)");
  o.mode = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    auto next = [&]() -> std::string {
      if (i + 1 >= argc) fail(a + " needs a value");
      return argv[++i];
    };
    if (a == "--out") o.out = next();
    else if (a == "--seconds") o.seconds = unsigned(std::stoul(next())), o.secondsGiven = true;
    else if (a == "--animation") o.animation = std::stoi(next());
    else if (a == "--dense") o.dense = true;
    else if (a == "--codec") o.codec = next();
    else if (a == "--threads") o.threads = unsigned(std::stoul(next()));
    else if (a == "--bits") o.bits = unsigned(std::stoul(next()));
    else if (a == "--scale") o.scale = std::stod(next());
    else if (a == "--smoothing") o.smoothing = true;
    else if (a == "--inter") {
      const std::string v = next();
      if (v != "0" && v != "1") fail("--inter is 0 or 1");
      o.inter = v == "1";
    } else if (a == "--object") {
      const std::string v = next();
      const size_t eq = v.find('=');
      if (eq == std::string::npos || eq == 0) fail("--object wants ID=DIR");
      o.objects.emplace_back(v.substr(0, eq), v.substr(eq + 1));
    } else fail("unknown option " + a);
  }
  if (o.codec != "avc" && o.codec != "hevc") fail("--codec is avc or hevc");
  if (o.seconds < 1 || o.seconds > 3600) fail("--seconds must be 1–3600");
  std::vector<Source> sources;
  if (o.mode == "demo") {
    if (o.out.empty()) o.out = "content/demo";
    sources = demoSources(o);
  } else if (o.mode == "ply") {
    if (o.out.empty() || o.objects.empty()) fail("ply mode needs --out and at least one --object ID=DIR");
    checkObjectIds(o);
    sources = plySources(o);
  } else if (o.mode == "gltf" || o.mode == "sample") {
    if (o.out.empty() || o.objects.empty()) fail(o.mode + " mode needs --out and at least one --object ID=MODEL.glb");
    checkObjectIds(o);
    sources = gltfSources(o);
    if (o.mode == "sample") {
      try {
        return writeSampledFrames(sources, o.out);
      } catch (const std::exception& e) {
        fs::remove_all(o.out + ".partial");
        fail(e.what());
      }
    }
  } else {
    fail("unknown mode '" + o.mode + "' (demo, ply, gltf or sample)");
  }
  // One scene length: checked before any encoding starts.
  for (const auto& s : sources)
    if (s.segments != sources.front().segments)
      fail("objects have different lengths (" + sources.front().id + ": " + std::to_string(sources.front().segments) + " s, " + s.id +
           ": " + std::to_string(s.segments) + " s)");
  const std::string scene = fs::path(o.out).filename().string();
  const fs::path staging = o.out + ".partial";
  fs::remove_all(staging);

  // Jobs: (object, segment); each encodes all qualities of its segment.
  struct Job {
    size_t object;
    unsigned segment;
  };
  std::vector<Job> jobs;
  for (size_t s = 0; s < sources.size(); ++s)
    for (unsigned k = 0; k < sources[s].segments; ++k) jobs.push_back({s, k});
  std::vector<ObjectInfo> objects(sources.size());
  std::vector<std::array<double, 6>> voxelBox(sources.size());  // voxel bounds over all frames
  for (size_t s = 0; s < sources.size(); ++s) {
    objects[s].id = sources[s].id;
    objects[s].codecs = o.codec == "avc" ? "v3c1.avc" : "v3c1.hevc";
    objects[s].scale = sources[s].scale;
    objects[s].playMode = o.mode == "demo" ? "pingpong" : "loop";
    objects[s].representations.resize(kQualities);
    for (unsigned q = 0; q < kQualities; ++q) {
      objects[s].representations[q].quality = q;
      objects[s].representations[q].segmentBytes.assign(sources[s].segments, 0);
      objects[s].representations[q].geometryBits = sources[s].bits;
    }
    voxelBox[s] = {1e9, 1e9, 1e9, -1e9, -1e9, -1e9};
  }
  std::vector<std::array<Measured, kQualities>> measured(sources.size());
  std::mutex lock;
  std::atomic<size_t> next{0}, finished{0};
  std::string error;
  auto worker = [&]() {
    auto video = makeLibavEncoder();
    auto decoder = makeLibavDecoder();
    for (size_t j; (j = next++) < jobs.size();) {
      const Job job = jobs[j];
      const Source& src = sources[job.object];
      try {
        const std::vector<InputFrame> frames = src.segment(job.segment);
        std::array<double, 6> box = {1e9, 1e9, 1e9, -1e9, -1e9, -1e9};
        for (const auto& f : frames)
          for (size_t i = 0; i < f.size(); ++i)
            for (int c = 0; c < 3; ++c) {
              box[c] = std::min(box[c], double(f.positions[i * 3 + c]));
              box[c + 3] = std::max(box[c + 3], double(f.positions[i * 3 + c]) + 1);
            }
        for (unsigned q = 0; q < kQualities; ++q) {
          EncoderConfig cfg;
          cfg.geometryBits = src.bits;
          cfg.codec = o.codec == "avc" ? VideoCodec::Avc : VideoCodec::Hevc;
          cfg.lod = kLadder[q].lod;
          cfg.mapCount = kLadder[q].maps;
          cfg.geometryQp = kLadder[q].geometryQp;
          cfg.attributeQp = kLadder[q].attributeQp;
          cfg.interPrediction = o.inter;
          cfg.geometrySmoothing = o.smoothing;
          EncodeStats st;
          const std::vector<uint8_t> bytes = encodeSequence(frames, cfg, *video, &st);
          const fs::path dir = staging / src.id / std::to_string(q);
          fs::create_directories(dir);
          char name[32];
          std::snprintf(name, sizeof name, "seg-%05u.v3c", job.segment);
          std::ofstream(dir / name, std::ios::binary).write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
          // Decode our own output: every segment must decode; the first one is also measured.
          const auto seqs = parseSampleStream(bytes);
          const auto atlas = decodeAtlas(seqs.at(0));
          const DecodedVideo decoded = decodeVideo(seqs[0], *decoder);
          double points = 0;
          Measured m;
          for (size_t f = 0; f < atlas.size(); ++f) {
            const PointCloudFrame out = reconstructFrame(seqs[0], atlas[f], decoded);
            points += double(out.size());
            if (job.segment == 0 && f % 15 == 0) {
              std::vector<int32_t> a(frames[f].positions.begin(), frames[f].positions.end());
              std::vector<int32_t> b(out.positions.begin(), out.positions.end());
              const Quality qm = measureQuality({a.data(), frames[f].colors.data(), frames[f].size()},
                                                {b.data(), out.colors.data(), out.size()}, src.bits);
              m.d1 += qm.d1Psnr, m.d2 += qm.d2Psnr, m.y += qm.yPsnr, m.u += qm.uPsnr, m.v += qm.vPsnr, ++m.frames;
            }
          }
          std::lock_guard<std::mutex> guard(lock);
          RepresentationInfo& r = objects[job.object].representations[q];
          r.segmentBytes[job.segment] = bytes.size();
          r.pointsPerFrame += points / double(atlas.size()) / double(src.segments);
          r.width = std::max(r.width, st.atlasWidth);
          r.height = std::max(r.height, st.atlasHeight);
          if (m.frames) measured[job.object][q] = m;
        }
        std::lock_guard<std::mutex> guard(lock);
        for (int c = 0; c < 3; ++c) {
          voxelBox[job.object][c] = std::min(voxelBox[job.object][c], box[c]);
          voxelBox[job.object][c + 3] = std::max(voxelBox[job.object][c + 3], box[c + 3]);
        }
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> guard(lock);
        if (error.empty()) error = src.id + " segment " + std::to_string(job.segment) + ": " + e.what();
        next = jobs.size();
      }
      const size_t done = ++finished;
      const int bar = int(40 * done / jobs.size());
      std::fprintf(stderr, "\r[%-40s] %zu/%zu segments", std::string(size_t(bar), '#').c_str(), done, jobs.size());
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < o.threads; ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  std::fprintf(stderr, "\n");
  if (!error.empty()) {
    fs::remove_all(staging);
    fail(error);
  }

  // Placement: objects on a circle of radius 2 m facing outward, feet on y = 0.
  const double radius = sources.size() > 1 ? 2.0 : 0.0;
  for (size_t s = 0; s < sources.size(); ++s) {
    const auto& vb = voxelBox[s];
    const double scale = sources[s].scale;
    const double angle = 2 * M_PI * double(s) / double(sources.size());
    // Facing outward: the object's +z turns to the direction (sin a, 0, cos a).
    objects[s].rotation = {0, std::sin(angle / 2), 0, std::cos(angle / 2)};
    const double cx = (vb[0] + vb[3]) / 2 * scale, cz = (vb[2] + vb[5]) / 2 * scale, minY = vb[1] * scale;
    auto rotate = [&](double x, double z, double& ox, double& oz) {
      ox = std::cos(angle) * x + std::sin(angle) * z;
      oz = -std::sin(angle) * x + std::cos(angle) * z;
    };
    double rx, rz;
    rotate(cx, cz, rx, rz);
    objects[s].position = {radius * std::sin(angle) - rx, -minY, radius * std::cos(angle) - rz};
    std::array<double, 6> bbox = {1e9, 1e9, 1e9, -1e9, -1e9, -1e9};
    for (int corner = 0; corner < 8; ++corner) {
      const double x = (corner & 1 ? vb[3] : vb[0]) * scale, y = (corner & 2 ? vb[4] : vb[1]) * scale,
                   z = (corner & 4 ? vb[5] : vb[2]) * scale;
      double ox, oz;
      rotate(x, z, ox, oz);
      const double p[3] = {ox + objects[s].position[0], y + objects[s].position[1], oz + objects[s].position[2]};
      for (int c = 0; c < 3; ++c) bbox[c] = std::min(bbox[c], p[c]), bbox[c + 3] = std::max(bbox[c + 3], p[c]);
    }
    objects[s].bbox = bbox;
  }
  const unsigned segments = sources.front().segments;
  std::ofstream(staging / "manifest.mpd") << writeMpd(scene, objects, segments);

  // Quality report (first segment, frames 0 and 15) next to the manifest.
  std::ofstream report(staging / "report.json");
  report << "{\n  \"scene\": \"" << scene << "\",\n  \"objects\": [\n";
  std::printf("%-10s %2s %9s %9s %7s %7s %7s %7s %7s\n", "object", "q", "kbit/s", "points", "bpp", "D1 dB", "D2 dB", "Y dB", "U dB");
  for (size_t s = 0; s < objects.size(); ++s) {
    report << "    {\"id\": \"" << objects[s].id << "\", \"qualities\": [\n";
    for (unsigned q = 0; q < kQualities; ++q) {
      const RepresentationInfo& r = objects[s].representations[q];
      const Measured& m = measured[s][q];
      const double n = double(std::max<size_t>(m.frames, 1));
      size_t total = 0;
      for (size_t b : r.segmentBytes) total += b;
      const double kbps = double(total) * 8 / double(r.segmentBytes.size()) / 1000;
      const double bpp = double(total) * 8 / (double(r.segmentBytes.size()) * kFramesPerSegment * std::max(r.pointsPerFrame, 1.0));
      std::printf("%-10s %2u %9.0f %9.0f %7.3f %7.2f %7.2f %7.2f %7.2f\n", objects[s].id.c_str(), q, kbps, r.pointsPerFrame, bpp,
                  m.d1 / n, m.d2 / n, m.y / n, m.u / n);
      char line[512];
      std::snprintf(line, sizeof line,
                    "      {\"quality\": %u, \"avgKbps\": %.1f, \"pointsPerFrame\": %.0f, \"bitsPerPoint\": %.4f, \"d1Psnr\": %.2f, "
                    "\"d2Psnr\": %.2f, \"yPsnr\": %.2f, \"uPsnr\": %.2f, \"vPsnr\": %.2f}%s\n",
                    q, kbps, r.pointsPerFrame, bpp, m.d1 / n, m.d2 / n, m.y / n, m.u / n, m.v / n, q + 1 < kQualities ? "," : "");
      report << line;
    }
    report << "    ]}" << (s + 1 < objects.size() ? "," : "") << "\n";
  }
  report << "  ]\n}\n";
  report.close();

  publish(staging, o.out);
  std::printf("wrote %s (%zu objects × %u qualities × %u segments)\n", o.out.c_str(), objects.size(), kQualities, segments);
  return 0;
}
