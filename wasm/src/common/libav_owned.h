// Owning pointers for libavcodec objects: each kind freed by its own libav call, so every native
// video path (decoder, encoder, the packager's texture reader) releases them the same way.
#pragma once

#include <memory>

extern "C" {
#include <libavcodec/avcodec.h>
}

namespace vpcc::libav {

struct Deleter {
  void operator()(AVCodecContext* c) const { avcodec_free_context(&c); }
  void operator()(AVCodecParserContext* p) const { av_parser_close(p); }
  void operator()(AVFrame* f) const { av_frame_free(&f); }
  void operator()(AVPacket* p) const { av_packet_free(&p); }
};

template <typename T>
using Owned = std::unique_ptr<T, Deleter>;

}  // namespace vpcc::libav
