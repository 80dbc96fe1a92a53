// Fuzz target of the whole decoding chain with real video (targets.h): the segment's HEVC
// sub-bitstreams decoded by libde265 picture by picture as the optional HEVC module does it
// (src/hevc/de265_stream.h), each picture handed to the session as the player hands the
// module's pictures in, frame by frame, so fuzzing reaches reconstruction with pictures a real
// decoder made from mutated video (and libde265 with mutated NAL units).
//
// Fuzzing limits, in this harness only (the decoder's own limits are the level's and its cap):
// the first 2 frames (two are enough for P tiles, inter patches and predicted pictures), atlases
// of at most 128 × 128 samples, and every HEVC SPS read before libde265 sees the stream: one
// declaring a picture above that size ends the input, the way the player refuses atlases above
// the level its manifest declares before decoding. The seeds are streams of that size (a few
// thousand points, 2 frames, ~2–4 kB): one execution takes a few milliseconds under the
// sanitizers instead of a second, so 10^7 executions take days of a core, not weeks.
#include <algorithm>
#include <memory>
#include <stdexcept>
#include <vector>

#include "hevc/de265_stream.h"
#include "targets.h"
#include "vpcc/api_session.h"
#include "vpcc/bit_reader.h"
#include "vpcc/video.h"

namespace vpcc::fuzz {
namespace {

constexpr uint32_t kMaxFrames = 2;
constexpr uint64_t kMaxPixels = 128ull * 128ull;
constexpr uint8_t kHevcSpsNalType = 33;

/// libde265's tables, built once for the process rather than with every decoder (de265_init is
/// reference-counted; the last decoder freed would drop them, and rebuilding them was a tenth
/// of an execution).
struct De265Tables {
  De265Tables() { de265_init(); }
  ~De265Tables() { de265_free(); }
};

/// A NAL unit's payload without its header and emulation prevention bytes, as libde265 reads
/// it (every 00 00 03 loses its 03, whatever follows).
std::vector<uint8_t> hevcPayload(const uint8_t* nal, size_t size) {
  std::vector<uint8_t> out;
  out.reserve(size);
  size_t zeros = 0;
  for (size_t i = 2; i < size; ++i) {
    if (zeros >= 2 && nal[i] == 3) {
      zeros = 0;
      continue;
    }
    zeros = nal[i] == 0 ? zeros + 1 : 0;
    out.push_back(nal[i]);
  }
  return out;
}

/// Luma samples of the pictures an HEVC SPS declares (ITU-T H.265 7.3.2.2: the fields before
/// pic_width_in_luma_samples and pic_height_in_luma_samples, profile_tier_level skipped).
/// Throws ParseError when the SPS ends before them.
uint64_t spsPictureSamples(const std::vector<uint8_t>& payload) {
  BitReader r(payload);
  auto skip = [&r](unsigned bits) {
    for (; bits > 32; bits -= 32) r.u(32);
    r.u(bits);
  };
  r.u(4);  // sps_video_parameter_set_id
  const uint32_t subLayers = r.u32(3);
  r.u(1);   // sps_temporal_id_nesting_flag
  skip(96);  // general profile (88 bits) and level (8 bits)
  std::vector<bool> profilePresent(subLayers), levelPresent(subLayers);
  for (uint32_t i = 0; i < subLayers; ++i) {
    profilePresent[i] = r.flag();
    levelPresent[i] = r.flag();
  }
  if (subLayers > 0)
    for (uint32_t i = subLayers; i < 8; ++i) r.u(2);  // reserved_zero_2bits
  for (uint32_t i = 0; i < subLayers; ++i) skip((profilePresent[i] ? 88 : 0) + (levelPresent[i] ? 8 : 0));
  r.ue();  // sps_seq_parameter_set_id
  if (r.ue() == 3) r.u(1);  // chroma_format_idc, separate_colour_plane_flag
  const uint64_t width = r.ue();
  return width * r.ue();
}

/// Whether every SPS of a video sub-bitstream declares pictures within the fuzzing limit.
bool picturesWithinLimit(const std::vector<uint8_t>& lengthPrefixed) {
  bool within = true;
  forEachNalUnit(lengthPrefixed, [&](const uint8_t* nal, size_t size) {
    if (size < 2 || ((nal[0] >> 1) & 0x3f) != kHevcSpsNalType) return;
    try {
      within = within && spsPictureSamples(hevcPayload(nal, size)) <= kMaxPixels;
    } catch (const ParseError&) {
      within = false;  // an SPS too short to say: libde265 would refuse it as well
    }
  });
  return within;
}

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
  for (const VideoStreamInfo& info : streams)
    if (info.firstFrame < frames && info.codec == VideoCodec::Hevc && !picturesWithinLimit(info.bitstream->data)) return;
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
  static const De265Tables tables;
  DecodeSession session;
  try {
    decodeStream(session, data, size);
  } catch (const ParseError&) {
  }
}

}  // namespace vpcc::fuzz
