// Writing of V3C sample streams (ISO/IEC 23090-5 Annex C), the mirror of parser.h: the encoder
// fills a CodedSequence and this turns it into bytes every conforming decoder reads.
#pragma once

#include <cstdint>
#include <vector>

#include "vpcc/parser.h"

namespace vpcc {

/// Writes sequences as one V3C sample stream: per sequence the VPS, one atlas data unit (ASPS,
/// AFPS, then per atlas frame its prefix SEI, tile layer and suffix SEI) and the video units.
/// Throws std::invalid_argument for values the syntax cannot carry.
std::vector<uint8_t> writeSampleStream(const std::vector<CodedSequence>& sequences);

/// Inserts emulation prevention bytes (00 00 0x with x ≤ 3 → 00 00 03 0x) into a NAL unit.
std::vector<uint8_t> rbspToNal(const std::vector<uint8_t>& rbsp);

}  // namespace vpcc
