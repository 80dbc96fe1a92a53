#include "vpcc/video.h"
#include "vpcc/video_encoder.h"

#include "vpcc/bit_reader.h"
#include "vpcc/md5.h"

namespace vpcc {

std::string Picture::planeMd5(int plane, bool sixteenBit) const {
  Md5 md5;
  const auto& samples = planes[plane].samples;
  std::vector<uint8_t> bytes;
  bytes.reserve(samples.size() * (sixteenBit ? 2 : 1));
  for (uint16_t s : samples) {
    bytes.push_back(static_cast<uint8_t>(s));
    if (sixteenBit) bytes.push_back(static_cast<uint8_t>(s >> 8));
  }
  md5.update(bytes.data(), bytes.size());
  return md5.hex();
}

void forEachNalUnit(const std::vector<uint8_t>& data, const std::function<void(const uint8_t*, size_t)>& nal) {
  size_t pos = 0;
  while (pos < data.size()) {
    if (data.size() - pos < 4) throw ParseError("truncated NAL unit length in a video sub-bitstream");
    const size_t length = size_t(data[pos]) << 24 | size_t(data[pos + 1]) << 16 | size_t(data[pos + 2]) << 8 | data[pos + 3];
    pos += 4;
    if (length == 0 || length > data.size() - pos) throw ParseError("NAL unit length runs past the video sub-bitstream");
    nal(data.data() + pos, length);
    pos += length;
  }
}

std::vector<uint8_t> lengthPrefixedToAnnexB(const std::vector<uint8_t>& data) {
  std::vector<uint8_t> out;
  out.reserve(data.size() + 64);
  forEachNalUnit(data, [&](const uint8_t* nal, size_t size) {
    static const uint8_t startCode[4] = {0, 0, 0, 1};
    out.insert(out.end(), startCode, startCode + 4);
    out.insert(out.end(), nal, nal + size);
  });
  return out;
}

std::vector<uint8_t> annexBToLengthPrefixed(const std::vector<uint8_t>& in) {
  // Start codes are 00 00 01 (or 00 00 00 01); NAL payloads never contain 00 00 0x, x ≤ 2.
  std::vector<size_t> starts;
  for (size_t i = 0; i + 2 < in.size(); ++i)
    if (in[i] == 0 && in[i + 1] == 0 && in[i + 2] == 1) {
      starts.push_back(i + 3);
      i += 2;
    }
  std::vector<uint8_t> out;
  out.reserve(in.size() + starts.size() * 2);
  for (size_t k = 0; k < starts.size(); ++k) {
    size_t end = k + 1 < starts.size() ? starts[k + 1] - 3 : in.size();
    while (end > starts[k] && in[end - 1] == 0) --end;  // trailing zero bytes belong to the next start code
    const size_t length = end - starts[k];
    if (length == 0) continue;
    for (int shift = 24; shift >= 0; shift -= 8) out.push_back(uint8_t(length >> shift));
    out.insert(out.end(), in.begin() + long(starts[k]), in.begin() + long(end));
  }
  return out;
}

VideoCodec codecFor(uint8_t codecGroup) { return codecGroup == 0 ? VideoCodec::Avc : VideoCodec::Hevc; }

}  // namespace vpcc
