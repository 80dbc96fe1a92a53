// Conformance against TMC2 release-v24.0 (../shared/vpcc): decoded video pictures bit-exact
// (MD5 per plane), reconstructed point counts per frame equal TMC2's, and the frame MD5 of every
// reconstructed frame before and after post-processing (grid geometry smoothing + colour
// transfer) equal to TMC2's.
#include "harness.h"
#include "tmc2_logs.h"
#include "vpcc/atlas.h"
#include "vpcc/parser.h"
#include "vpcc/postprocess.h"
#include "vpcc/reconstruct.h"

using namespace vpcc;

static const char* kStreams[] = {"synth_ai_r4", "synth_ra_r2"};
static std::string dir(const std::string& name) { return harness::sharedDir() + "/vpcc/" + name + "/" + name; }

static void checkPictures(VideoDecoder& decoder) {
  for (const std::string name : kStreams) {
    const auto seqs = parseSampleStream(harness::readFile(dir(name) + ".bin"));
    const DecodedVideo video = decodeVideo(seqs.at(0), decoder);
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

TEST(decoded_pictures_match_tmc2) { checkPictures(*makeLibavDecoder()); }

#ifdef VPCC_WITH_DE265
// The wasm module's HEVC decoder, natively: the same pictures as HM.
TEST(libde265_pictures_match_tmc2) { checkPictures(*makeDe265Decoder()); }
#endif

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

TEST(frame_md5_before_and_after_postprocessing_match_tmc2) {
  auto decoder = makeLibavDecoder();
  for (const std::string name : kStreams) {
    const auto seqs = parseSampleStream(harness::readFile(dir(name) + ".bin"));
    const DecodedVideo video = decodeVideo(seqs.at(0), *decoder);
    const auto frames = decodeAtlas(seqs.at(0));
    const auto expectedBefore = tmc2::values(dir(name) + "_dec_pcframe_log.txt", "MD5 checksum");
    const auto expectedAfter = tmc2::values(dir(name) + "_dec_rec_pcframe_log.txt", "MD5 checksum");
    CHECK_EQ(frames.size(), expectedBefore.size());
    CHECK_EQ(frames.size(), expectedAfter.size());
    auto compare = [&](const std::string& got, const std::string& want, size_t i, const char* stage) {
      if (got == want) return;
      std::fprintf(stderr, "  %s frame %zu %s post-processing: md5 %s, TMC2 %s\n", name.c_str(), i, stage, got.c_str(),
                   want.c_str());
      ++harness::failures();
    };
    for (size_t i = 0; i < frames.size() && i < expectedBefore.size() && i < expectedAfter.size(); ++i) {
      const PointCloudFrame frame = reconstructFrame(seqs[0], frames[i], video);
      CHECK_EQ(frame.colors16.size(), frame.positions.size());
      compare(frameMd5(frame), expectedBefore[i], i, "before");
      PostProcessReport report;
      const PointCloudFrame processed = postProcess(seqs[0], frames[i], frame, &report);
      CHECK(report.geometrySmoothed);  // SEI 66 (grid 8, threshold 64) in every frame of these streams
      CHECK(report.movedPoints > 0);
      CHECK_EQ(processed.size(), frame.size());
      compare(frameMd5(processed), expectedAfter[i], i, "after");
    }
  }
}

TEST_MAIN
