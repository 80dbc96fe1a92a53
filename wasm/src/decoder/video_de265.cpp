// HEVC decoding with libde265 (LGPL-3.0, Debian's source package built alongside this library):
// the decoder of the browser builds for HEVC sub-bitstreams where WebCodecs has none (headless
// Chromium, most desktop browsers without a hardware decoder), and natively a second decoder
// that the conformance tests hold to TMC2's picture checksums like libavcodec.
#include <cstring>
#include <memory>
#include <stdexcept>
#include <string>

#include "vpcc/bit_reader.h"
#include "vpcc/video.h"

#include <libde265/de265.h>

namespace vpcc {
namespace {

struct ContextDeleter {
  void operator()(de265_decoder_context* ctx) const { de265_free_decoder(ctx); }
};

void check(de265_error err) {
  if (!de265_isOK(err)) throw ParseError(std::string("HEVC video sub-bitstream does not decode: ") + de265_get_error_text(err));
}

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

/// One stream: every NAL unit is handed to libde265 up front (it keeps them queued), pictures
/// are decoded only as far as the next one asked for.
class De265Source final : public PictureSource {
 public:
  De265Source(const std::vector<uint8_t>& lengthPrefixed, uint8_t outputBitDepth)
      : ctx_(de265_new_decoder()), outputBitDepth_(outputBitDepth) {
    if (!ctx_) throw std::runtime_error("cannot create the HEVC decoder");
    // A picture with decoding errors is an error here, not a picture.
    de265_set_parameter_bool(ctx_.get(), DE265_DECODER_PARAM_SUPPRESS_FAULTY_PICTURES, 1);
    forEachNalUnit(lengthPrefixed, [&](const uint8_t* nal, size_t size) {
      check(de265_push_NAL(ctx_.get(), nal, int(size), 0, nullptr));
    });
    check(de265_flush_data(ctx_.get()));
  }

  bool next(Picture& out) override {
    for (;;) {
      if (const de265_image* image = de265_get_next_picture(ctx_.get())) {
        convert(image, outputBitDepth_, out);
        return true;
      }
      if (finished_) break;
      int more = 0;
      const de265_error err = de265_decode(ctx_.get(), &more);
      if (err != DE265_OK && err != DE265_ERROR_WAITING_FOR_INPUT_DATA && err != DE265_ERROR_IMAGE_BUFFER_FULL) check(err);
      if (!more) finished_ = true;
    }
    // Warnings mean concealed damage (missing references, invalid headers): not faithful pictures.
    const de265_error warning = de265_get_warning(ctx_.get());
    if (warning != DE265_OK) throw ParseError(std::string("HEVC video sub-bitstream: ") + de265_get_error_text(warning));
    return false;
  }

 private:
  std::unique_ptr<de265_decoder_context, ContextDeleter> ctx_;
  uint8_t outputBitDepth_;
  bool finished_ = false;
};

class De265Decoder final : public VideoDecoder {
 public:
  std::vector<Picture> decode(const std::vector<uint8_t>& lengthPrefixed, VideoCodec codec,
                              uint8_t outputBitDepth) override {
    if (codec != VideoCodec::Hevc) throw ParseError("libde265 decodes HEVC only");
    De265Source source(lengthPrefixed, outputBitDepth);
    std::vector<Picture> pictures;
    for (Picture pic; source.next(pic);) pictures.push_back(std::move(pic));
    return pictures;
  }
};

}  // namespace

std::unique_ptr<VideoDecoder> makeDe265Decoder() { return std::make_unique<De265Decoder>(); }

std::unique_ptr<PictureSource> makeDe265Source(const std::vector<uint8_t>& lengthPrefixed, uint8_t outputBitDepth) {
  return std::make_unique<De265Source>(lengthPrefixed, outputBitDepth);
}

}  // namespace vpcc
