// Fuzz target of the whole decoding chain with real video (targets.h): the segment's HEVC
// sub-bitstreams decoded by libde265 picture by picture as the optional HEVC module does it
// (src/hevc/de265_stream.h), each picture handed to the session as the player hands the
// module's pictures in, frame by frame, so fuzzing reaches reconstruction with pictures a real
// decoder made from mutated video (and libde265 with mutated NAL units). Bounded per input:
// 8 frames of at most 512 × 512, so one execution takes well under a second under sanitizers.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include "hevc/de265_stream.h"
#include "targets.h"
#include "vpcc/api_session.h"
#include "vpcc/bit_reader.h"

namespace vpcc::fuzz {
namespace {

constexpr uint32_t kMaxFrames = 8;
constexpr uint64_t kMaxPixels = 512ull * 512ull;

/// The next picture of `stream` into the session at `index`, as the HEVC module's picture
/// description (planes, strides in samples, bit depth) goes into vpcc_put_picture.
void putNextPicture(DecodeSession& session, uint32_t stream, uint32_t index, De265Stream& video) {
  const de265_image* image = video.next();
  if (!image) throw ParseError("a video stream ended early");
  const de265_chroma chroma = de265_get_chroma_format(image);
  if (chroma != de265_chroma_420 && chroma != de265_chroma_444) throw ParseError("chroma format other than 4:2:0 or 4:4:4");
  const int depth = de265_get_bits_per_pixel(image, 0);
  if (depth < 1 || depth > 16) throw ParseError("unusable bit depth");
  PictureInput in;
  in.width = uint32_t(de265_get_image_width(image, 0));
  in.height = uint32_t(de265_get_image_height(image, 0));
  in.sixteenBitSamples = depth > 8;
  in.decodedBitDepth = uint8_t(depth);
  in.chroma444 = chroma == de265_chroma_444;
  for (int c = 0; c < 3; ++c) {
    if (de265_get_bits_per_pixel(image, c) != depth) throw ParseError("luma and chroma bit depths differ");
    int stride = 0;  // bytes
    in.planes[c] = de265_get_image_plane(image, c, &stride);
    if (!in.planes[c] || stride <= 0) throw ParseError("picture without a usable plane");
    in.strides[c] = uint32_t(stride) / (in.sixteenBitSamples ? 2 : 1);
  }
  session.putPicture(stream, index, in);
}

void decodeStream(DecodeSession& session, const uint8_t* data, size_t size) {
  session.load(data, size);
  const uint32_t frames = std::min(session.frameCount(), kMaxFrames);
  for (uint32_t f = 0; f < frames; ++f)
    if (uint64_t(session.atlasWidth(f)) * session.atlasHeight(f) > kMaxPixels) return;
  const auto& streams = session.streams();
  std::vector<std::unique_ptr<De265Stream>> videos(streams.size());
  for (uint32_t f = 0; f < frames; ++f) {
    // The pictures of frame f from every stream of its sequence, in turn (what the worker does).
    for (uint32_t s = 0; s < streams.size(); ++s) {
      const VideoStreamInfo& info = streams[s];
      const uint32_t perFrame = std::max<uint32_t>(info.picturesPerFrame, 1);
      if (f < info.firstFrame || f - info.firstFrame >= info.pictureCount / perFrame) continue;
      if (info.codec != VideoCodec::Hevc) throw ParseError("the fuzzing build decodes HEVC only");
      if (!videos[s]) {
        videos[s] = std::make_unique<De265Stream>();
        videos[s]->push(info.bitstream->data);
      }
      for (uint32_t k = 0; k < perFrame; ++k) putNextPicture(session, s, (f - info.firstFrame) * perFrame + k, *videos[s]);
    }
    if (!session.frameReady(f)) throw ParseError("pictures of a frame are missing");
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
