#include "vpcc/api_session.h"

#include <algorithm>

#include "vpcc/bit_reader.h"
#include "vpcc/postprocess.h"

namespace vpcc {
namespace {

/// Converts one decoded sample to the nominal bit depth as the native path does (rounding right
/// shift clamped to the nominal range, or a left shift), so both paths give identical pictures.
struct DepthConverter {
  int shift;
  uint32_t maxValue;
  DepthConverter(int decoded, int nominal) : shift(decoded - nominal), maxValue((1u << nominal) - 1) {}
  uint16_t operator()(uint32_t v) const {
    if (shift > 0) return uint16_t(std::min((v + (1u << (shift - 1))) >> shift, maxValue));
    if (shift < 0) return uint16_t(std::min(v << -shift, maxValue));
    return uint16_t(std::min(v, maxValue));
  }
};

/// Picture size a stream needs: geometry and attribute at the atlas size; occupancy at the
/// atlas size divided by its precision (checked to divide it, as reconstruction assumes).
void checkPictureSize(const VideoStreamInfo& info, const VpsAtlas& atlas, uint32_t width, uint32_t height) {
  if (info.auxiliary) return;  // sized by the encoder; reconstruction checks that raw patches fit
  if (info.component != Component::Occupancy) {
    if (width != atlas.frameWidth || height != atlas.frameHeight)
      throw ParseError("decoded picture is " + std::to_string(width) + "×" + std::to_string(height) +
                       ", the atlas " + std::to_string(atlas.frameWidth) + "×" + std::to_string(atlas.frameHeight));
    return;
  }
  if (width == 0 || atlas.frameWidth % width != 0) throw ParseError("occupancy picture width does not divide the atlas");
  const uint32_t precision = atlas.frameWidth / width;
  if (height != (atlas.frameHeight + precision - 1) / precision)
    throw ParseError("occupancy picture height does not match its precision");
}

/// Bytes the samples of a stored picture take.
size_t pictureBytes(const Picture& picture) {
  size_t samples = 0;
  for (const Plane& plane : picture.planes) samples += plane.samples.size();
  return samples * sizeof(uint16_t);
}

}  // namespace

void DecodeSession::load(const uint8_t* data, size_t size) {
  sequences_.clear();
  states_.clear();
  streams_.clear();
  frames_.clear();
  output_ = PointCloudFrame();
  outputFrame_ = UINT32_MAX;
  heldPictureBytes_ = 0;
  try {
    sequences_ = parseSampleStream(data, size, manifestLevel_);
    if (sequences_.empty()) throw ParseError("no V3C parameter set in the segment");
    states_.resize(sequences_.size());
    for (uint32_t s = 0; s < sequences_.size(); ++s) {
      const CodedSequence& seq = sequences_[s];
      SequenceState& state = states_[s];
      state.atlas = decodeAtlas(seq);
      if (seq.vps.atlases.empty()) throw ParseError("VPS without atlas");
      const VpsAtlas& atlas = seq.vps.atlases[0];
      for (const auto& frame : state.atlas)
        if (frame.asps->frameWidth != atlas.frameWidth || frame.asps->frameHeight != atlas.frameHeight)
          throw ParseError("ASPS atlas size differs from the VPS");
      const uint32_t firstFrame = uint32_t(frames_.size());
      for (uint32_t f = 0; f < state.atlas.size(); ++f) frames_.push_back({s, f});

      // The streams reconstruction reads, as decodeVideo picks them.
      const uint32_t frameCount = uint32_t(state.atlas.size());
      const uint8_t mapCount = uint8_t(atlas.mapCountMinus1 + 1);
      state.video.mapsInterleaved = !atlas.multipleMapStreams;
      for (const auto& v : seq.videos) {
        if (v.header.atlasId != atlas.atlasId) continue;
        VideoStreamInfo info;
        info.auxiliary = v.header.auxiliaryVideo;
        info.sequence = s;
        info.codec = codecFor(seq.vps.ptl.codecGroup);
        info.firstFrame = firstFrame;
        info.bitstream = &v;
        info.map = v.header.mapIndex;
        if (info.map > 3) throw ParseError("map index > 3");
        info.picturesPerFrame =
            v.header.type != V3cUnitType::OVD && !info.auxiliary && state.video.mapsInterleaved ? mapCount : 1;
        std::vector<Picture>* slots = nullptr;
        switch (v.header.type) {
          case V3cUnitType::OVD:
            if (info.auxiliary) continue;
            info.component = Component::Occupancy;
            info.bitDepth = atlas.occupancy.bitDepthMinus1 + 1;
            slots = &state.video.occupancy;
            break;
          case V3cUnitType::GVD:
            info.component = Component::Geometry;
            info.bitDepth = atlas.geometry.bitDepthMinus1 + 1;
            slots = info.auxiliary ? &state.video.auxiliaryGeometry : &state.video.geometry[info.map];
            break;
          case V3cUnitType::AVD:
            if (v.header.attributeIndex != 0 || v.header.attributePartition != 0) continue;
            if (atlas.attributes.empty()) throw ParseError("attribute video without attribute information");
            info.component = Component::Attribute;
            info.bitDepth = atlas.attributes[0].bitDepthMinus1 + 1;
            slots = info.auxiliary ? &state.video.auxiliaryAttribute : &state.video.attribute[info.map];
            break;
          default:
            continue;
        }
        if (info.bitDepth > 16) throw ParseError("video bit depth above 16");
        if (!slots->empty()) throw ParseError("two video streams for the same component and map");
        info.pictureCount = frameCount * info.picturesPerFrame;
        slots->resize(info.pictureCount);
        streams_.push_back(info);
      }
    }
  } catch (...) {
    // Leave an empty session behind, never a half-loaded one.
    sequences_.clear();
    states_.clear();
    streams_.clear();
    frames_.clear();
    throw;
  }
}

std::vector<Picture>& DecodeSession::slots(uint32_t stream) {
  return const_cast<std::vector<Picture>&>(static_cast<const DecodeSession*>(this)->slots(stream));
}

const std::vector<Picture>& DecodeSession::slots(uint32_t stream) const {
  if (stream >= streams_.size()) throw ParseError("no video stream " + std::to_string(stream));
  const VideoStreamInfo& info = streams_[stream];
  const DecodedVideo& video = states_[info.sequence].video;
  switch (info.component) {
    case Component::Occupancy: return video.occupancy;
    case Component::Geometry: return info.auxiliary ? video.auxiliaryGeometry : video.geometry[info.map];
    default: return info.auxiliary ? video.auxiliaryAttribute : video.attribute[info.map];
  }
}

void DecodeSession::putPicture(uint32_t stream, uint32_t index, const PictureInput& in) {
  std::vector<Picture>& list = slots(stream);
  const VideoStreamInfo& info = streams_[stream];
  if (index >= list.size())
    throw ParseError("picture " + std::to_string(index) + " beyond the " + std::to_string(list.size()) +
                     " pictures of video stream " + std::to_string(stream));
  checkPictureSize(info, sequences_[info.sequence].vps.atlases[0], in.width, in.height);
  if (in.decodedBitDepth == 0 || in.decodedBitDepth > (in.sixteenBitSamples ? 16 : 8))
    throw ParseError("decoded bit depth does not fit its sample containers");
  const DepthConverter convert(in.decodedBitDepth, info.bitDepth);
  Picture& pic = list[index];
  // The memory budget, before any sample is allocated (a picture given twice replaces itself).
  const uint64_t chromaSamples = in.chroma444 ? uint64_t(in.width) * in.height
                                              : uint64_t((in.width + 1) / 2) * ((in.height + 1) / 2);
  const uint64_t bytes = (uint64_t(in.width) * in.height + 2 * chromaSamples) * sizeof(uint16_t);
  const size_t replaced = pictureBytes(pic);
  if (heldPictureBytes_ - replaced + bytes > pictureBudget_)
    throw ParseError("decoded pictures would take " + std::to_string((heldPictureBytes_ - replaced + bytes) >> 20) +
                     " MiB, over the session's budget of " + std::to_string(pictureBudget_ >> 20) +
                     " MiB: release frames before giving more pictures");
  heldPictureBytes_ -= replaced;
  pic = Picture();
  pic.width = in.width;
  pic.height = in.height;
  pic.bitDepth = info.bitDepth;
  pic.chroma444 = in.chroma444;
  if (in.chromaInterleaved && in.chroma444) throw ParseError("interleaved chroma is 4:2:0 only");
  for (int c = 0; c < 3; ++c) {
    Plane& plane = pic.planes[c];
    plane.width = c == 0 || in.chroma444 ? in.width : (in.width + 1) / 2;
    plane.height = c == 0 || in.chroma444 ? in.height : (in.height + 1) / 2;
    // Interleaved chroma: U and V from the one plane of pairs, every other sample.
    const bool pairs = c > 0 && in.chromaInterleaved;
    const void* source = pairs ? in.planes[1] : in.planes[c];
    const uint32_t stride = pairs ? in.strides[1] : in.strides[c];
    const uint32_t step = pairs ? 2 : 1, first = pairs ? c - 1 : 0;
    if (!source || stride < plane.width * step) throw ParseError("picture plane missing or stride too small");
    plane.samples.resize(size_t(plane.width) * plane.height);
    for (uint32_t y = 0; y < plane.height; ++y) {
      uint16_t* out = plane.samples.data() + size_t(y) * plane.width;
      if (in.sixteenBitSamples) {
        const uint16_t* row = static_cast<const uint16_t*>(source) + size_t(y) * stride + first;
        for (uint32_t x = 0; x < plane.width; ++x) out[x] = convert(row[x * step]);
      } else {
        const uint8_t* row = static_cast<const uint8_t*>(source) + size_t(y) * stride + first;
        for (uint32_t x = 0; x < plane.width; ++x) out[x] = convert(row[x * step]);
      }
    }
    heldPictureBytes_ += plane.samples.size() * sizeof(uint16_t);
  }
}

const Picture& DecodeSession::picture(uint32_t stream, uint32_t index) const {
  const auto& list = slots(stream);
  if (index >= list.size()) throw ParseError("no picture " + std::to_string(index) + " in video stream " + std::to_string(stream));
  return list[index];
}

const DecodeSession::FrameRef& DecodeSession::frameRef(uint32_t frame) const {
  if (frame >= frames_.size())
    throw ParseError("frame " + std::to_string(frame) + " beyond the " + std::to_string(frames_.size()) + " of the segment");
  return frames_[frame];
}

std::vector<std::pair<uint32_t, uint32_t>> DecodeSession::picturesOf(uint32_t frame) const {
  const FrameRef& ref = frameRef(frame);
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (uint32_t s = 0; s < streams_.size(); ++s) {
    const VideoStreamInfo& info = streams_[s];
    if (info.sequence != ref.sequence) continue;
    for (uint32_t k = 0; k < info.picturesPerFrame; ++k) out.emplace_back(s, ref.atlasFrame * info.picturesPerFrame + k);
  }
  return out;
}

bool DecodeSession::frameReady(uint32_t frame) const {
  for (const auto& [stream, index] : picturesOf(frame))
    if (slots(stream)[index].width == 0) return false;
  return true;
}

const PointCloudFrame& DecodeSession::reconstruct(uint32_t frame, bool postProcess) {
  const FrameRef& ref = frameRef(frame);
  if (!frameReady(frame)) throw ParseError("pictures of frame " + std::to_string(frame) + " are missing");
  const CodedSequence& seq = sequences_[ref.sequence];
  const SequenceState& state = states_[ref.sequence];
  const DecodedAtlasFrame& atlas = state.atlas[ref.atlasFrame];
  output_ = PointCloudFrame();  // free the previous frame before building the next
  PointCloudFrame reconstructed = reconstructFrame(seq, atlas, state.video);
  output_ = postProcess ? vpcc::postProcess(seq, atlas, std::move(reconstructed)) : std::move(reconstructed);
  outputFrame_ = frame;
  return output_;
}

void DecodeSession::releaseFrame(uint32_t frame) {
  // The frame's points go too: copied out by now, they would otherwise stay allocated while the
  // next frame's pictures come in and its reconstruction runs, a block of this frame's size left
  // among theirs (wasm memory never shrinks, and such holes let a long play's heap creep up).
  if (frame == outputFrame_) output_ = PointCloudFrame();
  for (const auto& [stream, index] : picturesOf(frame)) {
    Picture& picture = slots(stream)[index];
    heldPictureBytes_ -= pictureBytes(picture);
    picture = Picture();
  }
}

std::vector<PatchRecord> DecodeSession::patches(uint32_t frame) const {
  const FrameRef& ref = frameRef(frame);
  std::vector<PatchRecord> out;
  for (const DecodedTile& tile : states_[ref.sequence].atlas[ref.atlasFrame].tiles)
    for (const Patch& p : tile.patches)
      out.push_back({int32_t(tile.x), int32_t(tile.y), int32_t(p.u0), int32_t(p.v0), int32_t(p.sizeU0),
                     int32_t(p.sizeV0), int32_t(p.u1), int32_t(p.v1), int32_t(p.d1), int32_t(p.sizeD),
                     p.normalAxis, p.tangentAxis, p.bitangentAxis, p.projectionMode, p.orientation,
                     p.axisOfAdditionalPlane, int32_t(p.lodX), int32_t(p.lodY), int32_t(p.sizeXPixels),
                     int32_t(p.sizeYPixels)});
  return out;
}

ReconstructionParams DecodeSession::reconstructionParams(uint32_t frame) const {
  const FrameRef& ref = frameRef(frame);
  const DecodedAtlasFrame& atlas = states_[ref.sequence].atlas[ref.atlasFrame];
  const VpsAtlas& vps = sequences_[ref.sequence].vps.atlases.at(0);
  const Asps& asps = *atlas.asps;
  bool geometrySmoothing = false;
  if (atlas.geometrySmoothing)
    for (const auto& [index, instance] : atlas.geometrySmoothing->geometrySmoothing) geometrySmoothing |= !instance.cancel;
  ReconstructionParams out{};
  out.atlasWidth = int32_t(vps.frameWidth);
  out.atlasHeight = int32_t(vps.frameHeight);
  out.blockSize = int32_t(1u << asps.log2PatchPackingBlockSize);
  out.mapCount = int32_t(asps.mapCountMinus1 + 1u);
  out.absoluteD1 = vps.mapCountMinus1 == 0 || vps.mapAbsoluteCoding.at(1);
  // Duplicate removal is a Rec1/Rec2 tool (as reconstructFrame applies it).
  out.removeDuplicates = asps.removeDuplicatePoints && sequences_[ref.sequence].vps.ptl.reconstruction >= 1;
  out.sizeQuantizer = asps.patchSizeQuantizerPresent;
  out.lossyThreshold = int32_t(vps.occupancy.lossyThreshold);
  out.bitDepth3d = int32_t(vps.geometry.coordinatesBitDepthMinus1 + 1u);
  out.hasAttribute = !vps.attributes.empty();
  out.unsupported = (asps.plrEnabled ? 1 : 0) | (asps.pixelDeinterleaving ? 2 : 0) | (asps.eomPatchEnabled ? 4 : 0) |
                    (asps.rawPatchEnabled ? 8 : 0);
  out.postProcessing = (geometrySmoothing ? 1 : 0) | (atlas.attributeSmoothing ? 2 : 0) | (atlas.occupancySynthesis ? 4 : 0);
  return out;
}

uint32_t DecodeSession::blockSize(uint32_t frame) const {
  const FrameRef& ref = frameRef(frame);
  return 1u << states_[ref.sequence].atlas[ref.atlasFrame].asps->log2PatchPackingBlockSize;
}

uint32_t DecodeSession::atlasWidth(uint32_t frame) const {
  return sequences_[frameRef(frame).sequence].vps.atlases[0].frameWidth;
}

uint32_t DecodeSession::atlasHeight(uint32_t frame) const {
  return sequences_[frameRef(frame).sequence].vps.atlases[0].frameHeight;
}

std::vector<uint32_t> DecodeSession::blockToPatch(uint32_t frame) const {
  // The same rule as reconstruction: a block belongs to the last patch in coding order that
  // covers an occupied pixel of it.
  const FrameRef& ref = frameRef(frame);
  const SequenceState& state = states_[ref.sequence];
  const DecodedAtlasFrame& atlas = state.atlas[ref.atlasFrame];
  if (ref.atlasFrame >= state.video.occupancy.size() || state.video.occupancy[ref.atlasFrame].width == 0)
    throw ParseError("occupancy picture of frame " + std::to_string(frame) + " is missing");
  const Plane& occupancy = state.video.occupancy[ref.atlasFrame].planes[0];
  const VpsAtlas& vps = sequences_[ref.sequence].vps.atlases[0];
  const uint32_t precision = vps.frameWidth / occupancy.width;
  const uint32_t block = blockSize(frame);
  const uint32_t blocksWide = (vps.frameWidth + block - 1) / block, blocksHigh = (vps.frameHeight + block - 1) / block;
  std::vector<uint32_t> map(size_t(blocksWide) * blocksHigh, 0);
  uint32_t index = 0;
  for (const DecodedTile& tile : atlas.tiles)
    for (const Patch& p : tile.patches) {
      ++index;
      for (uint32_t vb = 0; vb < p.sizeV0; ++vb)
        for (uint32_t ub = 0; ub < p.sizeU0; ++ub) {
          uint32_t xb, yb;
          patchToCanvas(p, 1, ub, vb, xb, yb);
          const uint32_t x0 = tile.x + xb * block, y0 = tile.y + yb * block;
          bool occupied = false;
          for (uint32_t y = y0; y < y0 + block && y < vps.frameHeight && !occupied; ++y)
            for (uint32_t x = x0; x < x0 + block && x < vps.frameWidth && !occupied; ++x)
              occupied = occupancy.at(x / precision, y / precision) > vps.occupancy.lossyThreshold;
          if (occupied) map[size_t(y0 / block) * blocksWide + x0 / block] = index;
        }
    }
  return map;
}

}  // namespace vpcc
