// One HEVC video sub-bitstream decoded by libde265 (LGPL-3.0), picture by picture in output
// order. Everything in the project that touches libde265 lives in this folder: natively the
// second HEVC decoder of the conformance tests (video_de265.cpp), in the browser the optional
// HEVC module (api_hevc.cpp), which is loaded only where WebCodecs has no HEVC. The vpcc core
// module never links it.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <libde265/de265.h>

namespace vpcc {

class De265Stream {
 public:
  /// Throws std::runtime_error when libde265 cannot make a decoder (out of memory).
  De265Stream();

  /// Hands the whole coded stream (4-byte length-prefixed NAL units, as V3C stores them) to
  /// libde265, which queues it; pictures are decoded only as far as `next` asks. Call once.
  /// Throws ParseError on malformed framing.
  void push(const std::vector<uint8_t>& lengthPrefixed);

  /// The next picture in output order, valid until the next call of `next` (or the stream's
  /// end); nullptr once the stream is done. Throws ParseError when the video does not decode,
  /// or when libde265 had to conceal damage (missing references, invalid headers): such
  /// pictures are not the coded ones.
  const de265_image* next();

 private:
  struct ContextDeleter {
    void operator()(de265_decoder_context* ctx) const { de265_free_decoder(ctx); }
  };
  std::unique_ptr<de265_decoder_context, ContextDeleter> ctx_;
  bool finished_ = false;
  bool holding_ = false;  // a picture handed out by `next`, released at the following call
};

}  // namespace vpcc
