// The V3C writer against the parser: TMC2's conformance streams parsed, written back and parsed
// again give the same syntax and decode to the same points; bit writer primitives round-trip.
#include <random>

#include "harness.h"
#include "vpcc/atlas.h"
#include "vpcc/bit_reader.h"
#include "vpcc/bit_writer.h"
#include "vpcc/parser.h"
#include "vpcc/reconstruct.h"
#include "vpcc/writer.h"

using namespace vpcc;

static const char* kStreams[] = {"synth_ai_r4", "synth_ra_r2"};
static std::string dir(const std::string& name) { return harness::sharedDir() + "/vpcc/" + name + "/" + name; }

TEST(bit_writer_round_trips_every_descriptor) {
  std::mt19937 rng(7);
  BitWriter w;
  std::vector<std::tuple<int, uint64_t, unsigned>> written;  // kind, value, bits
  for (int i = 0; i < 5000; ++i) {
    const int kind = int(rng() % 3);
    const unsigned bits = 1 + rng() % 32;
    if (kind == 0) {
      const uint64_t v = rng() & ((uint64_t{1} << bits) - 1);
      w.u(v, bits);
      written.emplace_back(kind, v, bits);
    } else if (kind == 1) {
      const uint32_t v = uint32_t(rng() >> (rng() % 32));
      w.ue(v == 0xffffffffu ? 0 : v);
      written.emplace_back(kind, v == 0xffffffffu ? 0 : v, 0);
    } else {
      const int32_t v = int32_t(rng() % 200001) - 100000;
      w.se(v);
      written.emplace_back(kind, uint64_t(int64_t(v)), 0);
    }
  }
  w.byteAlignment();
  const auto bytes = w.take();
  BitReader r(bytes);
  for (const auto& [kind, value, bits] : written) {
    if (kind == 0) CHECK_EQ(r.u(bits), value);
    else if (kind == 1) CHECK_EQ(uint64_t(r.ue()), value);
    else CHECK_EQ(int64_t(r.se()), int64_t(value));
  }
  r.byteAlignment();
  CHECK(!r.moreData());
  CHECK_THROWS(BitWriter().u(4, 2), std::invalid_argument);
}

TEST(emulation_prevention_round_trips) {
  const std::vector<uint8_t> rbsp = {0x40, 0, 0, 0, 0, 0, 1, 0, 0, 2, 0, 0, 3, 0, 0, 4, 0xff, 0, 0};
  const auto nal = rbspToNal(rbsp);
  for (size_t i = 2; i < nal.size(); ++i) CHECK(!(nal[i - 2] == 0 && nal[i - 1] == 0 && nal[i] <= 2));
  CHECK(nalToRbsp(nal.data(), nal.size()) == rbsp);
}

TEST(tmc2_streams_survive_a_write_read_round_trip) {
  auto decoder = makeLibavDecoder();
  for (const std::string name : kStreams) {
    const auto original = parseSampleStream(harness::readFile(dir(name) + ".bin"));
    const auto rewritten = parseSampleStream(writeSampleStream(original));
    CHECK_EQ(rewritten.size(), original.size());
    const CodedSequence& a = original.at(0);
    const CodedSequence& b = rewritten.at(0);
    CHECK_EQ(b.tileLayers.size(), a.tileLayers.size());
    CHECK_EQ(b.videos.size(), a.videos.size());
    for (size_t i = 0; i < a.videos.size() && i < b.videos.size(); ++i) CHECK(a.videos[i].data == b.videos[i].data);
    const auto framesA = decodeAtlas(a), framesB = decodeAtlas(b);
    CHECK_EQ(framesB.size(), framesA.size());
    const DecodedVideo video = decodeVideo(a, *decoder);
    for (size_t f = 0; f < framesA.size() && f < framesB.size(); ++f) {
      CHECK_EQ(framesB[f].patchCount(), framesA[f].patchCount());
      CHECK(framesB[f].geometrySmoothing != nullptr || framesA[f].geometrySmoothing == nullptr);
      const auto pa = reconstructFrame(a, framesA[f], video), pb = reconstructFrame(b, framesB[f], video);
      CHECK_EQ(frameMd5(pb), frameMd5(pa));
    }
  }
}

TEST_MAIN
