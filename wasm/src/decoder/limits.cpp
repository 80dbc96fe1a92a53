// Decoder limits: the V-PCC level table's atlas sizes and the checks against them (limits.h).
#include "vpcc/limits.h"

#include <string>

#include "vpcc/bit_reader.h"

namespace vpcc {
namespace {

/// ISO/IEC 23090-5 Table A-6, MaxAtlasSize per level (ptl_level_idc = 30 × level).
struct LevelAtlasSize {
  uint8_t levelIdc;
  uint64_t maxAtlasSize;
};
constexpr LevelAtlasSize kLevels[] = {
    {30, 2228224}, {45, 2228224}, {60, 8912896}, {75, 8912896}, {90, 35651584}, {105, 35651584},
};

std::string levelName(uint8_t levelIdc) {
  return std::to_string(levelIdc / 30) + "." + std::to_string(levelIdc % 30 / 3);
}

}  // namespace

uint64_t levelMaxAtlasSize(uint8_t levelIdc) {
  for (const auto& level : kLevels)
    if (level.levelIdc == levelIdc) return level.maxAtlasSize;
  return 0;
}

uint64_t maxAtlasSamples(const ProfileTierLevel& ptl) {
  const uint64_t level = levelMaxAtlasSize(ptl.level);
  return level != 0 && level < kDecoderMaxAtlasSamples ? level : kDecoderMaxAtlasSamples;
}

void checkAtlasSize(const ProfileTierLevel& ptl, uint32_t width, uint32_t height, const char* what, uint8_t manifestLevel) {
  const uint64_t samples = uint64_t(width) * height;
  const uint64_t level = levelMaxAtlasSize(ptl.level);
  const std::string size = std::string(what) + " of " + std::to_string(width) + "×" + std::to_string(height) + " (" +
                           std::to_string(samples) + " samples)";
  if (level != 0 && samples > level)
    throw ParseError(size + " exceeds MaxAtlasSize " + std::to_string(level) + " of the declared level " +
                     levelName(ptl.level));
  const uint64_t declared = levelMaxAtlasSize(manifestLevel);
  if (declared != 0 && samples > declared)
    throw ParseError(size + " exceeds MaxAtlasSize " + std::to_string(declared) + " of level " + levelName(manifestLevel) +
                     ", which the manifest declares for this stream");
  if (samples > kDecoderMaxAtlasSamples)
    throw ParseError(size + " exceeds this decoder's cap of " + std::to_string(kDecoderMaxAtlasSamples) +
                     " samples (4096×4096)");
}

uint8_t lowestLevelFor(uint64_t samples) {
  for (const auto& level : kLevels)
    if (samples <= level.maxAtlasSize) return level.levelIdc;
  return kLevels[sizeof(kLevels) / sizeof(kLevels[0]) - 1].levelIdc;
}

}  // namespace vpcc
