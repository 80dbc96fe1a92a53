// Texture images of glTF models (PNG, JPEG) decoded to 8-bit RGBA with libavcodec's PNG and
// MJPEG decoders — the library the encoder already links, so no further dependency.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace holoquic {

struct RgbaImage {
  uint32_t width = 0, height = 0;
  std::vector<uint8_t> rgba;  // row-major, 4 bytes per pixel, sRGB as stored
};

/// Decodes a PNG or JPEG file held in memory; throws std::runtime_error naming `what` and the
/// reason (unknown format, corrupt data, unsupported pixel format).
RgbaImage decodeImage(const uint8_t* data, size_t size, const std::string& what);

}  // namespace holoquic
