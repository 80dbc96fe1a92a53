// Animated glTF 2.0 models (.glb, or .gltf with its files): meshes with base-colour textures,
// the node hierarchy, skins and keyframe animations (translation, rotation, scale; linear, step
// and cubic-spline interpolation), posed at any time in world space (gltf_pose.cpp).
//
// Loading (gltf.cpp) goes through tinygltf and decodes what web exporters produce: Draco and
// meshopt compression, quantized attributes, sparse accessors, KHR_texture_transform. What the
// packager cannot honour is refused with an error naming the file and the feature: morph
// targets, points and lines, textures without a PNG/JPEG source (KTX2/Basis, WebP, AVIF), any
// other extension the file marks as required.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "image.h"

namespace holoquic {

using Vec3 = std::array<double, 3>;
using Quat = std::array<double, 4>;  // x, y, z, w
using Mat4 = std::array<double, 16>;  // column-major, as glTF stores matrices

constexpr Mat4 kIdentityMatrix = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};

struct GltfPrimitive {
  std::vector<std::array<float, 3>> positions;
  std::vector<std::array<float, 2>> uvs;      // of the base-colour texture's set; empty without texture
  std::vector<std::array<float, 4>> colours;  // COLOR_0 (linear RGBA); empty when absent
  std::vector<std::array<uint16_t, 4>> joints;
  std::vector<std::array<float, 4>> weights;  // empty when not skinned
  std::vector<uint32_t> triangles;            // 3 vertex indices per triangle
  int material = -1;
};

struct GltfMaterial {
  std::array<float, 4> baseColorFactor{1, 1, 1, 1};
  int image = -1;                 // base-colour texture image, or −1
  int wrapS = 10497, wrapT = 10497;  // GL wrap modes (REPEAT, CLAMP_TO_EDGE 33071, MIRRORED_REPEAT 33648)
};

struct GltfNode {
  std::vector<int> children;
  Vec3 translation{0, 0, 0}, scale{1, 1, 1};
  Quat rotation{0, 0, 0, 1};
  bool hasMatrix = false;
  Mat4 matrix{};
  int mesh = -1, skin = -1;
};

struct GltfSkin {
  std::vector<int> joints;
  std::vector<Mat4> inverseBindMatrices;
};

struct GltfChannel {
  enum class Path { Translation, Rotation, Scale } path = Path::Translation;
  enum class Interpolation { Linear, Step, CubicSpline } interpolation = Interpolation::Linear;
  int node = 0;
  std::vector<float> times;
  std::vector<float> values;  // 3 or 4 per key (×3 for cubic spline: in-tangent, value, out-tangent)
};

struct GltfAnimation {
  std::string name;
  std::vector<GltfChannel> channels;
  double start = 0, end = 0;  // seconds
};

struct GltfModel {
  std::string path;
  std::vector<GltfNode> nodes;
  std::vector<std::vector<GltfPrimitive>> meshes;
  std::vector<GltfSkin> skins;
  std::vector<GltfMaterial> materials;
  std::vector<RgbaImage> images;
  std::vector<GltfAnimation> animations;
  std::vector<int> sceneRoots;
};

/// Loads a model; throws std::runtime_error naming the file and what is wrong or unsupported.
GltfModel loadGltf(const std::string& path);

/// One mesh instance of the posed model: world-space vertex positions of a primitive.
struct PosedPrimitive {
  const GltfPrimitive* primitive = nullptr;
  std::vector<std::array<float, 3>> world;
};

/// The model's meshes in world space at `seconds` into animation `animation` (−1: rest pose).
/// Animations loop over [start, end].
std::vector<PosedPrimitive> poseModel(const GltfModel& model, int animation, double seconds);

}  // namespace holoquic
