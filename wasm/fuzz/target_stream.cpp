// Fuzz target of the whole decoding chain with real video (targets.h): the segment's HEVC
// sub-bitstreams decoded by libde265 as the wasm module does it when the browser has no HEVC
// decoder, frame by frame, so fuzzing reaches reconstruction with pictures a real decoder made
// from mutated video (and libde265 with mutated NAL units). Bounded per input: 8 frames of at
// most 512 × 512, so one execution takes well under a second even under the sanitizers.
#include <algorithm>
#include <memory>
#include <stdexcept>

#include "targets.h"
#include "vpcc/api_session.h"
#include "vpcc/bit_reader.h"
#include "vpcc/video.h"

namespace vpcc::fuzz {
namespace {

constexpr uint32_t kMaxFrames = 8;
constexpr uint64_t kMaxPixels = 512ull * 512ull;

std::unique_ptr<PictureSource> openHevc(const VideoStreamInfo& info) {
  if (info.codec != VideoCodec::Hevc) throw ParseError("the fuzzing build decodes HEVC only");
  return makeDe265Source(info.bitstream->data, info.bitDepth);
}

void decodeStream(DecodeSession& session, const uint8_t* data, size_t size) {
  session.load(data, size);
  const uint32_t frames = std::min(session.frameCount(), kMaxFrames);
  for (uint32_t f = 0; f < frames; ++f)
    if (uint64_t(session.atlasWidth(f)) * session.atlasHeight(f) > kMaxPixels) return;
  const auto& streams = session.streams();
  for (uint32_t f = 0; f < frames; ++f) {
    // The pictures of frame f from every stream of its sequence, in turn (what the worker does).
    for (uint32_t s = 0; s < streams.size(); ++s) {
      const VideoStreamInfo& info = streams[s];
      if (f < info.firstFrame || f - info.firstFrame >= info.pictureCount / std::max<uint32_t>(info.picturesPerFrame, 1))
        continue;
      session.decodePictures(s, info.picturesPerFrame, openHevc);
    }
    if (!session.frameReady(f)) throw ParseError("a video stream ended early");
    const PointCloudFrame& out = session.reconstruct(f, true);
    if (out.positions.size() != out.colors.size()) throw std::logic_error("positions and colours differ in length");
    session.releaseFrame(f);
  }
}

}  // namespace

void streamInput(const uint8_t* data, size_t size) {
  DecodeSession session;
  try {
    decodeStream(session, data, size);
  } catch (const ParseError&) {
  }
}

}  // namespace vpcc::fuzz
