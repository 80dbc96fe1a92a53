#include "harness.h"
#include "vpcc/bit_reader.h"
#include "vpcc/md5.h"
#include "vpcc/parser.h"

using namespace vpcc;

TEST(reads_fixed_width_fields_msb_first) {
  const std::vector<uint8_t> bytes{0b10110011, 0xff, 0x01};
  BitReader r(bytes);
  CHECK_EQ(r.u(1), 1u);
  CHECK_EQ(r.u(3), 0b011u);
  CHECK_EQ(r.u(4), 0b0011u);
  CHECK(r.byteAligned());
  CHECK_EQ(r.u(16), 0xff01u);
  CHECK(!r.moreData());
  CHECK_THROWS(r.u(1), ParseError);
}

TEST(reads_exp_golomb_codes) {
  // ue: 1 → 0, 010 → 1, 011 → 2, 00100 → 3; se: 010 → +1, 011 → -1
  const std::vector<uint8_t> bytes{0b10100110, 0b01000100, 0b11000000};
  BitReader r(bytes);
  CHECK_EQ(r.ue(), 0u);
  CHECK_EQ(r.ue(), 1u);
  CHECK_EQ(r.ue(), 2u);
  CHECK_EQ(r.ue(), 3u);
  CHECK_EQ(r.se(), 1);
  CHECK_EQ(r.se(), -1);
}

TEST(rejects_overlong_exp_golomb) {
  const std::vector<uint8_t> zeros(8, 0);
  BitReader r(zeros);
  CHECK_THROWS(r.ue(), ParseError);
}

TEST(signed_fields_are_twos_complement) {
  const std::vector<uint8_t> bytes{0xff, 0x80};
  BitReader r(bytes);
  CHECK_EQ(r.i(8), -1);
  CHECK_EQ(r.i(8), -128);
}

TEST(more_rbsp_data_stops_at_the_stop_bit) {
  const std::vector<uint8_t> bytes{0b10110000};  // data "1 0 1", then the stop bit and zeros
  BitReader r(bytes);
  CHECK(r.moreRbspData());
  r.u(2);
  CHECK(r.moreRbspData());
  r.u(1);
  CHECK(!r.moreRbspData());
}

TEST(emulation_prevention_is_removed_only_from_streams_that_use_it) {
  const uint8_t withEp[] = {0x40, 0x01, 0x00, 0x00, 0x03, 0x01, 0x7f};
  CHECK((nalToRbsp(withEp, sizeof withEp) == std::vector<uint8_t>{0x40, 0x01, 0x00, 0x00, 0x01, 0x7f}));
  // 00 00 01 inside a NAL is impossible with emulation prevention: the NAL is taken as written.
  const uint8_t raw[] = {0x40, 0x01, 0x00, 0x00, 0x01, 0x00, 0x00, 0x03, 0x02};
  CHECK((nalToRbsp(raw, sizeof raw) == std::vector<uint8_t>(raw, raw + sizeof raw)));
}

TEST(md5_matches_rfc1321_vectors) {
  auto md5 = [](const std::string& s) {
    Md5 m;
    m.update(s.data(), s.size());
    return m.hex();
  };
  CHECK_EQ(md5(""), std::string("d41d8cd98f00b204e9800998ecf8427e"));
  CHECK_EQ(md5("abc"), std::string("900150983cd24fb0d6963f7d28e17f72"));
  CHECK_EQ(md5("12345678901234567890123456789012345678901234567890123456789012345678901234567890"),
           std::string("57edf4a22be3c955ac49da2e2107b67a"));
}

TEST_MAIN
