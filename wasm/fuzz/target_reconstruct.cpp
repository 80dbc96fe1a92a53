// Fuzz target of reconstruction (targets.h): a segment's pictures made from the input bytes.
//
// Fuzzing limits, in this harness only: atlases of at most 512 × 512 (TMC2's streams, with
// its tools — point local reconstruction, pixel interleaving, EOM, raw patches — are that size);
// two frames, or one when the atlas is larger than 128 × 128; occupancy only in the atlas's
// top-left 128 × 128 window (elsewhere the occupancy picture is empty), so at most that many
// pixels per map make points whatever the atlas size and smoothing and colouring stay small,
// while patches packed there (TMC2 and our encoder pack from the top left) are reconstructed
// with every tool. Pictures are filled by copying the input's bytes in runs rather than sample
// by sample, so a large frame costs the session's sample conversion, not the harness's loop.
// Small seeds (our encoder's 128 × 64 streams with the video cut off) keep most executions at
// a millisecond or two under the sanitizers.
#include <algorithm>
#include <cstring>
#include <stdexcept>
#include <vector>

#include "targets.h"

#include "vpcc/api_session.h"
#include "vpcc/bit_reader.h"

namespace vpcc::fuzz {
namespace {

constexpr uint32_t kMaxFrames = 2;
constexpr uint64_t kMaxPixels = 512ull * 512ull;
constexpr uint32_t kOccupiedWindow = 128;  // atlas pixels, from the top-left corner

/// Sample values taken from the input itself, so the fuzzer steers picture content (occupancy,
/// depths, colours) as well as syntax: the input's bytes in order, over and over.
class SampleSource {
 public:
  SampleSource(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  uint8_t next() {
    if (size_ == 0) return 0;
    const uint8_t b = data_[position_];
    if (++position_ == size_) position_ = 0;
    return b;
  }
  /// `count` bytes into `out`, copied in runs of the input.
  void fill(uint8_t* out, size_t count) {
    if (size_ == 0) {
      std::memset(out, 0, count);
      return;
    }
    while (count > 0) {
      const size_t run = std::min(count, size_ - position_);
      std::memcpy(out, data_ + position_, run);
      out += run;
      count -= run;
      position_ += run;
      if (position_ == size_) position_ = 0;
    }
  }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t position_ = 0;
};

/// A picture for `info` with the size the session expects: the atlas size, or for occupancy
/// the atlas divided by a precision of 1, 2 or 4 (chosen by the input's last byte).
void putPicture(DecodeSession& session, uint32_t stream, uint32_t index, uint32_t atlasWidth, uint32_t atlasHeight,
                uint8_t precisionChoice, SampleSource& samples) {
  const VideoStreamInfo& info = session.streams()[stream];
  uint32_t width = atlasWidth, height = atlasHeight, precision = 1;
  if (info.component == Component::Occupancy) {
    precision = 1u << (precisionChoice % 3);
    while (precision > 1 && atlasWidth % precision) precision >>= 1;
    width = atlasWidth / precision;
    height = (atlasHeight + precision - 1) / precision;
  }
  const bool chroma444 = precisionChoice & 0x10;
  const uint32_t chromaWidth = chroma444 ? width : (width + 1) / 2, chromaHeight = chroma444 ? height : (height + 1) / 2;
  const bool wide = info.bitDepth > 8;
  std::vector<uint16_t> planes16[3];
  std::vector<uint8_t> planes8[3];
  PictureInput in;
  in.width = width;
  in.height = height;
  in.sixteenBitSamples = wide;
  in.decodedBitDepth = info.bitDepth;
  in.chroma444 = chroma444;
  const bool occupancy = info.component == Component::Occupancy;
  const uint32_t mask = info.bitDepth >= 16 ? 0xffffu : (1u << info.bitDepth) - 1;
  for (int c = 0; c < 3; ++c) {
    const uint32_t planeWidth = c == 0 ? width : chromaWidth, planeHeight = c == 0 ? height : chromaHeight;
    const size_t count = size_t(planeWidth) * planeHeight;
    in.strides[c] = planeWidth;
    // Occupancy: sparse (about one pixel in ten, values 0…3 around the lossy threshold) and
    // only in the window; a fully occupied atlas of random depths makes millions of points.
    const size_t bytes = count * (wide ? 2 : 1);
    if (wide) planes16[c].resize(count);
    else planes8[c].resize(count);
    uint8_t* plane = wide ? reinterpret_cast<uint8_t*>(planes16[c].data()) : planes8[c].data();
    in.planes[c] = plane;
    if (!occupancy) {
      samples.fill(plane, bytes);
      if (wide)
        for (auto& v : planes16[c]) v = uint16_t(v & mask);
      continue;
    }
    std::memset(plane, 0, bytes);
    if (c > 0) continue;
    const uint32_t windowWidth = std::min(planeWidth, kOccupiedWindow / precision);
    const uint32_t windowHeight = std::min(planeHeight, kOccupiedWindow / precision);
    for (uint32_t y = 0; y < windowHeight; ++y)
      for (uint32_t x = 0; x < windowWidth; ++x) {
        const uint8_t b = samples.next();
        const uint8_t v = b < 26 ? b & 3 : 0;
        if (wide) planes16[c][size_t(y) * planeWidth + x] = v;
        else planes8[c][size_t(y) * planeWidth + x] = v;
      }
  }
  session.putPicture(stream, index, in);
}

void decodeSegment(DecodeSession& session, const uint8_t* data, size_t size) {
  session.load(data, size);
  SampleSource samples(data, size);
  const uint8_t precisionChoice = size ? data[size - 1] : 0;
  uint32_t frames = std::min(session.frameCount(), kMaxFrames);
  for (uint32_t f = 0; f < frames; ++f) {
    const uint64_t pixels = uint64_t(session.atlasWidth(f)) * session.atlasHeight(f);
    if (pixels > kMaxPixels) return;
    // Pictures larger than the window cost their conversion: one frame of them.
    if (pixels > uint64_t(kOccupiedWindow) * kOccupiedWindow) frames = 1;
  }
  const auto& streams = session.streams();
  for (uint32_t s = 0; s < streams.size(); ++s) {
    const VideoStreamInfo& info = streams[s];
    if (info.firstFrame >= frames) continue;
    const uint32_t framesHere = std::min(frames - info.firstFrame, info.pictureCount / std::max<uint32_t>(info.picturesPerFrame, 1));
    const uint32_t pictures = std::min(info.pictureCount, framesHere * info.picturesPerFrame);
    const uint32_t width = session.atlasWidth(info.firstFrame), height = session.atlasHeight(info.firstFrame);
    for (uint32_t i = 0; i < pictures; ++i) putPicture(session, s, i, width, height, precisionChoice, samples);
  }
  for (uint32_t f = 0; f < frames; ++f) {
    session.patches(f);
    session.blockSize(f);
    if (!session.frameReady(f)) continue;
    session.blockToPatch(f);
    const PointCloudFrame& out = session.reconstruct(f, true);
    if (out.positions.size() != out.colors.size()) throw std::logic_error("positions and colours differ in length");
    session.releaseFrame(f);
  }
}

}  // namespace

void reconstructInput(const uint8_t* data, size_t size) {
  DecodeSession session;
  try {
    decodeSegment(session, data, size);
  } catch (const ParseError&) {
    // A clean error: what bad input must give.
  }
}

}  // namespace vpcc::fuzz
