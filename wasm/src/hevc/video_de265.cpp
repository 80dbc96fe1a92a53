// HEVC decoding with libde265 natively: a second HEVC decoder beside libavcodec, which the
// conformance tests hold to TMC2's picture checksums — the same libde265 code (de265_stream.cpp)
// the browser's optional HEVC module runs.
#include <cstring>
#include <memory>

#include "hevc/de265_stream.h"
#include "vpcc/bit_reader.h"
#include "vpcc/video.h"

namespace vpcc {
namespace {

void convert(const de265_image* image, uint8_t outputBitDepth, Picture& pic) {
  const de265_chroma chroma = de265_get_chroma_format(image);
  if (chroma != de265_chroma_420 && chroma != de265_chroma_444)
    throw ParseError("HEVC video sub-bitstream has a chroma format other than 4:2:0 or 4:4:4");
  pic.width = uint32_t(de265_get_image_width(image, 0));
  pic.height = uint32_t(de265_get_image_height(image, 0));
  pic.bitDepth = outputBitDepth;
  pic.chroma444 = chroma == de265_chroma_444;
  for (int c = 0; c < 3; ++c) {
    Plane& plane = pic.planes[c];
    plane.width = uint32_t(de265_get_image_width(image, c));
    plane.height = uint32_t(de265_get_image_height(image, c));
    const int depth = de265_get_bits_per_pixel(image, c);
    int stride = 0;  // bytes
    const uint8_t* data = de265_get_image_plane(image, c, &stride);
    if (!data || depth < 1 || depth > 16) throw ParseError("HEVC picture without a usable plane");
    plane.samples.resize(size_t(plane.width) * plane.height);
    for (uint32_t y = 0; y < plane.height; ++y) {
      const uint8_t* row = data + size_t(y) * size_t(stride);
      uint16_t* out = plane.samples.data() + size_t(y) * plane.width;
      if (depth > 8) {
        for (uint32_t x = 0; x < plane.width; ++x) {
          uint16_t word;
          std::memcpy(&word, row + 2 * x, 2);  // libde265 keeps wide samples in native order
          out[x] = toNominalDepth(word, depth, outputBitDepth);
        }
      } else {
        for (uint32_t x = 0; x < plane.width; ++x) out[x] = toNominalDepth(row[x], depth, outputBitDepth);
      }
    }
  }
}

class De265Decoder final : public VideoDecoder {
 public:
  std::vector<Picture> decode(const std::vector<uint8_t>& lengthPrefixed, VideoCodec codec,
                              uint8_t outputBitDepth) override {
    if (codec != VideoCodec::Hevc) throw ParseError("libde265 decodes HEVC only");
    De265Stream stream;
    stream.push(lengthPrefixed);
    std::vector<Picture> pictures;
    while (const de265_image* image = stream.next()) {
      pictures.emplace_back();
      convert(image, outputBitDepth, pictures.back());
    }
    return pictures;
  }
};

}  // namespace

std::unique_ptr<VideoDecoder> makeDe265Decoder() { return std::make_unique<De265Decoder>(); }

}  // namespace vpcc
