// Packing a scene: every (object, segment) job encodes all rungs of the ladder, decodes each
// result back (every segment must decode; the first is also measured), then the placement, the
// MPD and the report are written and the content directory is published.
#include "encode_scene.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <thread>

#include "cli.h"
#include "content_dir.h"
#include "mpd.h"
#include "placement.h"
#include "progress.h"
#include "report.h"
#include "vpcc/atlas.h"
#include "vpcc/parser.h"
#include "vpcc/ply.h"
#include "vpcc/quality.h"
#include "vpcc/reconstruct.h"

namespace fs = std::filesystem;
using namespace vpcc;

namespace holoquic {
namespace {

using Box = std::array<double, 6>;
constexpr Box kEmptyBox = {1e9, 1e9, 1e9, -1e9, -1e9, -1e9};

/// Voxel bounds (max exclusive) of a segment's frames.
Box voxelBounds(const std::vector<InputFrame>& frames) {
  Box box = kEmptyBox;
  for (const auto& f : frames)
    for (size_t i = 0; i < f.size(); ++i)
      for (int c = 0; c < 3; ++c) {
        box[c] = std::min(box[c], double(f.positions[i * 3 + c]));
        box[c + 3] = std::max(box[c + 3], double(f.positions[i * 3 + c]) + 1);
      }
  return box;
}

EncoderConfig rungConfig(const ScenePlan& plan, const Rung& rung, unsigned bits) {
  EncoderConfig cfg;
  cfg.geometryBits = bits;
  cfg.codec = plan.codec == "avc" ? VideoCodec::Avc : VideoCodec::Hevc;
  cfg.lod = rung.lod;
  cfg.mapCount = rung.maps;
  cfg.geometryQp = rung.geometryQp;
  cfg.attributeQp = rung.attributeQp;
  cfg.interPrediction = plan.inter;
  cfg.geometrySmoothing = plan.smoothing;
  return cfg;
}

}  // namespace

void packScene(const ScenePlan& plan, const std::vector<Source>& sources) {
  const std::string scene = fs::path(plan.out).filename().string();
  const fs::path staging = startStaging(plan.out);
  const size_t rungs = plan.ladder.size();
  const SceneTiming timing{plan.frameRate, plan.framesPerSegment()};

  struct Job {
    size_t object;
    unsigned segment;
  };
  std::vector<Job> jobs;
  for (unsigned k = 0; k < sources.front().segments; ++k)  // segment by segment: every object's first ones come first
    for (size_t s = 0; s < sources.size(); ++s) jobs.push_back({s, k});
  std::vector<ObjectInfo> objects(sources.size());
  std::vector<Box> voxelBox(sources.size(), kEmptyBox);
  std::vector<std::pair<std::string, size_t>> progressObjects;
  for (size_t s = 0; s < sources.size(); ++s) {
    objects[s].id = sources[s].id;
    objects[s].codecs = plan.codec == "avc" ? "v3c1.avc" : "v3c1.hevc";
    objects[s].playMode = sources[s].playMode;
    objects[s].representations.resize(rungs);
    for (unsigned q = 0; q < rungs; ++q) {
      objects[s].representations[q].quality = q;
      objects[s].representations[q].segmentBytes.assign(sources[s].segments, 0);
      objects[s].representations[q].geometryBits = sources[s].bits;
    }
    progressObjects.emplace_back(sources[s].id, sources[s].segments);
  }
  std::vector<std::vector<Measured>> measured(sources.size(), std::vector<Measured>(rungs));
  std::mutex lock;
  std::atomic<size_t> next{0};
  std::string error;
  bool inputError = false;
  Progress progress(progressObjects, stderr);
  auto worker = [&]() {
    auto video = makeLibavEncoder();
    auto decoder = makeLibavDecoder();
    for (size_t j; (j = next++) < jobs.size();) {
      const Job job = jobs[j];
      const Source& src = sources[job.object];
      try {
        const std::vector<InputFrame> frames = src.segment(job.segment);
        const Box box = voxelBounds(frames);
        for (unsigned q = 0; q < rungs; ++q) {
          EncodeStats st;
          const std::vector<uint8_t> bytes = encodeSequence(frames, rungConfig(plan, plan.ladder[q], src.bits), *video, &st);
          char name[32];
          std::snprintf(name, sizeof name, "seg-%05u.v3c", job.segment);
          writeFile(staging / src.id / std::to_string(q) / name, bytes);
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
        if (error.empty()) {
          error = src.id + " segment " + std::to_string(job.segment) + ": " + e.what();
          inputError = dynamic_cast<const cli::InputError*>(&e) != nullptr;
        }
        next = jobs.size();
        continue;
      }
      progress.finished(job.object);
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, plan.threads); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  progress.close();
  if (!error.empty()) {
    std::error_code ec;
    fs::remove_all(staging, ec);
    if (inputError) throw cli::InputError(error);
    throw std::runtime_error(error);
  }

  for (size_t s = 0; s < sources.size(); ++s) {
    const Placed p = place(plan.objects[s], voxelBox[s], sources[s].metresPerVoxel, s, sources.size());
    objects[s].position = p.position;
    objects[s].rotation = p.rotation;
    objects[s].scale = p.scale;
    objects[s].bbox = p.bbox;
  }
  const unsigned segments = sources.front().segments;
  const std::string mpd = writeMpd(scene, objects, segments, timing);
  writeFile(staging / "manifest.mpd", std::vector<uint8_t>(mpd.begin(), mpd.end()));
  writeReport((staging / "report.json").string(), scene, objects, measured, timing);
  publish(staging, plan.out);
  std::printf("wrote %s (%zu objects × %zu qualities × %u segments of %g s at %u fps)\n", plan.out.c_str(), objects.size(), rungs,
              segments, timing.segmentSeconds(), plan.frameRate);
}

void writeSampledFrames(const ScenePlan& plan, const std::vector<Source>& sources) {
  const fs::path staging = startStaging(plan.out);
  try {
    for (const Source& s : sources) {
      for (unsigned k = 0; k < s.segments; ++k) {
        const std::vector<InputFrame> frames = s.segment(k);
        for (size_t f = 0; f < frames.size(); ++f) {
          char name[32];
          std::snprintf(name, sizeof name, "frame-%05zu.ply", size_t(k) * plan.framesPerSegment() + f);
          fs::create_directories(staging / s.id);
          const std::vector<int16_t> positions(frames[f].positions.begin(), frames[f].positions.end());
          writePly((staging / s.id / name).string(), positions.data(), frames[f].colors.data(), frames[f].size());
        }
      }
      std::printf("%s: %u frames on a %u-bit grid, %.5f m per voxel\n", s.id.c_str(), s.segments * plan.framesPerSegment(), s.bits,
                  s.metresPerVoxel);
    }
  } catch (...) {
    std::error_code ec;
    fs::remove_all(staging, ec);
    throw;
  }
  publish(staging, plan.out);
  std::printf("wrote %s\n", plan.out.c_str());
}

}  // namespace holoquic
