// Decoder limits under hostile input: a stream declaring an atlas beyond its level (or beyond
// this decoder's 4096×4096 cap) is refused while parsing, before anything atlas-sized is
// allocated; a decoding session never holds more decoded pictures than its memory budget.
#include <cstdlib>
#include <new>

#include "harness.h"
#include "vpcc/api_session.h"
#include "vpcc/limits.h"
#include "vpcc/parser.h"
#include "vpcc/writer.h"

using namespace vpcc;

// The largest single allocation while `tracking` is on: every operator new of this program
// goes through here (array and nothrow forms call it too).
static bool tracking = false;
static size_t largestAllocation = 0;

void* operator new(size_t size) {
  if (tracking && size > largestAllocation) largestAllocation = size;
  if (void* p = std::malloc(size ? size : 1)) return p;
  throw std::bad_alloc();
}
void operator delete(void* p) noexcept { std::free(p); }
void operator delete(void* p, size_t) noexcept { std::free(p); }

/// A committed TMC2-made stream of our content (320×224 atlas, level 1.0, HEVC, 2 frames).
static std::vector<uint8_t> smallStream() {
  return harness::readFile(std::string(VPCC_CONFORMANCE_DIR) + "/ours_hevc_lod2_inter/ours_hevc_lod2_inter.bin");
}

/// The small stream rewritten to declare `width` × `height` at level `levelIdc` (VPS and ASPS
/// agree, as a well-formed stream's do; patches and videos stay as they were).
static std::vector<uint8_t> declaring(uint32_t width, uint32_t height, uint8_t levelIdc) {
  std::vector<CodedSequence> seqs = parseSampleStream(smallStream());
  for (CodedSequence& seq : seqs) {
    seq.vps.ptl.level = levelIdc;
    for (VpsAtlas& atlas : seq.vps.atlases) {
      atlas.frameWidth = width;
      atlas.frameHeight = height;
    }
    for (Asps& asps : seq.asps) {
      asps.frameWidth = width;
      asps.frameHeight = height;
    }
  }
  return writeSampleStream(seqs);
}

static bool refusedWith(const std::vector<uint8_t>& bytes, const char* words) {
  try {
    parseSampleStream(bytes);
  } catch (const ParseError& e) {
    if (std::string(e.what()).find(words) != std::string::npos) return true;
    std::fprintf(stderr, "  refused, but for: %s\n", e.what());
  }
  return false;
}

TEST(oversized_atlas_is_refused_before_allocating) {
  // 16384² (the syntax's own bound) at level 1.0: 512 MiB per 16-bit plane if it were decoded.
  const std::vector<uint8_t> bytes = declaring(16384, 16384, 30);
  DecodeSession session;
  largestAllocation = 0;
  tracking = true;
  bool refused = false;
  try {
    session.load(bytes.data(), bytes.size());
  } catch (const ParseError& e) {
    refused = std::string(e.what()).find("exceeds MaxAtlasSize") != std::string::npos;
  }
  tracking = false;
  CHECK(refused);
  CHECK_EQ(session.frameCount(), 0u);
  // Nothing sized by the atlas was allocated on the way (the stream itself is ~30 kB).
  CHECK(largestAllocation < (size_t(1) << 20));
}

TEST(atlas_size_follows_the_declared_level) {
  // 2048×2048 = 4 194 304 samples: above level 1.0's MaxAtlasSize, within level 2.0's.
  CHECK(refusedWith(declaring(2048, 2048, 30), "MaxAtlasSize 2228224 of the declared level 1.0"));
  CHECK(refusedWith(declaring(2048, 2048, 45), "of the declared level 1.5"));
  CHECK_EQ(parseSampleStream(declaring(2048, 2048, 60)).size(), size_t(1));
  CHECK_EQ(parseSampleStream(declaring(2048, 1088, 30)).size(), size_t(1));  // exactly level 1.0's size
  // Level 3.0 allows 8192×4352, this decoder not: its cap is 4096×4096.
  CHECK(refusedWith(declaring(8192, 4096, 90), "this decoder's cap"));
  CHECK_EQ(parseSampleStream(declaring(4096, 4096, 90)).size(), size_t(1));
  // A level idc that names no level: the decoder's cap alone.
  CHECK(refusedWith(declaring(4097, 4096, 0), "this decoder's cap"));
  CHECK_EQ(parseSampleStream(declaring(4096, 4096, 0)).size(), size_t(1));
}

TEST(atlas_size_follows_the_level_the_manifest_declares) {
  // The stream says level 2.0 (2048² fits), its manifest 1.0: refused, before allocating.
  const std::vector<uint8_t> bytes = declaring(2048, 2048, 60);
  DecodeSession session;
  session.setManifestLevel(30);
  largestAllocation = 0;
  tracking = true;
  std::string message;
  try {
    session.load(bytes.data(), bytes.size());
  } catch (const ParseError& e) {
    message = e.what();
  }
  tracking = false;
  CHECK(message.find("MaxAtlasSize 2228224 of level 1.0, which the manifest declares") != std::string::npos);
  CHECK_EQ(session.frameCount(), 0u);
  CHECK(largestAllocation < (size_t(1) << 20));
  // The manifest's level 2.0 holds it; without a manifest level the stream's own decides.
  session.setManifestLevel(60);
  session.load(bytes.data(), bytes.size());
  CHECK(session.frameCount() > 0u);
  session.setManifestLevel(0);
  session.load(bytes.data(), bytes.size());
  CHECK(session.frameCount() > 0u);
  // A manifest level above the stream's own does not lift the stream's.
  const std::vector<uint8_t> claimsLevel1 = declaring(2048, 2048, 30);
  CHECK_THROWS(parseSampleStream(claimsLevel1.data(), claimsLevel1.size(), 90), ParseError);
}

TEST(encoder_declares_the_lowest_level_that_holds_its_atlas) {
  CHECK_EQ(int(lowestLevelFor(320 * 224)), 30);
  CHECK_EQ(int(lowestLevelFor(2228224)), 30);
  CHECK_EQ(int(lowestLevelFor(2228225)), 60);
  CHECK_EQ(int(lowestLevelFor(4096 * 2176)), 60);
  CHECK_EQ(int(lowestLevelFor(4096 * 4096)), 90);
}

/// A mid-grey 8-bit 4:2:0 picture of `width` × `height` for putPicture.
struct GreyPicture {
  std::vector<uint8_t> luma, chroma;
  PictureInput in;
  GreyPicture(uint32_t width, uint32_t height)
      : luma(size_t(width) * height, 128), chroma(size_t((width + 1) / 2) * ((height + 1) / 2), 128) {
    in.width = width;
    in.height = height;
    in.planes[0] = luma.data();
    in.planes[1] = in.planes[2] = chroma.data();
    in.strides[0] = width;
    in.strides[1] = in.strides[2] = (width + 1) / 2;
  }
};

TEST(session_holds_no_more_pictures_than_its_budget) {
  const std::vector<uint8_t> bytes = smallStream();
  DecodeSession session;
  session.load(bytes.data(), bytes.size());
  // The geometry stream: one picture is 320×224 luma + two 160×112 chroma planes, 16-bit.
  uint32_t geometry = 0;
  while (session.streams().at(geometry).component != Component::Geometry) ++geometry;
  const VideoStreamInfo& info = session.streams()[geometry];
  CHECK(info.pictureCount >= 2);
  const size_t pictureBytes = (320 * 224 + 2 * 160 * 112) * 2;
  session.setPictureBudget(pictureBytes * 3 / 2);
  GreyPicture grey(320, 224);
  session.putPicture(geometry, 0, grey.in);
  CHECK_EQ(session.heldPictureBytes(), pictureBytes);
  session.putPicture(geometry, 0, grey.in);  // given again: replaces itself, no growth
  CHECK_EQ(session.heldPictureBytes(), pictureBytes);
  largestAllocation = 0;
  tracking = true;
  CHECK_THROWS(session.putPicture(geometry, 1, grey.in), ParseError);
  tracking = false;
  CHECK(largestAllocation < pictureBytes / 4);  // refused before the samples were allocated
  CHECK_EQ(session.heldPictureBytes(), pictureBytes);
  // Releasing the frame the first picture belongs to makes room again.
  session.releaseFrame(0);
  CHECK_EQ(session.heldPictureBytes(), size_t(0));
  session.putPicture(geometry, info.picturesPerFrame, grey.in);
  CHECK_EQ(session.heldPictureBytes(), pictureBytes);
}

TEST_MAIN
