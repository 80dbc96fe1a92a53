// Encoding of the occupancy, geometry and attribute pictures into video sub-bitstreams (natively
// through Debian's libx264 / libx265 via libavcodec), stored as V3C stores them: 4-byte
// length-prefixed NAL units.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "vpcc/video.h"

namespace vpcc {

struct VideoEncodeSettings {
  VideoCodec codec = VideoCodec::Avc;
  /// Constant quantiser (0–51). Occupancy uses a low one so the 0/255 map never crosses the
  /// decoder's lossy threshold; geometry and attribute trade it for rate.
  int qp = 32;
  /// Lossless coding (HEVC only: transform and quantisation bypassed; `qp` unused).
  bool lossless = false;
  /// Encoder speed/efficiency trade-off (x264/x265 preset name); none: the codec's default
  /// (defaultPreset).
  const char* preset = nullptr;
  /// MPEG's all-intra test condition: every frame's first picture (map 0) an intra (IDR) picture,
  /// and the frame's other pictures (map 1) P pictures predicted from it, as MPEG's common test
  /// conditions code the two maps (TMC2's ctc-hm-*-ai configurations: a GOP of 2). Otherwise one
  /// closed GOP, an IDR picture and then P pictures.
  bool allIntra = false;
  /// Pictures per point-cloud frame (the map count for geometry and attribute, 1 for occupancy):
  /// the intra period under allIntra.
  unsigned picturesPerFrame = 1;
  /// The pictures carry colours (the attribute video) rather than depths or occupancy: with
  /// HEVC at the default preset, x265 then analyses them more thoroughly (see defaultPreset).
  bool attribute = false;
  /// Added to `qp` for the two chroma planes (−12…12; x265's cbqpoffs and crqpoffs, x264's
  /// chroma-qp-offset). Positive values move rate from chroma to luma.
  int chromaQpOffset = 0;
  /// The pictures carry depths (the geometry video): with HEVC at the default preset and one GOP,
  /// x265 then codes the intra picture finer against the P pictures (kGeometryOneGop in
  /// video_encode_libav.cpp).
  bool geometry = false;
  /// Threads inside one encode; the packager parallelises across streams and segments instead.
  int threads = 1;
  /// Pictures per second, declared in the stream's timing information (AVC and HEVC VUI) so
  /// that whoever reads the video alone knows its time base: the content's frame rate, times
  /// two for geometry and attribute videos with two maps (two pictures per frame), so the
  /// stream lasts as long as its segment.
  unsigned pictureRate = 30;
};

class VideoEncoder {
 public:
  virtual ~VideoEncoder() = default;
  /// Encodes pictures (8-bit 4:2:0, all the same size, even dimensions) as one closed GOP that
  /// starts with an IDR picture; returns length-prefixed NAL units. Deterministic for equal input;
  /// safe to call from several threads at once (the encoder codes its three videos concurrently).
  virtual std::vector<uint8_t> encode(const std::vector<Picture>& pictures, const VideoEncodeSettings& settings) = 0;
};

std::unique_ptr<VideoEncoder> makeLibavEncoder();

/// The preset used when none is given: x264's "veryfast" for AVC (the packager's browser
/// ladders, where packing time counts) and x265's "slow" for HEVC (issue 37's rate-distortion
/// work: at 8 frames of CesiumMan, QP 27/36, it needs ~3 % less rate than "medium" and gains
/// 0.9 dB of luma, for ~0.3 s more CPU per frame — still far below TMC2's time).
/// With HEVC, attribute videos at this preset also get the analysis options of
/// kAttributeAnalysis (video_encode_libav.cpp).
const char* defaultPreset(VideoCodec codec);

/// Converts an Annex-B byte stream (start codes) to 4-byte length-prefixed NAL units.
std::vector<uint8_t> annexBToLengthPrefixed(const std::vector<uint8_t>& annexB);

}  // namespace vpcc
