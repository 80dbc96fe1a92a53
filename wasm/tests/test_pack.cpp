// holoquic-pack's inputs, through the real CLI next to this test: animated glTF models sampled to
// coloured point clouds (point counts, bounding box, texture colours, motion), a round trip of
// sampled frames through the encoder and decoder, a packed glTF object, and bad input (missing,
// truncated or unsupported models; unreadable, empty or out-of-range PLY frames) refused with
// the file named and no content directory left behind.
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include "harness.h"
#include "vpcc/atlas.h"
#include "vpcc/encoder.h"
#include "vpcc/parser.h"
#include "vpcc/ply.h"
#include "vpcc/quality.h"
#include "vpcc/reconstruct.h"

namespace fs = std::filesystem;
using namespace vpcc;

namespace {

std::string packTool() {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0) return "holoquic-pack";
  self[n] = 0;
  return (fs::path(self).parent_path() / "holoquic-pack").string();
}

struct Run {
  int status = -1;
  std::string output;
};

Run run(const std::string& arguments) {
  Run r;
  FILE* pipe = popen((packTool() + " " + arguments + " 2>&1").c_str(), "r");
  if (!pipe) return r;
  char buffer[4096];
  size_t got;
  while ((got = fread(buffer, 1, sizeof buffer, pipe)) > 0) r.output.append(buffer, got);
  r.status = pclose(pipe);
  return r;
}

fs::path scratch(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("holoquic-test-pack-" + std::to_string(getpid())) / name;
  fs::remove_all(dir);
  fs::create_directories(dir.parent_path());
  return dir;
}

std::string model(const std::string& name) { return harness::sharedDir() + "/data/models/" + name; }

bool haveModels() {
  if (fs::exists(model("CesiumMan.glb")) && fs::exists(model("Fox.glb"))) return true;
  harness::skip("no shared models");
  return false;
}

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

/// A GLB of one triangle; `extraPrimitive` / `extraRoot` are spliced into the JSON to add
/// features (morph targets, extensions).
void writeTriangleGlb(const fs::path& path, const std::string& extraPrimitive = "", const std::string& extraRoot = "") {
  const float positions[9] = {0, 0, 0, 1, 0, 0, 0, 1, 0};
  std::string json = R"({"asset":{"version":"2.0"},"buffers":[{"byteLength":36}],)"
                     R"("bufferViews":[{"buffer":0,"byteLength":36}],)"
                     R"("accessors":[{"bufferView":0,"componentType":5126,"count":3,"type":"VEC3"}],)"
                     R"("meshes":[{"primitives":[{"attributes":{"POSITION":0})" + extraPrimitive + R"(}]}],)"
                     R"("nodes":[{"mesh":0}],"scenes":[{"nodes":[0]}])" + extraRoot + "}";
  while (json.size() % 4) json += ' ';
  auto le32 = [](std::string& out, uint32_t v) {
    for (int i = 0; i < 4; ++i) out += char((v >> (8 * i)) & 0xff);
  };
  std::string glb = "glTF";
  le32(glb, 2);
  le32(glb, uint32_t(12 + 8 + json.size() + 8 + 36));
  le32(glb, uint32_t(json.size()));
  glb += "JSON" + json;
  le32(glb, 36);
  glb += std::string("BIN\0", 4);
  glb.append(reinterpret_cast<const char*>(positions), 36);
  std::ofstream(path, std::ios::binary) << glb;
}

/// Runs the packager on bad input and checks the error names `file` and `reason` and that no
/// content directory (or its staging directory) is left.
void expectRefused(const std::string& arguments, const fs::path& out, const std::string& file, const std::string& reason) {
  const Run r = run(arguments);
  std::printf("  refused: %s", r.output.c_str());
  CHECK(r.status != 0);
  CHECK(contains(r.output, file));
  CHECK(contains(r.output, reason));
  CHECK(!fs::exists(out));
  CHECK(!fs::exists(out.string() + ".partial"));
}

}  // namespace

TEST(animated_models_sample_to_textured_moving_point_clouds) {
  if (!haveModels()) return;
  const fs::path out = scratch("sampled");
  const Run r = run("sample --out " + out.string() + " --bits 9 --seconds 1 --object man=" + model("CesiumMan.glb") +
                    " --object fox=" + model("Fox.glb"));
  CHECK_EQ(r.status, 0);
  for (const std::string id : {"man", "fox"}) {
    size_t files = 0;
    for (const auto& entry : fs::directory_iterator(out / id)) files += entry.path().extension() == ".ply";
    CHECK_EQ(files, size_t(30));
    const PlyCloud a = readPly((out / id / "frame-00000.ply").string()), b = readPly((out / id / "frame-00015.ply").string());
    // Point count: a 9-bit shell of a figure spanning the grid has ~10⁵ voxels.
    std::printf("  %s: %zu and %zu points\n", id.c_str(), a.size(), b.size());
    CHECK(a.size() > 40000 && a.size() < 600000);
    // Bounding box: inside the grid, the longest side spanning most of it.
    double lo[3] = {1e9, 1e9, 1e9}, hi[3] = {-1e9, -1e9, -1e9};
    for (size_t i = 0; i < a.size(); ++i)
      for (int c = 0; c < 3; ++c) lo[c] = std::min(lo[c], a.positions[i * 3 + c]), hi[c] = std::max(hi[c], a.positions[i * 3 + c]);
    CHECK(lo[0] >= 0 && lo[1] >= 0 && lo[2] >= 0 && hi[0] < 512 && hi[1] < 512 && hi[2] < 512);
    CHECK(std::max({hi[0] - lo[0], hi[1] - lo[1], hi[2] - lo[2]}) > 300);
    // Texture colours: not one flat colour.
    double mean = 0, var = 0;
    for (size_t i = 0; i < a.size(); ++i) mean += a.colors[i * 3];
    mean /= double(a.size());
    for (size_t i = 0; i < a.size(); ++i) var += (a.colors[i * 3] - mean) * (a.colors[i * 3] - mean);
    CHECK(std::sqrt(var / double(a.size())) > 20);
    // Motion: half a second later a good share of the voxels is somewhere else.
    std::set<std::array<int, 3>> first;
    for (size_t i = 0; i < a.size(); ++i) first.insert({int(a.positions[i * 3]), int(a.positions[i * 3 + 1]), int(a.positions[i * 3 + 2])});
    size_t moved = 0;
    for (size_t i = 0; i < b.size(); ++i)
      moved += !first.count({int(b.positions[i * 3]), int(b.positions[i * 3 + 1]), int(b.positions[i * 3 + 2])});
    std::printf("  %s: %.0f %% of the voxels of frame 15 are not in frame 0\n", id.c_str(), 100.0 * double(moved) / double(b.size()));
    CHECK(double(moved) > 0.1 * double(b.size()));
  }
  fs::remove_all(out.parent_path());
}

TEST(sampled_frames_round_trip_through_the_encoder) {
  if (!haveModels()) return;
  const fs::path out = scratch("roundtrip");
  CHECK_EQ(run("sample --out " + out.string() + " --bits 9 --seconds 1 --object man=" + model("CesiumMan.glb")).status, 0);
  std::vector<InputFrame> frames;
  for (int f = 0; f < 3; ++f) frames.push_back(voxelize(readPly((out / "man" / ("frame-0000" + std::to_string(f) + ".ply")).string()), 9, "man"));
  EncoderConfig cfg;
  cfg.geometryBits = 9;
  auto encoder = makeLibavEncoder();
  const std::vector<uint8_t> bytes = encodeSequence(frames, cfg, *encoder);
  const auto seqs = parseSampleStream(bytes);
  auto decoder = makeLibavDecoder();
  const DecodedVideo video = decodeVideo(seqs.at(0), *decoder);
  const auto atlas = decodeAtlas(seqs[0]);
  CHECK_EQ(atlas.size(), frames.size());
  for (size_t f = 0; f < atlas.size(); ++f) {
    const PointCloudFrame decoded = reconstructFrame(seqs[0], atlas[f], video);
    const std::vector<int32_t> src(frames[f].positions.begin(), frames[f].positions.end());
    const std::vector<int32_t> dec(decoded.positions.begin(), decoded.positions.end());
    const Quality q = measureQuality({src.data(), frames[f].colors.data(), frames[f].size()}, {dec.data(), decoded.colors.data(), decoded.size()}, 9);
    std::printf("  frame %zu: %zu → %zu points, D1 %.1f dB, Y %.1f dB\n", f, frames[f].size(), decoded.size(), q.d1Psnr, q.yPsnr);
    CHECK(double(decoded.size()) > 0.8 * double(frames[f].size()));
    CHECK(q.d1Psnr > 55);
    CHECK(q.yPsnr > 28);
  }
  fs::remove_all(out.parent_path());
}

TEST(a_gltf_object_packs_into_a_complete_content_directory) {
  if (!haveModels()) return;
  const fs::path out = scratch("content");
  const Run r = run("gltf --out " + out.string() + " --bits 8 --seconds 1 --threads 2 --object fox=" + model("Fox.glb"));
  CHECK_EQ(r.status, 0);
  CHECK(fs::exists(out / "manifest.mpd") && fs::exists(out / "report.json"));
  for (int q = 0; q < 5; ++q) CHECK(fs::file_size(out / "fox" / std::to_string(q) / "seg-00000.v3c") > 1000);
  std::ifstream mpd(out / "manifest.mpd");
  const std::string text((std::istreambuf_iterator<char>(mpd)), {});
  CHECK(contains(text, "fox"));
  fs::remove_all(out.parent_path());
}

TEST(bad_models_are_refused_naming_the_file_and_feature) {
  const fs::path dir = scratch("bad-models");
  fs::create_directories(dir);
  const fs::path out = dir / "content";
  expectRefused("gltf --out " + out.string() + " --object x=" + (dir / "missing.glb").string(), out, "missing.glb", "cannot read");

  const fs::path morph = dir / "morph.glb", draco = dir / "draco.glb", ktx = dir / "ktx2.glb", junk = dir / "junk.glb";
  writeTriangleGlb(morph, R"(,"targets":[{"POSITION":0}])");
  // A Draco primitive whose stream is not Draco (the triangle's raw floats); KTX2 textures required.
  writeTriangleGlb(draco, R"(,"extensions":{"KHR_draco_mesh_compression":{"bufferView":0,"attributes":{"POSITION":0}}})",
                   R"(,"extensionsUsed":["KHR_draco_mesh_compression"],"extensionsRequired":["KHR_draco_mesh_compression"])");
  writeTriangleGlb(ktx, "", R"(,"extensionsUsed":["KHR_texture_basisu"],"extensionsRequired":["KHR_texture_basisu"])");
  std::ofstream(junk, std::ios::binary) << "glTF\x02\0\0\0{{{{ not a model";
  expectRefused("gltf --out " + out.string() + " --object x=" + morph.string(), out, "morph.glb", "morph targets");
  expectRefused("gltf --out " + out.string() + " --object x=" + draco.string(), out, "draco.glb", "KHR_draco_mesh_compression");
  expectRefused("gltf --out " + out.string() + " --object x=" + ktx.string(), out, "ktx2.glb", "KTX2");
  expectRefused("gltf --out " + out.string() + " --object x=" + junk.string(), out, "junk.glb", "GLB");
  if (haveModels()) {  // a real model cut short
    const std::vector<uint8_t> whole = harness::readFile(model("CesiumMan.glb"));
    const fs::path cut = dir / "cut.glb";
    std::ofstream(cut, std::ios::binary).write(reinterpret_cast<const char*>(whole.data()), 5000);
    expectRefused("gltf --out " + out.string() + " --object x=" + cut.string(), out, "cut.glb", "truncated");
  }
  // The triangle itself is fine: it samples to points.
  const fs::path fine = dir / "fine.glb";
  writeTriangleGlb(fine);
  CHECK_EQ(run("sample --out " + (dir / "ok").string() + " --bits 6 --seconds 1 --object x=" + fine.string()).status, 0);
  CHECK(fs::exists(dir / "ok" / "x" / "frame-00029.ply"));
  fs::remove_all(dir.parent_path());
}

TEST(bad_point_cloud_frames_are_refused_naming_the_file) {
  const fs::path dir = scratch("bad-ply");
  const fs::path out = dir / "content";
  auto writeFrames = [&](const std::string& name, const std::string& badFrame) {
    fs::create_directories(dir / name);
    for (int f = 0; f < 3; ++f) {
      std::ofstream ply(dir / name / ("f" + std::to_string(f) + ".ply"));
      if (f == 1) {
        ply << badFrame;
        continue;
      }
      ply << "ply\nformat ascii 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
             "property uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n"
             "1 1 1 255 0 0\n2 1 1 0 255 0\n1 2 1 0 0 255\n2 2 1 9 9 9\n";
    }
  };
  writeFrames("garbage", "this is not a point cloud\n");
  writeFrames("empty", "ply\nformat ascii 1.0\nelement vertex 0\nproperty float x\nproperty float y\nproperty float z\nend_header\n");
  writeFrames("outside", "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nproperty float y\nproperty float z\nend_header\n5000 1 1\n");
  writeFrames("truncated", "ply\nformat binary_little_endian 1.0\nelement vertex 1000\nproperty float x\nproperty float y\nproperty float z\nend_header\n\x01\x02");
  expectRefused("ply --out " + out.string() + " --object x=" + (dir / "garbage").string(), out, "f1.ply", "not a PLY");
  expectRefused("ply --out " + out.string() + " --object x=" + (dir / "empty").string(), out, "f1.ply", "no points");
  expectRefused("ply --out " + out.string() + " --object x=" + (dir / "outside").string(), out, "f1.ply", "5000");
  const Run r = run("ply --out " + out.string() + " --object x=" + (dir / "truncated").string());
  std::printf("  refused: %s", r.output.c_str());
  CHECK(r.status != 0 && contains(r.output, "f1.ply") && !fs::exists(out));
  fs::remove_all(dir.parent_path());
}

TEST_MAIN
