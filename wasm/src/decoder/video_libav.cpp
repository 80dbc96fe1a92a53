// Native video decoding through Debian's libavcodec.
#include <algorithm>
#include <cstring>
#include <stdexcept>

#include "vpcc/bit_reader.h"
#include "vpcc/video.h"

#include "common/libav_owned.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/pixdesc.h>
}

namespace vpcc {
namespace {

using vpcc::libav::Owned;

class LibavDecoder final : public VideoDecoder {
 public:
  std::vector<Picture> decode(const std::vector<uint8_t>& lengthPrefixed, VideoCodec codec,
                              uint8_t outputBitDepth) override {
    const AVCodecID id = codec == VideoCodec::Hevc ? AV_CODEC_ID_HEVC : AV_CODEC_ID_H264;
    const AVCodec* decoder = avcodec_find_decoder(id);
    if (!decoder) throw std::runtime_error("libavcodec has no decoder for this codec");
    Owned<AVCodecContext> ctx(avcodec_alloc_context3(decoder));
    ctx->thread_count = 1;
    if (avcodec_open2(ctx.get(), decoder, nullptr) < 0) throw std::runtime_error("cannot open the video decoder");
    Owned<AVCodecParserContext> parser(av_parser_init(id));
    Owned<AVFrame> frame(av_frame_alloc());
    Owned<AVPacket> packet(av_packet_alloc());

    std::vector<uint8_t> stream = lengthPrefixedToAnnexB(lengthPrefixed);
    stream.resize(stream.size() + AV_INPUT_BUFFER_PADDING_SIZE, 0);
    const size_t payload = stream.size() - AV_INPUT_BUFFER_PADDING_SIZE;

    std::vector<Picture> pictures;
    auto drain = [&]() {
      while (avcodec_receive_frame(ctx.get(), frame.get()) == 0) {
        pictures.push_back(convert(frame.get(), outputBitDepth));
        av_frame_unref(frame.get());
      }
    };
    auto send = [&](AVPacket* p) {
      if (avcodec_send_packet(ctx.get(), p) < 0) throw ParseError("video sub-bitstream does not decode");
      drain();
    };
    const uint8_t* data = stream.data();
    size_t left = payload;
    while (left > 0) {
      const int used = av_parser_parse2(parser.get(), ctx.get(), &packet->data, &packet->size, data, int(left),
                                        AV_NOPTS_VALUE, AV_NOPTS_VALUE, 0);
      if (used < 0) throw ParseError("video parser error");
      data += used;
      left -= size_t(used);
      if (packet->size) send(packet.get());
    }
    av_parser_parse2(parser.get(), ctx.get(), &packet->data, &packet->size, nullptr, 0, AV_NOPTS_VALUE,
                     AV_NOPTS_VALUE, 0);
    if (packet->size) send(packet.get());
    send(nullptr);
    return pictures;
  }

 private:
  static Picture convert(const AVFrame* f, uint8_t outputBitDepth) {
    const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(static_cast<AVPixelFormat>(f->format));
    if (!desc || desc->nb_components < 3) throw ParseError("unsupported decoded pixel format");
    const int internalDepth = desc->comp[0].depth;
    Picture pic;
    pic.width = uint32_t(f->width);
    pic.height = uint32_t(f->height);
    pic.bitDepth = outputBitDepth;
    pic.chroma444 = desc->log2_chroma_w == 0;
    for (int c = 0; c < 3; ++c) {
      Plane& plane = pic.planes[c];
      plane.width = c == 0 ? pic.width : uint32_t(AV_CEIL_RSHIFT(int(pic.width), int(desc->log2_chroma_w)));
      plane.height = c == 0 ? pic.height : uint32_t(AV_CEIL_RSHIFT(int(pic.height), int(desc->log2_chroma_h)));
      plane.samples.resize(size_t(plane.width) * plane.height);
      for (uint32_t y = 0; y < plane.height; ++y) {
        const uint8_t* row = f->data[c] + size_t(y) * f->linesize[c];
        uint16_t* out = plane.samples.data() + size_t(y) * plane.width;
        for (uint32_t x = 0; x < plane.width; ++x) {
          const uint32_t v = internalDepth > 8 ? uint32_t(row[2 * x]) | uint32_t(row[2 * x + 1]) << 8 : row[x];
          out[x] = toNominalDepth(v, internalDepth, outputBitDepth);
        }
      }
    }
    return pic;
  }
};

}  // namespace

std::unique_ptr<VideoDecoder> makeLibavDecoder() { return std::make_unique<LibavDecoder>(); }

}  // namespace vpcc
