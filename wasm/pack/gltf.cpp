// glTF 2.0 models → GltfModel: tinygltf's model of the file (gltf_document.h) converted into the
// parts the surface sampler and the poser use — primitives with their base-colour UVs (after
// KHR_texture_transform), materials with decoded textures, nodes, skins and animations — with
// every index checked and every unsupported feature refused by name.
#include "gltf.h"

#include <cmath>
#include <stdexcept>

#include "gltf_attributes.h"
#include "gltf_document.h"

namespace holoquic {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

/// How a material's base-colour texture reads texture coordinates: which set, and the affine
/// KHR_texture_transform (uv' = offset + R(−rotation)·(scale ⊙ uv), as the extension's matrix
/// translation · rotation · scale), row-major 2 × 3.
struct TextureCoordinates {
  int set = 0;
  bool transformed = false;
  std::array<double, 6> affine{1, 0, 0, 0, 1, 0};
};

double numberAt(const tinygltf::Value& array, int i, double fallback) {
  return array.IsArray() && int(array.ArrayLen()) > i && array.Get(i).IsNumber() ? array.Get(i).GetNumberAsDouble() : fallback;
}

TextureCoordinates coordinatesOf(const tinygltf::TextureInfo& info, const std::string& where) {
  TextureCoordinates t;
  t.set = info.texCoord;
  const auto ext = info.extensions.find("KHR_texture_transform");
  if (ext == info.extensions.end()) return t;
  const tinygltf::Value& v = ext->second;
  const tinygltf::Value none;
  const tinygltf::Value& offset = v.Has("offset") ? v.Get("offset") : none;
  const tinygltf::Value& scale = v.Has("scale") ? v.Get("scale") : none;
  const double rotation = v.Has("rotation") && v.Get("rotation").IsNumber() ? v.Get("rotation").GetNumberAsDouble() : 0;
  const double ox = numberAt(offset, 0, 0), oy = numberAt(offset, 1, 0), sx = numberAt(scale, 0, 1), sy = numberAt(scale, 1, 1);
  if (!std::isfinite(ox + oy + sx + sy + rotation)) fail(where + ": KHR_texture_transform values are not finite");
  const double c = std::cos(rotation), s = std::sin(rotation);
  t.transformed = true;
  t.affine = {c * sx, s * sy, ox, -s * sx, c * sy, oy};
  if (v.Has("texCoord") && v.Get("texCoord").IsNumber()) t.set = v.Get("texCoord").GetNumberAsInt();  // overrides textureInfo's
  return t;
}

GltfPrimitive loadPrimitive(const tinygltf::Model& model, const tinygltf::Primitive& p, const std::vector<GltfMaterial>& materials,
                            const std::vector<TextureCoordinates>& coordinates, const std::string& where) {
  if (!p.targets.empty()) fail(where + ": morph targets are not supported");
  const PrimitiveData data(model, p, where);
  const int mode = data.mode();
  if (mode < TINYGLTF_MODE_TRIANGLES || mode > TINYGLTF_MODE_TRIANGLE_FAN) fail(where + ": points and lines are not supported (triangles only)");
  if (!data.has("POSITION")) fail(where + ": no POSITION attribute");
  GltfPrimitive prim;
  prim.material = p.material;
  if (prim.material >= int(materials.size())) fail(where + ": material out of range");
  const AttributeValues pos = data.attribute("POSITION");
  if (pos.components != 3) fail(where + ": POSITION is not VEC3");
  const size_t n = pos.values.size() / 3;
  prim.positions.resize(n);
  for (size_t i = 0; i < n; ++i) prim.positions[i] = {float(pos.values[i * 3]), float(pos.values[i * 3 + 1]), float(pos.values[i * 3 + 2])};
  auto perVertex = [&](const std::string& name, int components) {
    AttributeValues v = data.attribute(name);
    if (v.components != components) fail(where + ": " + name + " has " + std::to_string(v.components) + " components, expected " + std::to_string(components));
    if (v.values.size() != n * size_t(components)) fail(where + ": " + name + " count differs from POSITION");
    return v.values;
  };
  if (prim.material >= 0 && materials[size_t(prim.material)].image >= 0) {
    const TextureCoordinates& tc = coordinates[size_t(prim.material)];
    const std::string set = "TEXCOORD_" + std::to_string(tc.set);
    if (!data.has(set)) fail(where + ": textured material but no " + set);
    const std::vector<double> uv = perVertex(set, 2);
    const std::array<double, 6>& m = tc.affine;
    prim.uvs.resize(n);
    for (size_t i = 0; i < n; ++i) {
      const double u = uv[i * 2], v = uv[i * 2 + 1];
      prim.uvs[i] = {float(m[0] * u + m[1] * v + m[2]), float(m[3] * u + m[4] * v + m[5])};
    }
  }
  if (data.has("COLOR_0")) {
    const AttributeValues c = data.attribute("COLOR_0");
    const size_t k = size_t(c.components);
    if ((k != 3 && k != 4) || c.values.size() != n * k) fail(where + ": bad COLOR_0");
    prim.colours.resize(n);
    for (size_t i = 0; i < n; ++i)
      prim.colours[i] = {float(c.values[i * k]), float(c.values[i * k + 1]), float(c.values[i * k + 2]), k == 4 ? float(c.values[i * k + 3]) : 1.f};
  }
  if (data.has("JOINTS_0") && data.has("WEIGHTS_0")) {
    const std::vector<double> j = perVertex("JOINTS_0", 4), w = perVertex("WEIGHTS_0", 4);
    prim.joints.resize(n);
    prim.weights.resize(n);
    for (size_t i = 0; i < n; ++i)
      for (size_t k = 0; k < 4; ++k) {
        prim.joints[i][k] = uint16_t(j[i * 4 + k]);
        prim.weights[i][k] = float(w[i * 4 + k]);
      }
  }
  std::vector<uint32_t> index;
  if (data.hasIndices()) {
    index = data.indices();
    for (uint32_t i : index)
      if (i >= n) fail(where + ": vertex index out of range");
  } else {
    index.resize(n);
    for (size_t i = 0; i < n; ++i) index[i] = uint32_t(i);
  }
  if (mode == TINYGLTF_MODE_TRIANGLES) {
    prim.triangles.assign(index.begin(), index.end() - long(index.size() % 3));
  } else {
    for (size_t i = 2; i < index.size(); ++i) {
      if (mode == TINYGLTF_MODE_TRIANGLE_STRIP) {
        const bool even = i % 2 == 0;
        prim.triangles.insert(prim.triangles.end(), {index[i - 2], even ? index[i - 1] : index[i], even ? index[i] : index[i - 1]});
      } else {
        prim.triangles.insert(prim.triangles.end(), {index[0], index[i - 1], index[i]});
      }
    }
  }
  return prim;
}

/// Materials (base colour factor and texture, its sampler's wrap modes) and how each reads UVs.
/// Only base-colour images are decoded: other textures may be in formats we cannot read.
void loadMaterials(const tinygltf::Model& doc, GltfModel& model, std::vector<TextureCoordinates>& coordinates) {
  model.images.resize(doc.images.size());
  std::vector<bool> decoded(doc.images.size(), false);
  for (size_t i = 0; i < doc.materials.size(); ++i) {
    const tinygltf::PbrMetallicRoughness& pbr = doc.materials[i].pbrMetallicRoughness;
    const std::string where = "material " + std::to_string(i);
    GltfMaterial m;
    for (size_t c = 0; c < 4 && c < pbr.baseColorFactor.size(); ++c) m.baseColorFactor[c] = float(pbr.baseColorFactor[c]);
    TextureCoordinates tc;
    const tinygltf::TextureInfo& ref = pbr.baseColorTexture;
    if (ref.index >= 0) {
      if (size_t(ref.index) >= doc.textures.size()) fail(where + ": texture out of range");
      const tinygltf::Texture& tex = doc.textures[size_t(ref.index)];
      if (tex.source < 0) fail("texture " + std::to_string(ref.index) + " has no PNG/JPEG source (KTX2/Basis, WebP and AVIF textures are not supported)");
      if (size_t(tex.source) >= doc.images.size()) fail("texture source out of range");
      m.image = tex.source;
      if (!decoded[size_t(m.image)]) {
        const std::vector<unsigned char>& bytes = doc.images[size_t(m.image)].image;
        model.images[size_t(m.image)] = decodeImage(bytes.data(), bytes.size(), "image " + std::to_string(m.image));
        decoded[size_t(m.image)] = true;
      }
      if (tex.sampler >= 0) {
        if (size_t(tex.sampler) >= doc.samplers.size()) fail("texture sampler out of range");
        m.wrapS = doc.samplers[size_t(tex.sampler)].wrapS;
        m.wrapT = doc.samplers[size_t(tex.sampler)].wrapT;
      }
      tc = coordinatesOf(ref, where);
    }
    model.materials.push_back(m);
    coordinates.push_back(tc);
  }
}

void loadNodes(const tinygltf::Model& doc, GltfModel& model) {
  const size_t nodeCount = doc.nodes.size();
  for (size_t i = 0; i < nodeCount; ++i) {
    const tinygltf::Node& n = doc.nodes[i];
    const std::string where = "node " + std::to_string(i);
    GltfNode node;
    for (int child : n.children) {
      if (child < 0 || size_t(child) >= nodeCount) fail(where + ": child out of range");
      node.children.push_back(child);
    }
    if (n.matrix.size() == 16) {
      node.hasMatrix = true;
      std::copy(n.matrix.begin(), n.matrix.end(), node.matrix.begin());
    }
    for (size_t c = 0; c < n.translation.size() && c < 3; ++c) node.translation[c] = n.translation[c];
    for (size_t c = 0; c < n.rotation.size() && c < 4; ++c) node.rotation[c] = n.rotation[c];
    for (size_t c = 0; c < n.scale.size() && c < 3; ++c) node.scale[c] = n.scale[c];
    node.mesh = n.mesh;
    node.skin = n.skin;
    if (node.mesh >= int(model.meshes.size())) fail(where + ": mesh out of range");
    if (node.skin >= int(doc.skins.size())) fail(where + ": skin out of range");
    model.nodes.push_back(node);
  }
  for (size_t i = 0; i < doc.skins.size(); ++i) {
    const tinygltf::Skin& s = doc.skins[i];
    const std::string where = "skin " + std::to_string(i);
    GltfSkin skin;
    for (int joint : s.joints) {
      if (joint < 0 || size_t(joint) >= nodeCount) fail(where + ": joint out of range");
      skin.joints.push_back(joint);
    }
    skin.inverseBindMatrices.assign(skin.joints.size(), kIdentityMatrix);
    if (s.inverseBindMatrices >= 0) {
      const AttributeValues m = readAccessor(doc, s.inverseBindMatrices);
      if (m.components != 16 || m.values.size() < skin.joints.size() * 16) fail(where + ": too few inverse bind matrices");
      for (size_t j = 0; j < skin.joints.size(); ++j)
        std::copy(m.values.begin() + long(j * 16), m.values.begin() + long(j * 16 + 16), skin.inverseBindMatrices[j].begin());
    }
    model.skins.push_back(std::move(skin));
  }
  const size_t scene = doc.defaultScene >= 0 ? size_t(doc.defaultScene) : 0;
  if (doc.scenes.size() > scene) {
    for (int root : doc.scenes[scene].nodes) {
      if (root < 0 || size_t(root) >= nodeCount) fail("scene root out of range");
      model.sceneRoots.push_back(root);
    }
  } else {  // no scene: every node that is nobody's child
    std::vector<bool> isChild(nodeCount, false);
    for (const auto& n : model.nodes)
      for (int c : n.children) isChild[size_t(c)] = true;
    for (size_t i = 0; i < nodeCount; ++i)
      if (!isChild[i]) model.sceneRoots.push_back(int(i));
  }
}

GltfChannel::Path pathOf(const std::string& path, const std::string& where) {
  if (path == "translation") return GltfChannel::Path::Translation;
  if (path == "rotation") return GltfChannel::Path::Rotation;
  if (path == "scale") return GltfChannel::Path::Scale;
  fail(where + ": animating '" + path + "' (morph target weights) is not supported");
}

void loadAnimations(const tinygltf::Model& doc, GltfModel& model) {
  for (size_t i = 0; i < doc.animations.size(); ++i) {
    const tinygltf::Animation& a = doc.animations[i];
    GltfAnimation anim;
    anim.name = a.name.empty() ? "animation " + std::to_string(i) : a.name;
    anim.start = 1e300;
    anim.end = -1e300;
    for (size_t c = 0; c < a.channels.size(); ++c) {
      const tinygltf::AnimationChannel& ch = a.channels[c];
      const std::string where = "animation " + std::to_string(i) + " channel " + std::to_string(c);
      if (ch.target_node < 0) continue;  // no target: to be ignored, per the specification
      GltfChannel channel;
      channel.node = ch.target_node;
      if (size_t(channel.node) >= model.nodes.size()) fail(where + ": node out of range");
      channel.path = pathOf(ch.target_path, where);
      if (ch.sampler < 0 || size_t(ch.sampler) >= a.samplers.size()) fail(where + ": sampler out of range");
      const tinygltf::AnimationSampler& sampler = a.samplers[size_t(ch.sampler)];
      const std::string& interpolation = sampler.interpolation.empty() ? "LINEAR" : sampler.interpolation;
      if (interpolation == "STEP") channel.interpolation = GltfChannel::Interpolation::Step;
      else if (interpolation == "CUBICSPLINE") channel.interpolation = GltfChannel::Interpolation::CubicSpline;
      else if (interpolation != "LINEAR") fail(where + ": interpolation " + interpolation + " is not supported");
      const AttributeValues times = readAccessor(doc, sampler.input), values = readAccessor(doc, sampler.output);
      const int width = channel.path == GltfChannel::Path::Rotation ? 4 : 3;
      if (times.components != 1) fail(where + " input: not scalars");
      if (values.components != width) fail(where + " output has " + std::to_string(values.components) + " components, expected " + std::to_string(width));
      const size_t perKey = size_t(width) * (channel.interpolation == GltfChannel::Interpolation::CubicSpline ? 3 : 1);
      if (times.values.empty() || values.values.size() != times.values.size() * perKey) fail(where + ": key count mismatch");
      for (size_t k = 1; k < times.values.size(); ++k)
        if (times.values[k] < times.values[k - 1]) fail(where + ": key times are not increasing");
      channel.times.assign(times.values.begin(), times.values.end());
      channel.values.assign(values.values.begin(), values.values.end());
      anim.start = std::min(anim.start, times.values.front());
      anim.end = std::max(anim.end, times.values.back());
      anim.channels.push_back(std::move(channel));
    }
    if (anim.channels.empty()) anim.start = anim.end = 0;
    model.animations.push_back(std::move(anim));
  }
}

}  // namespace

GltfModel loadGltf(const std::string& path) {
  const tinygltf::Model doc = readGltfDocument(path);
  GltfModel model;
  model.path = path;
  try {
    std::vector<TextureCoordinates> coordinates;
    loadMaterials(doc, model, coordinates);
    for (size_t i = 0; i < doc.meshes.size(); ++i) {
      std::vector<GltfPrimitive> prims;
      for (size_t k = 0; k < doc.meshes[i].primitives.size(); ++k)
        prims.push_back(loadPrimitive(doc, doc.meshes[i].primitives[k], model.materials, coordinates,
                                      "mesh " + std::to_string(i) + " primitive " + std::to_string(k)));
      model.meshes.push_back(std::move(prims));
    }
    loadNodes(doc, model);
    loadAnimations(doc, model);
  } catch (const std::runtime_error& e) {
    throw std::runtime_error(path + ": " + e.what());
  }
  return model;
}

}  // namespace holoquic
