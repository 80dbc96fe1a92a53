// Bit-level writing of V3C syntax (ISO/IEC 23090-5 §8.2 descriptors), the mirror of BitReader:
// u(n), ue(v), se(v), byte alignment and RBSP trailing bits.
#pragma once

#include <cstddef>
#include <cstdint>
#include <stdexcept>
#include <vector>

namespace vpcc {

class BitWriter {
 public:
  /// u(n) for n ≤ 64; throws std::invalid_argument when the value does not fit in n bits, so an
  /// encoder bug never silently writes a different value than it meant.
  void u(uint64_t value, unsigned n) {
    if (n > 64 || (n < 64 && (value >> n) != 0)) throw std::invalid_argument("value does not fit in u(n)");
    for (unsigned i = n; i-- > 0;) bit(static_cast<unsigned>((value >> i) & 1u));
  }
  void flag(bool value) { bit(value ? 1u : 0u); }

  /// ue(v).
  void ue(uint32_t value) {
    const uint64_t v = uint64_t{value} + 1;
    unsigned length = 0;
    while ((v >> length) > 1) ++length;
    u(0, length);
    u(v, length + 1);
  }
  /// se(v): positive k → 2k − 1, non-positive k → −2k.
  void se(int32_t value) {
    const int64_t v = value;
    ue(static_cast<uint32_t>(v > 0 ? 2 * v - 1 : -2 * v));
  }

  bool byteAligned() const { return bits_ == 0; }
  /// byte_alignment(): a 1 bit, then zeros up to the byte boundary.
  void byteAlignment() {
    bit(1);
    while (!byteAligned()) bit(0);
  }
  /// rbsp_trailing_bits(): the stop bit and alignment zeros.
  void rbspTrailingBits() { byteAlignment(); }
  void zeroAlign() {
    while (!byteAligned()) bit(0);
  }
  void bytes(const uint8_t* data, size_t size) {
    if (!byteAligned()) throw std::logic_error("BitWriter::bytes needs byte alignment");
    out_.insert(out_.end(), data, data + size);
  }
  void bytes(const std::vector<uint8_t>& data) { bytes(data.data(), data.size()); }

  const std::vector<uint8_t>& data() const { return out_; }
  std::vector<uint8_t> take() {
    if (!byteAligned()) throw std::logic_error("BitWriter::take with a partial byte");
    return std::move(out_);
  }

 private:
  void bit(unsigned b) {
    if (bits_ == 0) out_.push_back(0);
    out_.back() = static_cast<uint8_t>(out_.back() | (b << (7 - bits_)));
    bits_ = (bits_ + 1) & 7;
  }
  std::vector<uint8_t> out_;
  unsigned bits_ = 0;  // bits used in the last byte (0 = aligned)
};

}  // namespace vpcc
