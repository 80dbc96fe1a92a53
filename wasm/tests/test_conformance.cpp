// Conformance against TMC2 release-v24.0: decoded video pictures bit-exact (MD5 per plane),
// reconstructed point counts per frame (projected, raw, EOM) equal TMC2's, and the frame MD5 of
// every reconstructed frame before and after post-processing equal to TMC2's. Every case is a
// folder NAME/ holding NAME.bin and TMC2's decoder logs, under ../shared/vpcc/ or
// wasm/tests/conformance/ (streams TMC2 made from our own content): drop one in to add a case.
#include <filesystem>

#include "harness.h"
#include "tmc2_logs.h"
#include "vpcc/atlas.h"
#include "vpcc/parser.h"
#include "vpcc/postprocess.h"
#include "vpcc/reconstruct.h"

using namespace vpcc;

static std::vector<std::string> cases() { return tmc2::cases(harness::sharedDir()); }
static std::string nameOf(const std::string& base) { return std::filesystem::path(base).filename().string(); }

static void checkPictures(VideoDecoder& decoder) {
  for (const std::string& base : cases()) {
    const std::string name = nameOf(base);
    const auto seqs = parseSampleStream(harness::readFile(base + ".bin"));
    const DecodedVideo video = decodeVideo(seqs.at(0), decoder);
    const auto expected = tmc2::pictures(base + "_dec_picture_log.txt");
    auto compare = [&](const std::vector<Picture>& pictures, const std::string& component, bool sixteenBit) {
      const auto& want = expected.at(component);
      CHECK_EQ(pictures.size(), want.size());
      for (size_t i = 0; i < pictures.size() && i < want.size(); ++i)
        for (int p = 0; p < 3; ++p) {
          // TMC2 logs a 4:4:4 (GBR-coded) picture as R, G, B: coded planes 2, 0, 1.
          const int coded = pictures[i].chroma444 ? (p + 2) % 3 : p;
          if (pictures[i].planeMd5(coded, sixteenBit) != want[i][p]) {
            std::fprintf(stderr, "  %s %s picture %zu plane %d differs\n", name.c_str(), component.c_str(), i, p);
            ++harness::failures();
          }
        }
    };
    compare(video.occupancy, "Occupancy", false);
    compare(video.geometry[0], "Geometry", true);
    compare(video.attribute[0], "Attribute", true);
    if (expected.count("Geometry aux")) compare(video.auxiliaryGeometry, "Geometry aux", true);
    if (expected.count("Attribute aux")) compare(video.auxiliaryAttribute, "Attribute aux", true);
  }
}

TEST(decoded_pictures_match_tmc2) { checkPictures(*makeLibavDecoder()); }

#ifdef VPCC_WITH_DE265
// The wasm module's HEVC decoder, natively: the same pictures as HM.
TEST(libde265_pictures_match_tmc2) { checkPictures(*makeDe265Decoder()); }
#endif

TEST(reconstructed_point_counts_match_tmc2) {
  auto decoder = makeLibavDecoder();
  for (const std::string& base : cases()) {
    const auto seqs = parseSampleStream(harness::readFile(base + ".bin"));
    const DecodedVideo video = decodeVideo(seqs.at(0), *decoder);
    const auto frames = decodeAtlas(seqs.at(0));
    const std::string log = base + "_dec_pcframe_log.txt";
    const auto projected = tmc2::values(log, "NumProjPoints"), raw = tmc2::values(log, "NumRawPoints"),
               eom = tmc2::values(log, "NumEomPoints");
    CHECK_EQ(frames.size(), projected.size());
    for (size_t i = 0; i < frames.size() && i < projected.size() && i < raw.size() && i < eom.size(); ++i) {
      const PointCloudFrame frame = reconstructFrame(seqs[0], frames[i], video);
      CHECK_EQ(size_t(frame.projectedPoints), size_t(std::stoul(projected[i])));
      CHECK_EQ(size_t(frame.rawPoints), size_t(std::stoul(raw[i])));
      CHECK_EQ(size_t(frame.eomPoints), size_t(std::stoul(eom[i])));
      CHECK_EQ(frame.size(), size_t(frame.projectedPoints) + frame.rawPoints + frame.eomPoints);
    }
  }
}

TEST(frame_md5_before_and_after_postprocessing_match_tmc2) {
  auto decoder = makeLibavDecoder();
  for (const std::string& base : cases()) {
    const std::string name = nameOf(base);
    const auto seqs = parseSampleStream(harness::readFile(base + ".bin"));
    const DecodedVideo video = decodeVideo(seqs.at(0), *decoder);
    const auto frames = decodeAtlas(seqs.at(0));
    const auto expectedBefore = tmc2::values(base + "_dec_pcframe_log.txt", "MD5 checksum");
    const auto expectedAfter = tmc2::values(base + "_dec_rec_pcframe_log.txt", "MD5 checksum");
    GridSmoothingParams smoothing;
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
      // A frame whose SEI asks for grid smoothing gets it (and, at these sizes, moves points).
      CHECK_EQ(report.geometrySmoothed, gridSmoothingFor(seqs[0], frames[i], smoothing));
      if (report.geometrySmoothed) CHECK(report.movedPoints > 0);
      CHECK_EQ(processed.size(), frame.size());
      compare(frameMd5(processed), expectedAfter[i], i, "after");
    }
  }
}

TEST_MAIN
