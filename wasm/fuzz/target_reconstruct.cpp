// Fuzz target of reconstruction (targets.h): a segment's pictures made from the input bytes.
#include <algorithm>
#include <vector>

#include "targets.h"

#include "vpcc/api_session.h"
#include "vpcc/bit_reader.h"

namespace vpcc::fuzz {
namespace {

// Bounds that keep one input fast (a few milliseconds under the sanitizers): two frames, of a
// picture of at most 512 × 512; larger atlases are valid but would make each run take seconds.
// Inter-frame syntax is still all parsed and decoded (the atlas of every frame).
constexpr uint32_t kMaxFrames = 2;
constexpr uint64_t kMaxPixels = 512ull * 512ull;

/// Sample values taken from the input itself, so the fuzzer steers picture content (occupancy,
/// depths, colours) as well as syntax.
class SampleSource {
 public:
  SampleSource(const uint8_t* data, size_t size) : data_(data), size_(size), step_(size ? 7919 % size : 0) {}
  uint8_t next() {
    if (size_ == 0) return 0;
    position_ += step_;
    if (position_ >= size_) position_ -= size_;
    return data_[position_];
  }

 private:
  const uint8_t* data_;
  size_t size_, step_;
  size_t position_ = 0;
};

/// A picture for `info` with the size the session expects: the atlas size, or for occupancy
/// the atlas divided by a precision of 1, 2 or 4 (chosen by the input's last byte).
void putPicture(DecodeSession& session, uint32_t stream, uint32_t index, uint32_t atlasWidth, uint32_t atlasHeight,
                uint8_t precisionChoice, SampleSource& samples) {
  const VideoStreamInfo& info = session.streams()[stream];
  uint32_t width = atlasWidth, height = atlasHeight;
  if (info.component == Component::Occupancy) {
    uint32_t precision = 1u << (precisionChoice % 3);
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
  for (int c = 0; c < 3; ++c) {
    const size_t count = c == 0 ? size_t(width) * height : size_t(chromaWidth) * chromaHeight;
    in.strides[c] = c == 0 ? width : chromaWidth;
    // Occupancy is sparse (about one pixel in ten, values 0…3 around the lossy threshold): a
    // fully occupied atlas of random depths makes millions of points and each run too slow.
    const bool occupancy = info.component == Component::Occupancy;
    const uint32_t mask = info.bitDepth >= 16 ? 0xffffu : (1u << info.bitDepth) - 1;
    auto value = [&]() -> uint32_t {
      const uint8_t b = samples.next();
      if (occupancy) return b < 26 ? b & 3 : 0;
      return wide ? (uint32_t(b) << 8 | samples.next()) & mask : b;
    };
    if (wide) {
      planes16[c].resize(count);
      for (auto& v : planes16[c]) v = uint16_t(value());
      in.planes[c] = planes16[c].data();
    } else {
      planes8[c].resize(count);
      for (auto& v : planes8[c]) v = uint8_t(value());
      in.planes[c] = planes8[c].data();
    }
  }
  session.putPicture(stream, index, in);
}

void decodeSegment(DecodeSession& session, const uint8_t* data, size_t size) {
  session.load(data, size);
  SampleSource samples(data, size);
  const uint8_t precisionChoice = size ? data[size - 1] : 0;
  const uint32_t frames = std::min(session.frameCount(), kMaxFrames);
  for (uint32_t f = 0; f < frames; ++f) {
    const uint32_t width = session.atlasWidth(f), height = session.atlasHeight(f);
    if (uint64_t(width) * height > kMaxPixels) return;
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
