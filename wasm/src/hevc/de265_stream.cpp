// De265Stream: libde265's push/decode/peek cycle for one sub-bitstream (de265_stream.h).
#include "hevc/de265_stream.h"

#include <stdexcept>
#include <string>

#include "vpcc/bit_reader.h"
#include "vpcc/video.h"

namespace vpcc {
namespace {

void check(de265_error err) {
  if (!de265_isOK(err)) throw ParseError(std::string("HEVC video sub-bitstream does not decode: ") + de265_get_error_text(err));
}

}  // namespace

De265Stream::De265Stream() : ctx_(de265_new_decoder()) {
  if (!ctx_) throw std::runtime_error("cannot create the HEVC decoder");
  // A picture with decoding errors is an error here, not a picture.
  de265_set_parameter_bool(ctx_.get(), DE265_DECODER_PARAM_SUPPRESS_FAULTY_PICTURES, 1);
}

void De265Stream::push(const std::vector<uint8_t>& lengthPrefixed) {
  forEachNalUnit(lengthPrefixed, [&](const uint8_t* nal, size_t size) {
    check(de265_push_NAL(ctx_.get(), nal, int(size), 0, nullptr));
  });
  check(de265_flush_data(ctx_.get()));
}

const de265_image* De265Stream::next() {
  // Peek and release rather than de265_get_next_picture: a peeked picture stays valid while the
  // caller copies it, whatever de265 function is called meanwhile.
  if (holding_) {
    de265_release_next_picture(ctx_.get());
    holding_ = false;
  }
  for (;;) {
    if (const de265_image* image = de265_peek_next_picture(ctx_.get())) {
      holding_ = true;
      return image;
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
  return nullptr;
}

}  // namespace vpcc
