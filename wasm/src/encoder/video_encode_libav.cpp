// Native video encoding through libavcodec's libx264 / libx265 wrappers.
#include <cstring>
#include <stdexcept>
#include <string>

#include "vpcc/video_encoder.h"

#include "common/libav_owned.h"

extern "C" {
#include <libavcodec/avcodec.h>
#include <libavutil/opt.h>
}

namespace vpcc {
namespace {

using vpcc::libav::Owned;

/// x265 options added to the default preset ("slow") for the attribute video (issue 37): colour
/// pictures are half or more of a stream's rate, and their textured patches reward a fuller
/// search where depth maps (smooth) do not. Measured on the shared 8-frame sequences, one GOP,
/// one option at a time against "slow" (docs/benchmarks.md, "Encoder rate-distortion: the
/// attribute video"):
///  - rd=6: full rate-distortion optimisation of mode and split decisions (slow uses level 4);
///  - rskip=0: no early stop of the CU split search when a CU's best mode is skip — on colour
///    this found the small CUs that patch edges and texture need (+0.16 dB luma alone, and
///    +0.3–0.5 dB with rd=6);
///  - tu-intra-depth=2, tu-inter-depth=2: residual quadtrees one level deeper;
///  - deblock=-1,-1: weaker deblocking (−1.8 % rate at equal luma on CesiumMan).
/// Together a luma BD-rate of the whole stream of −9 % with one GOP and −3 % all-intra (the
/// gain is in P pictures), for ~0.5 s more CPU per frame (0.5 → 1.0 s, still ~26 × faster than
/// TMC2's encoder).
constexpr const char* kAttributeAnalysis = ":rd=6:rskip=0:tu-intra-depth=2:tu-inter-depth=2:deblock=-1,-1";

/// x265 options for the geometry video coded as one GOP (issue 37; docs/benchmarks.md, "Encoder
/// rate-distortion: geometry"). D1's loss is nearly all one-voxel offsets from the quantisation
/// of depths, and every later depth picture of the GOP predicts from the first one:
///  - ipratio=1.7: the IDR picture 4.6 QP below the P pictures instead of x265's 2.9 (1.4), as
///    MPEG's random-access hierarchy codes its intra picture finer than the pictures that refer
///    to it (step 6: Fox D1 BD-rate −4.4 %, Y +0.7 %; no encoding time);
///  - rd=6: full rate-distortion mode and split decisions, as the attribute video has (step 9:
///    D1 −7.8 % CesiumMan, −4.0 % Fox, Y −2.5 / −1.3 %, for ~12 % more encoding CPU);
///  - no-deblock: the deblocking filter smooths across block edges, but a depth picture's edges
///    that matter are its patches', where depths jump by design, and each P picture predicts
///    from the filtered one before it (step 10: D1 −3.9 % CesiumMan, −4.8 % Fox, Y −3.1 /
///    −4.4 %, no encoding time). SAO stays: without it Fox's D1 lost 6 %.
/// Under all-intra (a GOP of two: map 0 intra, map 1 P) none of them pays: x265's ratio stays,
/// and rd=6 and no-deblock measured neutral there (within ±0.3 %), so they are left out.
constexpr const char* kGeometryOneGop = ":ipratio=1.7:rd=6:no-deblock=1";

/// x265 options for the occupancy video, coded losslessly as 0/1 samples (issue 37, step 13 in
/// docs/benchmarks.md): with no quantisation the only choices are how to split and predict, and
/// the patches' outlines are what costs, so the split search goes to the smallest blocks:
///  - rd=6, rskip=0: full rate-distortion split and mode decisions, no early stop at skip CUs;
///  - tu-intra-depth=4, tu-inter-depth=4: residual quadtrees down to 4 × 4 inside a CU.
/// The occupancy bytes fall by ~6 % (CesiumMan all-intra 27/42), the stream's by ~0.5–1 %, for
/// no measurable encoding time (the picture is a sixteenth of the others' size at precision 4).
constexpr const char* kOccupancyAnalysis = ":rd=6:rskip=0:tu-intra-depth=4:tu-inter-depth=4";

/// The x265 options a video gets on top of its preset; none when a preset is named (it is taken
/// as it is).
std::string tuningOptions(const VideoEncodeSettings& s) {
  if (s.preset) return "";
  if (s.attribute) return kAttributeAnalysis;
  if (s.geometry && !s.allIntra) return kGeometryOneGop;
  if (!s.geometry && s.lossless) return kOccupancyAnalysis;
  return "";
}

class LibavEncoder final : public VideoEncoder {
 public:
  std::vector<uint8_t> encode(const std::vector<Picture>& pictures, const VideoEncodeSettings& s) override {
    if (pictures.empty()) throw std::invalid_argument("no pictures to encode");
    const uint32_t width = pictures[0].width, height = pictures[0].height;
    if (width % 2 || height % 2) throw std::invalid_argument("video pictures need even dimensions");
    const bool hevc = s.codec == VideoCodec::Hevc;
    const AVCodec* codec = avcodec_find_encoder_by_name(hevc ? "libx265" : "libx264");
    if (!codec) throw std::runtime_error(std::string("libavcodec has no ") + (hevc ? "libx265" : "libx264"));
    Owned<AVCodecContext> ctx(avcodec_alloc_context3(codec));
    ctx->width = int(width);
    ctx->height = int(height);
    ctx->pix_fmt = AV_PIX_FMT_YUV420P;
    if (s.pictureRate < 1 || s.pictureRate > 240) throw std::invalid_argument("video picture rate must be 1–240 per second");
    // x264 and x265 write these into the VUI timing information (num_units_in_tick, time_scale).
    ctx->time_base = AVRational{1, int(s.pictureRate)};
    ctx->framerate = AVRational{int(s.pictureRate), 1};
    if (s.picturesPerFrame < 1 || pictures.size() % s.picturesPerFrame)
      throw std::invalid_argument("video pictures must be whole frames of picturesPerFrame pictures");
    const size_t intraPeriod = s.allIntra ? s.picturesPerFrame : pictures.size();
    ctx->gop_size = int(intraPeriod);
    ctx->thread_count = s.threads;
    ctx->color_range = AVCOL_RANGE_JPEG;  // samples use the full 0–255 range (depths, occupancy)
    const std::string qp = std::to_string(s.qp);
    if (s.chromaQpOffset < -12 || s.chromaQpOffset > 12) throw std::invalid_argument("chroma QP offset must be −12…12");
    const std::string chromaOffset = std::to_string(s.chromaQpOffset);
    if (s.lossless && !hevc) throw std::invalid_argument("lossless video coding needs HEVC");
    av_opt_set(ctx->priv_data, "preset", s.preset ? s.preset : defaultPreset(s.codec), 0);
    const std::string keyint = std::to_string(intraPeriod);
    if (hevc) {
      // One IDR per sequence (or per frame), no scene-cut IDRs, no info SEI (keeps output
      // deterministic and small). Rate-distortion choices (issue 37, measured on CesiumMan):
      //  - no B pictures: the maps are interleaved (map 0, map 1 of a frame, then the next
      //    frame's), so a picture's best reference is the one just before it; B pictures cost
      //    ~3 % more rate and lose 0.3 dB of D1 and 0.5 dB of luma;
      //  - no psycho-visual tuning (psy-rd, psy-rdoq, adaptive quantisation): depth and colour
      //    samples are measured by their squared error, not looked at, so MSE-optimal decisions
      //    save ~4 % of the rate at equal PSNR.
      const std::string rate = s.lossless ? std::string("lossless=1") : "qp=" + qp;
      const std::string params = rate + ":keyint=" + keyint + ":min-keyint=1:scenecut=0:info=0:log-level=error:open-gop=0:pools=" +
                                 std::to_string(s.threads) + ":frame-threads=" + std::to_string(s.threads) +
                                 ":bframes=0:psy-rd=0:psy-rdoq=0:aq-mode=0" + tuningOptions(s) +
                                 (s.chromaQpOffset ? ":cbqpoffs=" + chromaOffset + ":crqpoffs=" + chromaOffset : std::string());
      av_opt_set(ctx->priv_data, "x265-params", params.c_str(), 0);
    } else {
      av_opt_set(ctx->priv_data, "qp", qp.c_str(), 0);
      const std::string params = "scenecut=0:open-gop=0" + (s.chromaQpOffset ? ":chroma-qp-offset=" + chromaOffset : std::string());
      av_opt_set(ctx->priv_data, "x264-params", params.c_str(), 0);
      av_opt_set(ctx->priv_data, "udu_sei", "0", 0);
    }
    if (avcodec_open2(ctx.get(), codec, nullptr) < 0) throw std::runtime_error("cannot open the video encoder");

    Owned<AVFrame> frame(av_frame_alloc());
    frame->format = ctx->pix_fmt;
    frame->width = ctx->width;
    frame->height = ctx->height;
    if (av_frame_get_buffer(frame.get(), 0) < 0) throw std::runtime_error("cannot allocate a video frame");
    Owned<AVPacket> packet(av_packet_alloc());
    std::vector<uint8_t> annexB;
    auto drain = [&]() {
      while (avcodec_receive_packet(ctx.get(), packet.get()) == 0) {
        annexB.insert(annexB.end(), packet->data, packet->data + packet->size);
        av_packet_unref(packet.get());
      }
    };
    for (size_t i = 0; i < pictures.size(); ++i) {
      const Picture& pic = pictures[i];
      if (pic.width != width || pic.height != height || pic.chroma444)
        throw std::invalid_argument("video pictures must share one size and be 4:2:0");
      if (av_frame_make_writable(frame.get()) < 0) throw std::runtime_error("video frame not writable");
      for (int c = 0; c < 3; ++c) {
        const Plane& plane = pic.planes[c];
        for (uint32_t y = 0; y < plane.height; ++y) {
          uint8_t* row = frame->data[c] + size_t(y) * frame->linesize[c];
          const uint16_t* in = plane.samples.data() + size_t(y) * plane.width;
          for (uint32_t x = 0; x < plane.width; ++x) row[x] = uint8_t(in[x] > 255 ? 255 : in[x]);
        }
      }
      frame->pts = int64_t(i);
      frame->pict_type = i == 0 ? AV_PICTURE_TYPE_I : AV_PICTURE_TYPE_NONE;
      if (avcodec_send_frame(ctx.get(), frame.get()) < 0) throw std::runtime_error("video encoder rejected a frame");
      drain();
    }
    avcodec_send_frame(ctx.get(), nullptr);
    drain();
    return annexBToLengthPrefixed(annexB);
  }
};

}  // namespace

const char* defaultPreset(VideoCodec codec) { return codec == VideoCodec::Hevc ? "slow" : "veryfast"; }

std::unique_ptr<VideoEncoder> makeLibavEncoder() { return std::make_unique<LibavEncoder>(); }

}  // namespace vpcc
