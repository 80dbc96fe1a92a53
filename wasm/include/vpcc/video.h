// Decoded video pictures and the interface the V-PCC decoder uses to get them. Natively this is
// libavcodec (HEVC, AVC) or libde265 (HEVC); in the browser the worker decodes with WebCodecs, or
// — HEVC without a WebCodecs decoder — with the optional HEVC module, and hands pictures in.
#pragma once

#include <array>
#include <functional>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace vpcc {

struct Plane {
  uint32_t width = 0, height = 0;
  std::vector<uint16_t> samples;  // row-major, width × height
  uint16_t at(uint32_t x, uint32_t y) const { return samples[size_t(y) * width + x]; }
};

/// A decoded picture at the nominal bit depth of its component (TMC2 converts the codec's
/// internal bit depth to it by rounding right shift).
struct Picture {
  uint32_t width = 0, height = 0;
  uint8_t bitDepth = 8;
  bool chroma444 = false;
  std::array<Plane, 3> planes;
  /// MD5 of one plane as TMC2 logs it: samples as bytes (8-bit) or little-endian 16-bit words.
  std::string planeMd5(int plane, bool sixteenBit) const;
};

enum class VideoCodec { Hevc, Avc };

/// Decodes a whole coded video sub-bitstream (length-prefixed NAL units, 4-byte sizes, as V3C
/// stores them) into pictures in output order.
class VideoDecoder {
 public:
  virtual ~VideoDecoder() = default;
  virtual std::vector<Picture> decode(const std::vector<uint8_t>& lengthPrefixed, VideoCodec codec,
                                      uint8_t outputBitDepth) = 0;
};

/// libavcodec-backed decoder (native builds only).
std::unique_ptr<VideoDecoder> makeLibavDecoder();
/// libde265-backed HEVC decoding (native builds with VPCC_WITH_DE265: src/hevc/).
std::unique_ptr<VideoDecoder> makeDe265Decoder();

/// A sample of the codec's bit depth at the component's nominal depth, as TMC2 converts it:
/// rounding right shift (clamped), or left shift when the codec's depth is the lower.
inline uint16_t toNominalDepth(uint32_t value, int codecDepth, int nominalDepth) {
  const int shift = codecDepth - nominalDepth;
  if (shift > 0) {
    const uint32_t maxValue = (1u << nominalDepth) - 1;
    const uint32_t v = (value + (1u << (shift - 1))) >> shift;
    return static_cast<uint16_t>(v < maxValue ? v : maxValue);
  }
  return static_cast<uint16_t>(value << -shift);
}

/// Calls `nal(data, size)` for each 4-byte length-prefixed NAL unit. Throws ParseError when a
/// length is zero or runs past the end.
void forEachNalUnit(const std::vector<uint8_t>& lengthPrefixed, const std::function<void(const uint8_t*, size_t)>& nal);

/// Converts 4-byte length-prefixed NAL units to an Annex-B byte stream. Throws ParseError when a
/// length runs past the end.
std::vector<uint8_t> lengthPrefixedToAnnexB(const std::vector<uint8_t>& data);

/// The codec of a video component from the VPS codec id and the component codec mapping SEI
/// (or the profile's codec group when there is no mapping).
VideoCodec codecFor(uint8_t codecGroup);

}  // namespace vpcc
