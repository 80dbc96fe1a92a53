// The parser and atlas decoder on TMC2's bitstreams, and on corrupted copies of them: every
// malformed input must end in vpcc::ParseError, never a crash or another exception.
#include <random>

#include "harness.h"
#include "tmc2_logs.h"
#include "vpcc/atlas.h"
#include "vpcc/parser.h"

using namespace vpcc;

static std::string streamPath(const std::string& name) { return harness::sharedDir() + "/vpcc/" + name + "/" + name + ".bin"; }
static std::string logPath(const std::string& name, const std::string& log) {
  return harness::sharedDir() + "/vpcc/" + name + "/" + name + "_dec_" + log + ".txt";
}

TEST(parses_tmc2_high_level_syntax) {
  const auto seqs = parseSampleStream(harness::readFile(streamPath("synth_ai_r4")));
  CHECK_EQ(seqs.size(), size_t(1));
  const auto& s = seqs[0];
  CHECK_EQ(int(s.vps.ptl.codecGroup), 1);      // HEVC Main10
  CHECK_EQ(int(s.vps.ptl.reconstruction), 1);  // Rec1
  CHECK_EQ(s.vps.atlases[0].frameWidth, 1280u);
  CHECK_EQ(int(s.vps.atlases[0].mapCountMinus1), 1);
  CHECK_EQ(s.asps.size(), size_t(1));
  CHECK_EQ(s.asps[0].log2PatchPackingBlockSize, 4);
  CHECK(s.asps[0].removeDuplicatePoints);
  CHECK_EQ(s.videos.size(), size_t(3));
  // The geometry smoothing SEI of the CTC (grid 8, threshold 64) arrives with the first tile.
  bool smoothing = false;
  for (const auto& sei : s.tileLayers.at(0).prefixSei)
    if (sei.payloadType == 66 && !sei.geometrySmoothing.empty()) {
      smoothing = true;
      CHECK_EQ(sei.geometrySmoothing[0].second.gridSizeMinus2 + 2, 8);
      CHECK_EQ(int(sei.geometrySmoothing[0].second.threshold), 64);
    }
  CHECK(smoothing);
}

TEST(patch_counts_match_tmc2_for_intra_and_inter_atlases) {
  for (const std::string name : {"synth_ai_r4", "synth_ra_r2"}) {
    const auto seqs = parseSampleStream(harness::readFile(streamPath(name)));
    const auto frames = decodeAtlas(seqs.at(0));
    const auto expected = tmc2::values(logPath(name, "atlas_log"), "AtlasTotalNumProjPatches");
    CHECK_EQ(frames.size(), expected.size());
    for (size_t i = 0; i < frames.size() && i < expected.size(); ++i)
      CHECK_EQ(frames[i].patchCount(), size_t(std::stoul(expected[i])));
  }
}

static void parseExpectingOnlyParseErrors(const std::vector<uint8_t>& bytes, int& rejected) {
  try {
    const auto seqs = parseSampleStream(bytes);
    for (const auto& s : seqs) decodeAtlas(s);
  } catch (const ParseError&) {
    ++rejected;
  }
}

TEST(truncated_streams_are_rejected_cleanly) {
  const auto bytes = harness::readFile(streamPath("synth_ra_r2"));
  int rejected = 0;
  for (size_t cut = 0; cut < bytes.size(); cut += bytes.size() / 97 + 1)
    parseExpectingOnlyParseErrors(std::vector<uint8_t>(bytes.begin(), bytes.begin() + long(cut)), rejected);
  CHECK(rejected > 0);
}

TEST(corrupted_streams_never_crash) {
  const auto bytes = harness::readFile(streamPath("synth_ra_r2"));
  std::mt19937 rng(7);
  int rejected = 0;
  // The V3C and atlas headers sit in the first few hundred bytes: flip bits there, and anywhere.
  for (int i = 0; i < 2000; ++i) {
    auto copy = bytes;
    const size_t limit = i % 2 ? copy.size() : std::min<size_t>(copy.size(), 2048);
    const size_t at = rng() % limit;
    copy[at] ^= uint8_t(1u << (rng() % 8));
    if (i % 3 == 0) copy[rng() % limit] = uint8_t(rng());
    parseExpectingOnlyParseErrors(copy, rejected);
  }
  CHECK(rejected > 0);
}

TEST(garbage_is_rejected) {
  CHECK_THROWS(parseSampleStream(std::vector<uint8_t>{}), ParseError);
  CHECK_THROWS(parseSampleStream(std::vector<uint8_t>{0x60, 0xff, 0xff, 0xff}), ParseError);
  std::mt19937 rng(11);
  int rejected = 0;
  for (int i = 0; i < 500; ++i) {
    std::vector<uint8_t> junk(rng() % 300);
    for (auto& b : junk) b = uint8_t(rng());
    parseExpectingOnlyParseErrors(junk, rejected);
  }
  CHECK_EQ(rejected, 500);
}

TEST_MAIN
