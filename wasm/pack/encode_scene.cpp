// Packing a scene: jobs encode one segment of one object at some rungs of the ladder and decode
// each result back (every segment must decode; the first is also measured). In one step (the
// default) a job takes all rungs and the directory is published when everything is done; a
// growing scene (--grow, growth.h) takes one rung per job, lowest first, and publishes a manifest
// each time a stage is complete. The placement, the MPD and the report come from the cells'
// results.
#include "encode_scene.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdio>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <mutex>
#include <thread>

#include "cli.h"
#include "content_dir.h"
#include "growth.h"
#include "mpd.h"
#include "placement.h"
#include "progress.h"
#include "rate_target.h"
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

/// One unit of work: one segment of one object at rungs firstRung … endRung − 1 (all of them
/// when packing in one step, so the frames are made once; one when growing).
struct Job {
  size_t object;
  unsigned segment, firstRung, endRung;
  size_t stage;  // the first stage that needs it
};

/// Every cell's result once it is encoded (or resumed), indexed by object, rung and segment.
class CellTable {
 public:
  CellTable(size_t objects, size_t rungs, unsigned segments)
      : rungs_(rungs), segments_(segments), cells_(objects * rungs * segments), done_(cells_.size(), false) {}
  bool done(const Cell& c) const { return done_[index(c)]; }
  const CellResult& at(const Cell& c) const { return cells_[index(c)]; }
  void set(const Cell& c, const CellResult& r) { cells_[index(c)] = r, done_[index(c)] = true; }
  bool covers(const Stage& stage, size_t objects) const {
    for (size_t o = 0; o < objects; ++o)
      for (unsigned q = 0; q < stage.rungs; ++q)
        for (unsigned k = 0; k < stage.segments; ++k)
          if (!done({o, q, k})) return false;
    return true;
  }

 private:
  size_t index(const Cell& c) const { return (c.object * rungs_ + c.rung) * segments_ + c.segment; }
  size_t rungs_;
  unsigned segments_;
  std::vector<CellResult> cells_;
  std::vector<bool> done_;
};

/// The jobs that publish `stages` in order, segment by segment within a stage (every object's
/// first seconds first), leaving out cells already done.
std::vector<Job> jobsFor(const std::vector<Stage>& stages, size_t objects, const CellTable& table) {
  std::vector<Job> jobs;
  Stage before;
  for (size_t s = 0; s < stages.size(); ++s) {
    const Stage& stage = stages[s];
    for (unsigned k = 0; k < stage.segments; ++k)
      for (size_t o = 0; o < objects; ++o) {
        // New in this stage: the added rungs of segments published before, every rung of the others.
        Job job{o, k, k < before.segments ? before.rungs : 0, stage.rungs, s};
        while (job.firstRung < job.endRung && table.done({o, job.firstRung, k})) ++job.firstRung;
        if (job.firstRung < job.endRung) jobs.push_back(job);
      }
    before = stage;
  }
  return jobs;
}

/// Encodes `frames` (segment `segment` of `src`) at `rung`, writes the file and decodes it back.
CellResult encodeCell(const ScenePlan& plan, const Source& src, const std::vector<InputFrame>& frames, const Box& box, const Rung& settings,
                      unsigned rung, unsigned segment, const fs::path& directory, VideoEncoder& video, VideoDecoder& decoder) {
  EncodeStats st;
  const std::vector<uint8_t> bytes = encodeSequence(frames, rungConfig(plan, settings, src.bits), video, &st);
  writeFile(directory / segmentFile(src.id, rung, segment), bytes);
  // Decode our own output: every segment must decode; the first one is also measured.
  const auto seqs = parseSampleStream(bytes);
  const auto atlas = decodeAtlas(seqs.at(0));
  const DecodedVideo decoded = decodeVideo(seqs[0], decoder);
  CellResult r;
  r.bytes = bytes.size();
  r.width = st.atlasWidth;
  r.height = st.atlasHeight;
  for (const CodedSequence& seq : seqs) r.levelIdc = std::max(r.levelIdc, seq.vps.ptl.level);  // as the stream declares it
  r.voxelBox = box;
  double points = 0;
  for (size_t f = 0; f < atlas.size(); ++f) {
    const PointCloudFrame out = reconstructFrame(seqs[0], atlas[f], decoded);
    points += double(out.size());
    if (segment == 0 && f % 15 == 0) {
      std::vector<int32_t> a(frames[f].positions.begin(), frames[f].positions.end());
      std::vector<int32_t> b(out.positions.begin(), out.positions.end());
      const Quality qm = measureQuality({a.data(), frames[f].colors.data(), frames[f].size()}, {b.data(), out.colors.data(), out.size()},
                                        src.bits);
      Measured& m = r.measured;
      m.d1 += qm.d1Psnr, m.d2 += qm.d2Psnr, m.y += qm.yPsnr, m.u += qm.uPsnr, m.v += qm.vPsnr, ++m.frames;
    }
  }
  r.pointsPerFrame = points / double(std::max<size_t>(atlas.size(), 1));
  return r;
}

/// The manifest's objects for `stage`: its rungs, its segments' sizes, the placement from the
/// voxel bounds of its segments.
std::vector<ObjectInfo> describeStage(const ScenePlan& plan, const std::vector<Source>& sources, const CellTable& table,
                                      const Stage& stage) {
  std::vector<ObjectInfo> objects(sources.size());
  for (size_t s = 0; s < sources.size(); ++s) {
    ObjectInfo& o = objects[s];
    o.id = sources[s].id;
    o.codecs = plan.codec == "avc" ? "v3c1.avc" : "v3c1.hevc";
    o.playMode = sources[s].playMode;
    Box box = kEmptyBox;
    for (unsigned q = 0; q < stage.rungs; ++q) {
      RepresentationInfo r;
      r.quality = q;
      r.geometryBits = sources[s].bits;
      for (unsigned k = 0; k < stage.segments; ++k) {
        const CellResult& c = table.at({s, q, k});
        r.segmentBytes.push_back(c.bytes);
        r.pointsPerFrame += c.pointsPerFrame / double(stage.segments);
        r.width = std::max(r.width, c.width);
        r.height = std::max(r.height, c.height);
        r.levelIdc = std::max(r.levelIdc, c.levelIdc);
        for (int i = 0; i < 3; ++i) box[i] = std::min(box[i], c.voxelBox[i]), box[i + 3] = std::max(box[i + 3], c.voxelBox[i + 3]);
      }
      o.representations.push_back(r);
    }
    const Placed p = place(plan.objects[s], box, sources[s].metresPerVoxel, s, sources.size());
    o.position = p.position;
    o.rotation = p.rotation;
    o.scale = p.scale;
    o.bbox = p.bbox;
  }
  return objects;
}

/// What a stage's manifest holds, for the console: "3 s at quality 0", "10 s at qualities 0–2".
std::string stageText(const Stage& stage, const SceneTiming& timing) {
  char seconds[32];
  std::snprintf(seconds, sizeof seconds, "%g s", stage.segments * timing.segmentSeconds());
  return seconds + std::string(" at ") + (stage.rungs == 1 ? "quality 0" : "qualities 0–" + std::to_string(stage.rungs - 1));
}

}  // namespace

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
  cfg.frameRate = plan.frameRate;
  return cfg;
}


void packScene(const ScenePlan& plan, const std::vector<Source>& sources) {
  const std::string scene = fs::path(plan.out).filename().string();
  const unsigned rungs = unsigned(plan.ladder.size()), segments = sources.front().segments;
  const SceneTiming timing{plan.frameRate, plan.framesPerSegment()};
  // Growing: a first pass of about 3 s of the scene (docs/packaging.md, "Watching a scene grow").
  const unsigned firstPass = std::max(1u, unsigned(std::lround(3 / timing.segmentSeconds())));
  const std::vector<Stage> stages = plan.grow ? growthStages(segments, rungs, firstPass) : std::vector<Stage>{{segments, rungs}};
  CellTable table(sources.size(), rungs, segments);
  // Target-rate rungs get each object's quantisers first (nothing is written while fitting).
  const std::vector<std::vector<Rung>> ladders = fitLadders(plan, sources);

  // Where the files go: a staging directory published at the end, or the scene itself.
  std::unique_ptr<PackLog> log;
  fs::path directory;
  if (plan.grow) {
    if (plan.out.rfind("s3://", 0) == 0)
      throw std::runtime_error("--grow writes into a local folder an origin serves; a bucket scene is uploaded in one step (pack without --grow)");
    std::vector<std::string> ids;
    for (const Source& s : sources) ids.push_back(s.id);
    directory = plan.out;
    log = std::make_unique<PackLog>(directory, describePlan(plan, sources), ids, rungs, segments);
    for (const auto& [cell, result] : log->resumed()) table.set(cell, result);
    stopCleanlyOnSignal(plan.out);
  } else {
    directory = startStaging(plan.out);
  }
  // A growing scene publishes the stages whose cells are all done (under `lock`): one manifest,
  // for the largest, replacing the one before — dynamic until the last, which is static (docs/mpd.md,
  // "A growing scene"), anchored where the first stage was published (a resumed run keeps it).
  size_t published = 0;
  std::string availabilityStart;
  if (plan.grow) {
    std::ifstream previous(directory / "manifest.mpd");
    availabilityStart = availabilityStartOf(std::string(std::istreambuf_iterator<char>(previous), {}));
    if (availabilityStart.empty()) availabilityStart = utcDateTime(std::time(nullptr));
  }
  auto publishReady = [&](Progress* progress) {
    size_t ready = published;
    while (plan.grow && ready < stages.size() && table.covers(stages[ready], sources.size())) ++ready;
    if (ready == published) return;
    const Stage& stage = stages[ready - 1];
    const Growing growing{availabilityStart, utcDateTime(std::time(nullptr))};
    writeFile(directory / "manifest.mpd", writeMpd(scene, describeStage(plan, sources, table, stage), stage.segments, timing,
                                                   plan.webtransportEndpoints, ready < stages.size() ? &growing : nullptr));
    const std::string message = "published " + (directory / "manifest.mpd").string() + ": " + std::to_string(sources.size()) +
                                " objects, " + stageText(stage, timing) + (published == 0 ? " — playable now" : "") +
                                (ready < stages.size() ? "" : " — complete");
    if (progress) progress->reached(ready - published, message);
    else std::fprintf(stderr, "holoquic-pack: %s\n", message.c_str());
    published = ready;
  };
  if (log && log->resuming())
    std::fprintf(stderr, "holoquic-pack: resuming %s: %zu of %zu segment files were packed before\n", plan.out.c_str(),
                 log->resumed().size(), sources.size() * rungs * segments);
  publishReady(nullptr);

  const std::vector<Job> jobs = jobsFor(stages, sources.size(), table);
  std::vector<std::pair<std::string, size_t>> progressObjects;
  for (const Source& s : sources) progressObjects.emplace_back(s.id, 0);
  auto jobWork = [](const Job& j) { return double(j.endRung - j.firstRung); };  // rungs cost alike
  double work = 0;
  std::vector<Progress::Milestone> milestones;
  for (const Job& j : jobs) {
    ++progressObjects[j.object].second;
    work += jobWork(j);
    if (plan.grow && (milestones.size() < j.stage + 1 - published)) milestones.push_back({stageText(stages[j.stage], timing), 0});
    if (!milestones.empty()) milestones.back().work = work;
  }
  if (plan.grow && published == 0 && !milestones.empty()) {
    milestones.front().label = "playable";
    std::string list;
    for (const Stage& stage : stages) list += (list.empty() ? "" : ", ") + stageText(stage, timing);
    std::fprintf(stderr, "holoquic-pack: packing %s to be watched as it grows, in %zu stages: %s\n", plan.out.c_str(), stages.size(),
                 list.c_str());
  }

  std::mutex lock;
  std::atomic<size_t> next{0};
  std::string error;
  bool inputError = false;
  Progress progress(progressObjects, work, milestones, stderr);
  auto worker = [&]() {
    auto video = makeLibavEncoder();
    auto decoder = makeLibavDecoder();
    for (size_t j; (j = next++) < jobs.size();) {
      const Job job = jobs[j];
      const Source& src = sources[job.object];
      try {
        const std::vector<InputFrame> frames = src.segment(job.segment);
        const Box box = voxelBounds(frames);
        for (unsigned q = job.firstRung; q < job.endRung; ++q) {
          const CellResult result = encodeCell(plan, src, frames, box, ladders[job.object][q], q, job.segment, directory, *video, *decoder);
          std::lock_guard<std::mutex> guard(lock);
          table.set({job.object, q, job.segment}, result);
          if (log) log->append({job.object, q, job.segment}, result);
        }
        progress.finished(job.object, jobWork(job));
        std::lock_guard<std::mutex> guard(lock);
        publishReady(&progress);
      } catch (const std::exception& e) {
        std::lock_guard<std::mutex> guard(lock);
        if (error.empty()) {
          error = src.id + " segment " + std::to_string(job.segment) + ": " + e.what();
          inputError = dynamic_cast<const cli::InputError*>(&e) != nullptr;
        }
        next = jobs.size();
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < std::max(1u, plan.threads); ++t) pool.emplace_back(worker);
  for (auto& t : pool) t.join();
  progress.close();
  if (!error.empty()) {
    // A growing scene keeps what it published (valid, and resumed by the next run).
    std::error_code ec;
    if (!plan.grow) fs::remove_all(directory, ec);
    if (inputError) throw cli::InputError(error);
    throw std::runtime_error(error);
  }

  const std::vector<ObjectInfo> objects = describeStage(plan, sources, table, stages.back());
  std::vector<std::vector<Measured>> measured(sources.size(), std::vector<Measured>(rungs));
  for (size_t s = 0; s < sources.size(); ++s)
    for (unsigned q = 0; q < rungs; ++q) measured[s][q] = table.at({s, q, 0}).measured;
  if (!plan.grow) writeFile(directory / "manifest.mpd", writeMpd(scene, objects, segments, timing, plan.webtransportEndpoints));
  writeReport((directory / "report.json").string(), scene, objects, ladders, measured, timing);
  if (plan.grow) log->finish();  // last: until the log is gone the scene is unfinished
  else publish(directory, plan.out);
  std::printf("wrote %s (%zu objects × %u qualities × %u segments of %g s at %u fps)\n", plan.out.c_str(), objects.size(), rungs,
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
