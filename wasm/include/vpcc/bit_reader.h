// Bit-level reading of V3C syntax (ISO/IEC 23090-5 §8.2 descriptors): u(n), ue(v), se(v), byte
// alignment and the RBSP helpers. Every read is bounds-checked: a truncated or corrupt bitstream
// raises vpcc::ParseError instead of reading past the buffer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <vector>

namespace vpcc {

/// Raised for any malformed input; the message names what was being parsed.
class ParseError : public std::runtime_error {
 public:
  explicit ParseError(const std::string& what) : std::runtime_error(what) {}
};

class BitReader {
 public:
  BitReader(const uint8_t* data, size_t size) : data_(data), size_(size) {}
  explicit BitReader(const std::vector<uint8_t>& bytes) : BitReader(bytes.data(), bytes.size()) {}

  /// u(n) for n ≤ 64.
  uint64_t u(unsigned n) {
    if (n > 64) throw ParseError("u(n) with n > 64");
    if (bitsLeft() < n) throw ParseError("unexpected end of data");
    uint64_t value = 0;
    for (unsigned i = 0; i < n; ++i) {
      const size_t byte = bit_ >> 3;
      const unsigned shift = 7 - static_cast<unsigned>(bit_ & 7);
      value = (value << 1) | ((data_[byte] >> shift) & 1u);
      ++bit_;
    }
    return value;
  }
  uint32_t u32(unsigned n) { return static_cast<uint32_t>(u(n)); }
  bool flag() { return u(1) != 0; }

  /// ue(v): Exp-Golomb, limited to 32 leading zeros (larger values are not meaningful here).
  uint32_t ue() {
    unsigned zeros = 0;
    while (u(1) == 0) {
      if (++zeros > 31) throw ParseError("ue(v) longer than 32 bits");
    }
    if (zeros == 0) return 0;
    return static_cast<uint32_t>((uint64_t{1} << zeros) - 1 + u(zeros));
  }
  /// se(v).
  int32_t se() {
    const uint32_t k = ue();
    const int64_t magnitude = (static_cast<int64_t>(k) + 1) / 2;
    return static_cast<int32_t>((k & 1) ? magnitude : -magnitude);
  }
  /// i(n): two's complement.
  int64_t i(unsigned n) {
    const uint64_t raw = u(n);
    if (n == 0 || n == 64) return static_cast<int64_t>(raw);
    const uint64_t sign = uint64_t{1} << (n - 1);
    return static_cast<int64_t>((raw ^ sign)) - static_cast<int64_t>(sign);
  }

  bool byteAligned() const { return (bit_ & 7) == 0; }
  size_t bitPosition() const { return bit_; }
  size_t bytePosition() const { return bit_ >> 3; }
  size_t bitsLeft() const { return size_ * 8 - bit_; }
  bool moreData() const { return bit_ < size_ * 8; }

  /// byte_alignment(): one bit equal to 1, then zeros up to the byte boundary.
  void byteAlignment() {
    if (u(1) != 1) throw ParseError("byte_alignment() does not start with 1");
    while (!byteAligned()) u(1);
  }
  /// rbsp_trailing_bits(), tolerant of a missing stop bit at the very end (some writers omit it).
  void rbspTrailingBits() {
    if (!moreData()) return;
    u(1);
    while (!byteAligned()) u(1);
  }
  /// more_rbsp_data(): true when a 1 bit exists after the current position other than the
  /// final stop bit.
  bool moreRbspData() const {
    if (!moreData()) return false;
    size_t last = size_ * 8;
    while (last > bit_) {  // find the last 1 bit (the rbsp stop bit)
      --last;
      if ((data_[last >> 3] >> (7 - (last & 7))) & 1) break;
    }
    return last > bit_;
  }
  void skipBytes(size_t n) {
    if (!byteAligned() || bitsLeft() < n * 8) throw ParseError("cannot skip bytes");
    bit_ += n * 8;
  }
  const uint8_t* currentByte() const { return data_ + (bit_ >> 3); }

 private:
  const uint8_t* data_;
  size_t size_;
  size_t bit_ = 0;
};

}  // namespace vpcc
