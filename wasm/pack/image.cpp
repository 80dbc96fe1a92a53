#include "image.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

#include "../src/common/libav_owned.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/pixdesc.h>
}

namespace holoquic {
namespace {

using vpcc::libav::Owned;

uint8_t clampByte(double v) { return uint8_t(std::min(255.0, std::max(0.0, v + 0.5))); }

/// The decoded frame as RGBA: the pixel formats PNG and JPEG decode to.
RgbaImage toRgba(const AVFrame* f, const std::string& what) {
  RgbaImage img;
  img.width = uint32_t(f->width);
  img.height = uint32_t(f->height);
  img.rgba.resize(size_t(img.width) * img.height * 4);
  const auto format = AVPixelFormat(f->format);
  const AVPixFmtDescriptor* desc = av_pix_fmt_desc_get(format);
  for (uint32_t y = 0; y < img.height; ++y) {
    uint8_t* out = img.rgba.data() + size_t(y) * img.width * 4;
    const uint8_t* row = f->data[0] + size_t(y) * size_t(f->linesize[0]);
    for (uint32_t x = 0; x < img.width; ++x) {
      uint8_t* px = out + size_t(x) * 4;
      px[3] = 255;
      switch (format) {
        case AV_PIX_FMT_RGB24: std::memcpy(px, row + x * 3, 3); break;
        case AV_PIX_FMT_RGBA: std::memcpy(px, row + x * 4, 4); break;
        case AV_PIX_FMT_RGB48BE:
          for (int c = 0; c < 3; ++c) px[c] = row[x * 6 + c * 2];
          break;
        case AV_PIX_FMT_RGBA64BE:
          for (int c = 0; c < 4; ++c) px[c] = row[x * 8 + c * 2];
          break;
        case AV_PIX_FMT_GRAY8: px[0] = px[1] = px[2] = row[x]; break;
        case AV_PIX_FMT_GRAY16BE: px[0] = px[1] = px[2] = row[x * 2]; break;
        case AV_PIX_FMT_YA8:
          px[0] = px[1] = px[2] = row[x * 2];
          px[3] = row[x * 2 + 1];
          break;
        case AV_PIX_FMT_YA16BE:
          px[0] = px[1] = px[2] = row[x * 4];
          px[3] = row[x * 4 + 2];
          break;
        case AV_PIX_FMT_PAL8: {
          uint32_t argb;
          std::memcpy(&argb, f->data[1] + size_t(row[x]) * 4, 4);  // native-endian 0xAARRGGBB
          px[0] = uint8_t(argb >> 16), px[1] = uint8_t(argb >> 8), px[2] = uint8_t(argb), px[3] = uint8_t(argb >> 24);
          break;
        }
        case AV_PIX_FMT_YUVJ420P:
        case AV_PIX_FMT_YUVJ422P:
        case AV_PIX_FMT_YUVJ444P:
        case AV_PIX_FMT_YUVJ440P:
        case AV_PIX_FMT_YUVJ411P: {
          // JPEG: full-range BT.601 Y'CbCr.
          const uint32_t cx = x >> desc->log2_chroma_w, cy = y >> desc->log2_chroma_h;
          const double Y = row[x];
          const double cb = f->data[1][size_t(cy) * size_t(f->linesize[1]) + cx] - 128.0;
          const double cr = f->data[2][size_t(cy) * size_t(f->linesize[2]) + cx] - 128.0;
          px[0] = clampByte(Y + 1.402 * cr);
          px[1] = clampByte(Y - 0.344136 * cb - 0.714136 * cr);
          px[2] = clampByte(Y + 1.772 * cb);
          break;
        }
        default:
          throw std::runtime_error(what + ": unsupported image pixel format " +
                                   std::string(desc && desc->name ? desc->name : "?"));
      }
    }
  }
  return img;
}

}  // namespace

RgbaImage decodeImage(const uint8_t* data, size_t size, const std::string& what) {
  static const uint8_t kPng[4] = {0x89, 'P', 'N', 'G'}, kJpeg[3] = {0xff, 0xd8, 0xff};
  AVCodecID id;
  if (size >= 4 && std::memcmp(data, kPng, 4) == 0) id = AV_CODEC_ID_PNG;
  else if (size >= 3 && std::memcmp(data, kJpeg, 3) == 0) id = AV_CODEC_ID_MJPEG;
  else throw std::runtime_error(what + ": not a PNG or JPEG image (KTX2/Basis and WebP textures are not supported)");
  const AVCodec* codec = avcodec_find_decoder(id);
  if (!codec) throw std::runtime_error(what + ": libavcodec has no decoder for this image format");
  Owned<AVCodecContext> ctx(avcodec_alloc_context3(codec));
  ctx->thread_count = 1;
  if (avcodec_open2(ctx.get(), codec, nullptr) < 0) throw std::runtime_error(what + ": cannot open the image decoder");
  Owned<AVPacket> packet(av_packet_alloc());
  std::vector<uint8_t> padded(data, data + size);
  padded.resize(size + AV_INPUT_BUFFER_PADDING_SIZE, 0);
  packet->data = padded.data();
  packet->size = int(size);
  Owned<AVFrame> frame(av_frame_alloc());
  if (avcodec_send_packet(ctx.get(), packet.get()) < 0) throw std::runtime_error(what + ": corrupt image");
  avcodec_send_packet(ctx.get(), nullptr);
  if (avcodec_receive_frame(ctx.get(), frame.get()) < 0 || frame->width <= 0 || frame->height <= 0)
    throw std::runtime_error(what + ": corrupt image");
  return toRgba(frame.get(), what);
}

}  // namespace holoquic
