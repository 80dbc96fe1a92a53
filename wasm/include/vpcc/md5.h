// MD5 (RFC 1321), for the conformance checksums V-PCC decoders report: decoded pictures,
// reconstructed frames and the decoded atlas information hash SEI.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>

namespace vpcc {

class Md5 {
 public:
  Md5();
  void update(const void* data, size_t size);
  std::array<uint8_t, 16> finish();
  /// Lower-case hex of finish().
  std::string hex();

 private:
  void block(const uint8_t* p);
  uint32_t state_[4];
  uint64_t length_ = 0;
  uint8_t buffer_[64];
  size_t buffered_ = 0;
};

std::string toHex(const uint8_t* data, size_t size);

}  // namespace vpcc
