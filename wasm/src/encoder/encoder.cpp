// The V-PCC encoder's driver (vpcc/encoder.h): checks the configuration and runs the stages
// (stages.h) over a sequence of frames. Each frame is segmented into patches (segmentation.cpp)
// and packed into 16×16 blocks (packing.cpp); occupancy and geometry pictures are drawn and
// padded (images.cpp) and coded as videos; then the geometry is decoded back and reconstructed
// exactly as the decoder will, colours are transferred from the source onto those points
// (color_transfer.h), and the attribute video is coded from them. The atlas codes the first
// frame of a sequence with intra patches and (with inter prediction) later frames against
// their predecessor (atlas_sequence.cpp, atlas_prediction.cpp); a sequence (a segment) never
// refers outside itself. The bitstream is written by writer.cpp.
#include "vpcc/encoder.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "color_transfer.h"
#include "stages.h"
#include "vpcc/atlas.h"
#include "vpcc/reconstruct.h"
#include "vpcc/writer.h"

namespace vpcc {

using namespace encoding;  // the stages' entry points (stages.h)

namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

/// Runs fn(i) for i in [0, count) on up to `threads` threads; rethrows the first failure.
template <typename Fn>
void parallelFor(size_t count, int threads, Fn fn) {
  const size_t workers = std::max<size_t>(1, std::min<size_t>(size_t(std::max(threads, 1)), count));
  std::vector<std::thread> pool;
  std::exception_ptr failure;
  std::mutex failureLock;
  for (size_t w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      try {
        for (size_t i = w; i < count; i += workers) fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> guard(failureLock);
        if (!failure) failure = std::current_exception();
      }
    });
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

void addVideo(CodedSequence& seq, V3cUnitType type, std::vector<uint8_t> bits) {
  VideoSubBitstream v;
  v.header.type = type;
  v.data = std::move(bits);
  seq.videos.push_back(std::move(v));
}

}  // namespace

std::vector<uint8_t> encodeSequence(const std::vector<InputFrame>& frames, const EncoderConfig& cfg, VideoEncoder& video,
                                    EncodeStats* stats) {
  if (frames.empty()) throw std::invalid_argument("no frames to encode");
  if (cfg.geometryBits < 4 || cfg.geometryBits > 16) throw std::invalid_argument("geometry bit depth must be 4–16");
  if (cfg.mapCount < 1 || cfg.mapCount > 2) throw std::invalid_argument("map count must be 1 or 2");
  if (cfg.occupancyPrecision != 1 && cfg.occupancyPrecision != 2 && cfg.occupancyPrecision != 4)
    throw std::invalid_argument("occupancy precision must be 1, 2 or 4");
  if (cfg.lod < 1 || cfg.lod > 4) throw std::invalid_argument("level of detail must be 1–4");
  if (cfg.surfaceThickness < 1 || cfg.surfaceThickness > 64) throw std::invalid_argument("surface thickness must be 1–64");
  if (cfg.attributeChromaQpOffset < -12 || cfg.attributeChromaQpOffset > 12)
    throw std::invalid_argument("attribute chroma QP offset must be −12…12");
  if (cfg.frameRate < 1 || cfg.frameRate > 120) throw std::invalid_argument("frame rate must be 1–120");
  const uint32_t limit = 1u << cfg.geometryBits;
  for (size_t f = 0; f < frames.size(); ++f) {
    const InputFrame& fr = frames[f];
    if (fr.size() == 0) throw std::invalid_argument("frame " + std::to_string(f) + " has no points");
    if (fr.colors.size() != fr.positions.size()) throw std::invalid_argument("frame " + std::to_string(f) + ": colours and positions differ in count");
    for (uint16_t c : fr.positions)
      if (c >= limit)
        throw std::invalid_argument("frame " + std::to_string(f) + ": coordinate " + std::to_string(c) + " outside the " +
                                    std::to_string(cfg.geometryBits) + "-bit grid");
  }
  EncodeStats st;
  st.frames = frames.size();
  const auto t0 = Clock::now();

  // Patches per frame (frames are independent: spread them over the threads).
  std::vector<FramePatches> framePatches(frames.size());
  parallelFor(frames.size(), cfg.threads, [&](size_t f) {
    framePatches[f] = generatePatches(frames[f], cfg);
    fillEmptyPixels(framePatches[f].patches, frames[f], cfg);
  });
  size_t area = 0;
  uint32_t widest = kBlock;
  for (const auto& fp : framePatches) {
    size_t frameArea = 0;
    for (const EncPatch& p : fp.patches) {
      frameArea += size_t(p.width) * p.height;
      widest = std::max(widest, std::min(p.width, p.height));
    }
    area = std::max(area, frameArea);
  }
  uint32_t width = cfg.atlasWidth;
  if (width == 0) {
    width = uint32_t(std::ceil(std::sqrt(double(area) * 1.25)));
    width = std::max<uint32_t>({width, widest, 64});
    width = (width + 63) / 64 * 64;
  }
  if (width % kBlock || width < widest) throw std::invalid_argument("atlas width must be a multiple of 16 and fit the widest patch");
  uint32_t heightBlocks = 1;
  for (size_t f = 0; f < framePatches.size(); ++f) {
    if (f) orderForPrediction(framePatches[f].patches, framePatches[f - 1].patches, !cfg.allIntra);
    heightBlocks = std::max(heightBlocks, packPatches(framePatches[f].patches, f ? &framePatches[f - 1].patches : nullptr,
                                                      width / kBlock, heightBlocks, !cfg.allIntra));
  }
  const uint32_t height = heightBlocks * kBlock;
  for (const auto& fp : framePatches) {
    st.coveredPoints += fp.covered;
    st.patches += fp.patches.size();
  }
  for (const auto& fr : frames) st.inputPoints += fr.size();

  // Occupancy and geometry: pictures per frame (geometry per frame and map, maps interleaved).
  std::vector<Picture> occupancy(frames.size()), geometry(frames.size() * cfg.mapCount);
  std::vector<std::vector<uint8_t>> geometryEmptyBlocks(geometry.size());
  parallelFor(frames.size(), cfg.threads, [&](size_t f) {
    GeometryImages img = renderGeometry(framePatches[f].patches, width, height, cfg);
    occupancy[f] = std::move(img.occupancy);
    for (unsigned m = 0; m < cfg.mapCount; ++m) {
      geometry[f * cfg.mapCount + m] = std::move(img.geometry[m]);
      geometryEmptyBlocks[f * cfg.mapCount + m] = img.emptyBlocks;
    }
  });
  // The video's intra period in pictures, as the video encoder sets it: one GOP, or each frame's maps.
  const size_t intraPeriod = cfg.allIntra ? cfg.mapCount : geometry.size();
  // Depths no point reads repeat the picture before (HEVC, whose curves measured it:
  // docs/benchmarks.md, step 8). Not AVC: unmeasured there, and its streams moved by a few
  // per cent in decoded points (map-1 duplicates), enough to fail the packager's checks.
  if (cfg.codec == VideoCodec::Hevc) repeatEmptyBlocks(geometry, geometryEmptyBlocks, intraPeriod);
  CodedSequence seq = describeSequence(framePatches, cfg, width, height, st);
  framePatches.clear();
  st.segmentationMs = msSince(t0);

  VideoEncodeSettings base;
  base.codec = cfg.codec;
  base.preset = cfg.preset;
  base.allIntra = cfg.allIntra;
  base.pictureRate = cfg.frameRate;
  VideoEncodeSettings occSettings = base, geoSettings = base, attSettings = base;
  occSettings.qp = cfg.occupancyQp;
  occSettings.lossless = losslessOccupancy(cfg);
  geoSettings.qp = cfg.geometryQp;
  attSettings.qp = cfg.attributeQp;
  attSettings.attribute = true;
  attSettings.chromaQpOffset = cfg.attributeChromaQpOffset;
  geoSettings.geometry = true;
  geoSettings.pictureRate = attSettings.pictureRate = cfg.frameRate * cfg.mapCount;  // maps interleaved
  geoSettings.picturesPerFrame = attSettings.picturesPerFrame = cfg.mapCount;
  std::vector<uint8_t> occBits, geoBits, attBits;
  auto t1 = Clock::now();
  parallelFor(2, cfg.threads, [&](size_t which) {
    if (which == 0) occBits = video.encode(occupancy, occSettings);
    else geoBits = video.encode(geometry, geoSettings);
  });
  st.videoMs = msSince(t1);
  addVideo(seq, V3cUnitType::OVD, std::move(occBits));
  addVideo(seq, V3cUnitType::GVD, std::move(geoBits));

  // Colours: decode occupancy and geometry as the decoder will, reconstruct the points with the
  // decoder's own reconstruction, and give each decoded point the colour its source neighbours
  // call for (color_transfer.h). The attribute pictures carry those colours.
  const auto t2 = Clock::now();
  const DecodedVideo decoded = decodeVideo(seq, *makeLibavDecoder());
  const std::vector<DecodedAtlasFrame> atlasFrames = decodeAtlas(seq);
  std::vector<Picture> attribute(frames.size() * cfg.mapCount);
  std::vector<std::vector<uint8_t>> emptyBlocks(attribute.size());
  parallelFor(frames.size(), cfg.threads, [&](size_t f) {
    const PointCloudFrame points = reconstructFrame(seq, atlasFrames.at(f), decoded, true);
    const std::vector<float> colours = transferColours(frames[f].positions.data(), frames[f].colors.data(), frames[f].size(),
                                                       points.positions.data(), points.size());
    AttributeImages images = renderAttributes(points, colours, width, height, cfg.mapCount);
    for (unsigned m = 0; m < cfg.mapCount; ++m) {
      attribute[f * cfg.mapCount + m] = std::move(images.pictures[m]);
      emptyBlocks[f * cfg.mapCount + m] = std::move(images.emptyBlocks[m]);
    }
  });
  // All-intra: each frame's map 0 is an intra picture. (With one GOP the IDR picture keeps
  // push-pull padding: later pictures predict from it, and continued edges predicted patches
  // moving into the padding worse — Fox lost 0.1 dB of luma.)
  if (cfg.allIntra)
    for (size_t f = 0; f < frames.size(); ++f) extendIntoEmptyBlocks(attribute[f * cfg.mapCount], emptyBlocks[f * cfg.mapCount]);
  repeatEmptyBlocks(attribute, emptyBlocks, intraPeriod);
  st.transferMs = msSince(t2);

  const auto t3 = Clock::now();
  attSettings.threads = std::max(1, cfg.threads);
  attBits = video.encode(attribute, attSettings);
  st.videoMs += msSince(t3);
  seq.vps.atlases[0].attributes.push_back(AttributeInformation{});
  st.occupancyBytes = seq.videos[0].data.size();
  st.geometryBytes = seq.videos[1].data.size();
  st.attributeBytes = attBits.size();
  addVideo(seq, V3cUnitType::AVD, std::move(attBits));

  std::vector<uint8_t> bytes = writeSampleStream({seq});
  st.totalBytes = bytes.size();
  st.atlasBytes = st.totalBytes - st.occupancyBytes - st.geometryBytes - st.attributeBytes;
  st.atlasWidth = width;
  st.atlasHeight = height;
  if (stats) *stats = st;
  return bytes;
}

}  // namespace vpcc
