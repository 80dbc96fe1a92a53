// Parsing of a V3C sample stream (ISO/IEC 23090-5 Annex C) into its parameter sets, atlas tile
// layers with their patch data, SEI messages, and the video sub-bitstreams (kept as coded).
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "vpcc/bit_reader.h"
#include "vpcc/syntax.h"

namespace vpcc {

/// One coded video sub-bitstream (occupancy, geometry or attribute; per map / partition /
/// auxiliary flag), exactly the payload of its V3C unit.
struct VideoSubBitstream {
  V3cUnitHeader header;
  std::vector<uint8_t> data;
};

/// One coded point-cloud sequence: everything from one VPS to the next. A holoquic segment is
/// exactly one of these.
struct CodedSequence {
  V3cParameterSet vps;
  std::vector<Asps> asps;  // indexed by id
  std::vector<Afps> afps;  // indexed by id
  std::vector<AtlasTileLayer> tileLayers;  // decoding order
  std::vector<VideoSubBitstream> videos;
  /// The raw bytes of each parameter set NAL (after emulation prevention removal), for hashes.
  std::vector<uint8_t> aspsRbsp, afpsRbsp;
};

/// Parses a whole V3C sample stream. Throws ParseError on malformed input, and on an atlas
/// larger than the level the stream declares or, when `manifestLevel` is not 0, than the level
/// its manifest declares (limits.h).
std::vector<CodedSequence> parseSampleStream(const uint8_t* data, size_t size, uint8_t manifestLevel = 0);
inline std::vector<CodedSequence> parseSampleStream(const std::vector<uint8_t>& bytes) {
  return parseSampleStream(bytes.data(), bytes.size());
}

/// Removes emulation prevention bytes (00 00 03 → 00 00) from a NAL unit payload. A NAL that
/// contains 00 00 0x with x ≤ 2 cannot have been written with emulation prevention (TMC2 writes
/// atlas NAL units without it), so it is returned unchanged.
std::vector<uint8_t> nalToRbsp(const uint8_t* data, size_t size);

/// NumRefIdxActive of an atlas tile (spec 8.4.6.x): 0 for I tiles.
uint32_t numRefIdxActive(const AtlasTileHeader& header, const Afps& afps);

}  // namespace vpcc
