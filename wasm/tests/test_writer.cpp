// The V3C writer against the parser: TMC2's conformance streams parsed, written back and parsed
// again give the same syntax and decode to the same points; a P tile with INTER, SKIP and INTRA
// patches round-trips field by field; bit writer primitives round-trip.
#include <random>

#include "harness.h"
#include "tmc2_logs.h"
#include "vpcc/atlas.h"
#include "vpcc/bit_reader.h"
#include "vpcc/bit_writer.h"
#include "vpcc/parser.h"
#include "vpcc/reconstruct.h"
#include "vpcc/writer.h"

using namespace vpcc;


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
  for (const std::string& base : tmc2::cases(harness::sharedDir())) {
    const auto original = parseSampleStream(harness::readFile(base + ".bin"));
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

static PatchDataUnit intraPatch(uint32_t x, uint32_t y, uint64_t u, uint64_t v, uint64_t d, uint32_t projection) {
  PatchDataUnit p;
  p.pos2dX = x;
  p.pos2dY = y;
  p.size2dXMinus1 = 1;
  p.size2dYMinus1 = 0;
  p.offset3dU = u;
  p.offset3dV = v;
  p.offset3dD = d;
  p.projectionId = projection;
  p.orientation = 1;
  return p;
}

// An I tile and a P tile predicted from it (ASPS reference list: the previous frame), as our
// encoder writes them: INTER (deltas of every field), SKIP and INTRA patches.
TEST(p_tiles_round_trip_field_by_field) {
  CodedSequence seq;
  VpsAtlas atlas;
  atlas.frameWidth = atlas.frameHeight = 64;
  atlas.attributes.push_back(AttributeInformation{});
  seq.vps.atlases.push_back(atlas);
  Asps asps;
  asps.frameWidth = asps.frameHeight = 64;
  asps.log2MaxAfocLsbMinus4 = 0;
  asps.maxDecAtlasFrameBufferingMinus1 = 1;
  RefListEntry previousFrame;
  previousFrame.absDeltaAfoc = 1;
  asps.refLists.push_back({previousFrame});
  seq.asps.push_back(asps);
  seq.afps.push_back(Afps{});
  AtlasTileLayer first;
  first.header.nalType = kNalIdrNLp;
  first.header.refListFromAsps = true;
  first.header.refList = asps.refLists[0];
  first.patches = {intraPatch(0, 0, 10, 20, 30, 0), intraPatch(0, 1, 11, 21, 31, 4), intraPatch(2, 2, 12, 22, 32, 2)};
  AtlasTileLayer second = first;
  second.header.nalType = kNalTrailR;
  second.header.type = TileType::P;
  second.header.afocLsb = 1;
  PatchDataUnit inter;
  inter.mode = PatchMode::Inter;
  inter.deltaPos2dX = 1, inter.deltaPos2dY = 1, inter.deltaSize2dX = 1, inter.deltaSize2dY = 0;
  inter.deltaOffset3dU = -3, inter.deltaOffset3dV = 4, inter.deltaOffset3dD = -5;
  PatchDataUnit skip;
  skip.mode = PatchMode::Skip;
  second.patches = {inter, skip, intraPatch(3, 0, 13, 23, 33, 5)};
  seq.tileLayers = {first, second};

  const CodedSequence back = parseSampleStream(writeSampleStream({seq})).at(0);
  CHECK_EQ(back.asps.at(0).refLists.size(), size_t(1));
  CHECK_EQ(back.asps[0].refLists.at(0).size(), size_t(1));
  CHECK_EQ(back.asps[0].refLists[0].at(0).absDeltaAfoc, 1u);
  CHECK(back.asps[0].refLists[0][0].signPositive && back.asps[0].refLists[0][0].shortTerm);
  CHECK_EQ(back.asps[0].maxDecAtlasFrameBufferingMinus1, 1u);
  CHECK_EQ(back.tileLayers.size(), size_t(2));
  const AtlasTileLayer& p = back.tileLayers.at(1);
  CHECK(p.header.type == TileType::P && p.header.refListFromAsps && p.header.refList.size() == 1);
  CHECK_EQ(p.header.afocLsb, 1u);
  CHECK_EQ(p.patches.size(), size_t(3));
  const PatchDataUnit& i = p.patches.at(0);
  CHECK(i.mode == PatchMode::Inter && i.refIndex == 0 && i.refPatchIndex == 0);
  CHECK(i.deltaPos2dX == 1 && i.deltaPos2dY == 1 && i.deltaSize2dX == 1 && i.deltaSize2dY == 0);
  CHECK(i.deltaOffset3dU == -3 && i.deltaOffset3dV == 4 && i.deltaOffset3dD == -5);
  CHECK(p.patches.at(1).mode == PatchMode::Skip);
  CHECK(p.patches.at(2).mode == PatchMode::Intra && p.patches[2].offset3dD == 33 && p.patches[2].projectionId == 5);

  // Decoded: the INTER patch is patch 0 moved by its deltas, the SKIP patch a copy of patch 1.
  const auto frames = decodeAtlas(back);
  CHECK_EQ(frames.size(), size_t(2));
  const auto& before = frames.at(0).tiles.at(0).patches;
  const auto& after = frames.at(1).tiles.at(0).patches;
  CHECK_EQ(after.size(), size_t(3));
  CHECK(after.at(0).u0 == 1 && after[0].v0 == 1 && after[0].sizeU0 == 3 && after[0].sizeV0 == 1);
  CHECK(after[0].u1 == 7 && after[0].v1 == 24 && after[0].d1 == 25 && after[0].projectionId == 0 && after[0].orientation == 1);
  CHECK(after.at(1).u0 == before.at(1).u0 && after[1].v0 == before[1].v0 && after[1].u1 == before[1].u1 &&
        after[1].d1 == before[1].d1 && after[1].projectionId == before[1].projectionId);
  CHECK(after.at(2).u1 == 13 && after[2].projectionId == 5);
}

TEST_MAIN
