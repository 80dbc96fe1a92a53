// Conformance against TMC2 release-v24.0 (../shared/vpcc): decoded video pictures bit-exact
// (MD5 per plane), reconstructed point counts per frame equal TMC2's, and the frame MD5 of every
// reconstructed frame before post-processing equal to TMC2's.
#include "harness.h"
#include "tmc2_logs.h"
#include "vpcc/atlas.h"
#include "vpcc/parser.h"
#include "vpcc/reconstruct.h"

using namespace vpcc;

static const char* kStreams[] = {"synth_ai_r4", "synth_ra_r2"};
static std::string dir(const std::string& name) { return harness::sharedDir() + "/vpcc/" + name + "/" + name; }

TEST(decoded_pictures_match_tmc2) {
  auto decoder = makeLibavDecoder();
  for (const std::string name : kStreams) {
    const auto seqs = parseSampleStream(harness::readFile(dir(name) + ".bin"));
    const DecodedVideo video = decodeVideo(seqs.at(0), *decoder);
    const auto expected = tmc2::pictures(dir(name) + "_dec_picture_log.txt");
    auto compare = [&](const std::vector<Picture>& pictures, const std::string& component, bool sixteenBit) {
      const auto& want = expected.at(component);
      CHECK_EQ(pictures.size(), want.size());
      for (size_t i = 0; i < pictures.size() && i < want.size(); ++i)
        for (int p = 0; p < 3; ++p) {
          if (pictures[i].planeMd5(p, sixteenBit) != want[i][p]) {
            std::fprintf(stderr, "  %s %s picture %zu plane %d differs\n", name.c_str(), component.c_str(), i, p);
            ++harness::failures();
          }
        }
    };
    compare(video.occupancy, "Occupancy", false);
    compare(video.geometry[0], "Geometry", true);
    compare(video.attribute[0], "Attribute", true);
  }
}

TEST(reconstructed_point_counts_match_tmc2) {
  auto decoder = makeLibavDecoder();
  for (const std::string name : kStreams) {
    const auto seqs = parseSampleStream(harness::readFile(dir(name) + ".bin"));
    const DecodedVideo video = decodeVideo(seqs.at(0), *decoder);
    const auto frames = decodeAtlas(seqs.at(0));
    const auto expected = tmc2::values(dir(name) + "_dec_pcframe_log.txt", "NumProjPoints");
    CHECK_EQ(frames.size(), expected.size());
    for (size_t i = 0; i < frames.size() && i < expected.size(); ++i) {
      const PointCloudFrame frame = reconstructFrame(seqs[0], frames[i], video);
      CHECK_EQ(size_t(frame.projectedPoints), size_t(std::stoul(expected[i])));
      CHECK_EQ(frame.size(), size_t(frame.projectedPoints));
    }
  }
}

TEST(frame_md5_before_postprocessing_matches_tmc2) {
  auto decoder = makeLibavDecoder();
  for (const std::string name : kStreams) {
    const auto seqs = parseSampleStream(harness::readFile(dir(name) + ".bin"));
    const DecodedVideo video = decodeVideo(seqs.at(0), *decoder);
    const auto frames = decodeAtlas(seqs.at(0));
    const auto expected = tmc2::values(dir(name) + "_dec_pcframe_log.txt", "MD5 checksum");
    CHECK_EQ(frames.size(), expected.size());
    for (size_t i = 0; i < frames.size() && i < expected.size(); ++i) {
      const PointCloudFrame frame = reconstructFrame(seqs[0], frames[i], video);
      CHECK_EQ(frame.colors16.size(), frame.positions.size());
      if (frameMd5(frame) != expected[i]) {
        std::fprintf(stderr, "  %s frame %zu: md5 %s, TMC2 %s\n", name.c_str(), i, frameMd5(frame).c_str(),
                     expected[i].c_str());
        ++harness::failures();
      }
    }
  }
}

TEST_MAIN
