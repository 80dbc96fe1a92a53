// Fuzz targets of the decoder's first stages (targets.h): high-level syntax alone, then atlas
// decoding with the atlas views a per-pixel reconstruction reads; and the name → target table.
#include <algorithm>
#include <cstring>
#include <vector>

#include "targets.h"
#include "vpcc/api_session.h"
#include "vpcc/bit_reader.h"
#include "vpcc/parser.h"

namespace vpcc::fuzz {
namespace {

constexpr uint32_t kAtlasFrames = 4;
constexpr uint64_t kMapPixels = 512ull * 512ull;

/// A fully occupied occupancy picture at the size `stream` needs (precision 1).
void putFullOccupancy(DecodeSession& session, uint32_t stream, uint32_t index, uint32_t width, uint32_t height) {
  const VideoStreamInfo& info = session.streams()[stream];
  const uint16_t occupied = uint16_t((1u << info.bitDepth) - 1);
  std::vector<uint16_t> luma(size_t(width) * height, occupied), chroma(size_t((width + 1) / 2) * ((height + 1) / 2), 0);
  PictureInput in;
  in.width = width;
  in.height = height;
  in.sixteenBitSamples = true;
  in.decodedBitDepth = info.bitDepth;
  in.planes[0] = luma.data();
  in.planes[1] = in.planes[2] = chroma.data();
  in.strides[0] = width;
  in.strides[1] = in.strides[2] = (width + 1) / 2;
  session.putPicture(stream, index, in);
}

void decodeAtlasViews(DecodeSession& session, const uint8_t* data, size_t size) {
  session.load(data, size);
  const uint32_t frames = std::min(session.frameCount(), kAtlasFrames);
  for (uint32_t f = 0; f < frames; ++f) {
    session.patches(f);
    session.reconstructionParams(f);
    session.blockSize(f);
    const uint32_t width = session.atlasWidth(f), height = session.atlasHeight(f);
    if (uint64_t(width) * height > kMapPixels) continue;
    for (uint32_t s = 0; s < session.streams().size(); ++s) {
      const VideoStreamInfo& info = session.streams()[s];
      if (info.component != Component::Occupancy || f < info.firstFrame || f - info.firstFrame >= info.pictureCount) continue;
      putFullOccupancy(session, s, f - info.firstFrame, width, height);
    }
    session.blockToPatch(f);
    session.releaseFrame(f);
  }
}

}  // namespace

void parseInput(const uint8_t* data, size_t size) {
  try {
    parseSampleStream(data, size);
  } catch (const ParseError&) {
  }
}

void atlasInput(const uint8_t* data, size_t size) {
  DecodeSession session;
  try {
    decodeAtlasViews(session, data, size);
  } catch (const ParseError&) {
  }
}

Target targetNamed(const char* name) {
  if (!std::strcmp(name, "parse")) return parseInput;
  if (!std::strcmp(name, "atlas")) return atlasInput;
  if (!std::strcmp(name, "reconstruct")) return reconstructInput;
  if (!std::strcmp(name, "postprocess")) return postprocessInput;
#ifdef VPCC_WITH_DE265
  if (!std::strcmp(name, "stream")) return streamInput;
#endif
  return nullptr;
}

}  // namespace vpcc::fuzz
