// Test assets for check_gltf_extensions.py, made from an uncompressed GLB the way web exporters
// write them: the same model with Draco-compressed primitives (libdraco's encoder), with
// meshopt-compressed vertex and index data (meshoptimizer's encoders, EXT_meshopt_compression's
// layout: compressed streams in the BIN chunk, a data-less fallback buffer they decode into), with
// its UVs moved behind a KHR_texture_transform that reads them from TEXCOORD_1, and one that
// requires an extension the packager does not implement.
//
//     make-gltf-variants SOURCE.glb OUT_DIR   →   OUT_DIR/{draco,meshopt,transform,required}.glb
#include <draco/compression/decode.h>
#include <draco/compression/encode.h>
#include <meshoptimizer.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

using Json = nlohmann::json;

namespace {

struct Glb {
  Json doc;
  std::vector<uint8_t> bin;
};

uint32_t le32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

Glb readGlb(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
  if (bytes.size() < 20 || std::memcmp(bytes.data(), "glTF", 4) != 0) throw std::runtime_error(path + ": not a GLB");
  Glb glb;
  for (size_t at = 12; at + 8 <= bytes.size();) {
    const size_t length = le32(&bytes[at]);
    const uint32_t type = le32(&bytes[at + 4]);
    if (type == 0x4e4f534a) glb.doc = Json::parse(bytes.begin() + long(at + 8), bytes.begin() + long(at + 8 + length));
    if (type == 0x004e4942) glb.bin.assign(bytes.begin() + long(at + 8), bytes.begin() + long(at + 8 + length));
    at += 8 + length;
  }
  return glb;
}

void writeGlb(const std::string& path, Glb glb) {
  while (glb.bin.size() % 4) glb.bin.push_back(0);
  glb.doc["buffers"][0]["byteLength"] = glb.bin.size();
  std::string json = glb.doc.dump();
  while (json.size() % 4) json += ' ';
  std::string out = "glTF";
  auto put32 = [&](uint32_t v) {
    for (int i = 0; i < 4; ++i) out += char((v >> (8 * i)) & 0xff);
  };
  put32(2);
  put32(uint32_t(12 + 8 + json.size() + 8 + glb.bin.size()));
  put32(uint32_t(json.size()));
  out += "JSON" + json;
  put32(uint32_t(glb.bin.size()));
  out += std::string("BIN\0", 4);
  out.append(reinterpret_cast<const char*>(glb.bin.data()), glb.bin.size());
  std::ofstream(path, std::ios::binary) << out;
}

size_t componentSize(int type) { return type == 5120 || type == 5121 ? 1 : type == 5122 || type == 5123 ? 2 : 4; }
size_t componentCount(const std::string& type) {
  return type == "SCALAR" ? 1 : type == "VEC2" ? 2 : type == "VEC3" ? 3 : type == "VEC4" ? 4 : 16;
}
size_t elementSize(const Json& accessor) { return componentSize(accessor["componentType"]) * componentCount(accessor["type"]); }

/// An accessor's elements, tightly packed.
std::vector<uint8_t> accessorBytes(const Glb& glb, int index) {
  const Json& a = glb.doc["accessors"][size_t(index)];
  const Json& view = glb.doc["bufferViews"][a["bufferView"].get<size_t>()];
  const size_t element = elementSize(a), count = a["count"], stride = view.value("byteStride", element);
  const size_t start = view.value("byteOffset", size_t(0)) + a.value("byteOffset", size_t(0));
  std::vector<uint8_t> out(count * element);
  for (size_t i = 0; i < count; ++i) std::memcpy(&out[i * element], &glb.bin[start + i * stride], element);
  return out;
}

std::vector<uint32_t> indices(const Glb& glb, int accessor) {
  const std::vector<uint8_t> bytes = accessorBytes(glb, accessor);
  const size_t size = componentSize(glb.doc["accessors"][size_t(accessor)]["componentType"]);
  std::vector<uint32_t> out(bytes.size() / size);
  for (size_t i = 0; i < out.size(); ++i) out[i] = size == 2 ? uint32_t(bytes[i * 2] | bytes[i * 2 + 1] << 8) : size == 1 ? bytes[i] : le32(&bytes[i * 4]);
  return out;
}

/// Appends bytes to the BIN chunk (4-byte aligned) as a new buffer view; returns its index.
size_t appendView(Glb& glb, const std::vector<uint8_t>& bytes) {
  while (glb.bin.size() % 4) glb.bin.push_back(0);
  glb.doc["bufferViews"].push_back({{"buffer", 0}, {"byteOffset", glb.bin.size()}, {"byteLength", bytes.size()}});
  glb.bin.insert(glb.bin.end(), bytes.begin(), bytes.end());
  return glb.doc["bufferViews"].size() - 1;
}

void require(Json& doc, const std::string& extension) {
  doc["extensionsUsed"].push_back(extension);
  doc["extensionsRequired"].push_back(extension);
}

draco::DataType dracoType(int componentType) {
  switch (componentType) {
    case 5120: return draco::DT_INT8;
    case 5121: return draco::DT_UINT8;
    case 5122: return draco::DT_INT16;
    case 5123: return draco::DT_UINT16;
    case 5125: return draco::DT_UINT32;
    default: return draco::DT_FLOAT32;
  }
}

/// Every primitive Draco-compressed: its accessors lose their buffer views (the decoded stream
/// is their data) and count what the decoder gives back.
void makeDraco(Glb glb, const std::string& out) {
  for (Json& mesh : glb.doc["meshes"])
    for (Json& primitive : mesh["primitives"]) {
      draco::Mesh dm;
      const size_t n = glb.doc["accessors"][primitive["attributes"]["POSITION"].get<size_t>()]["count"];
      dm.set_num_points(uint32_t(n));
      Json ids = Json::object();
      for (auto& [name, accessor] : primitive["attributes"].items()) {
        const Json& a = glb.doc["accessors"][accessor.get<size_t>()];
        const std::vector<uint8_t> bytes = accessorBytes(glb, accessor);
        const auto kind = name == "POSITION" ? draco::GeometryAttribute::POSITION : name == "NORMAL" ? draco::GeometryAttribute::NORMAL
                          : name.rfind("TEXCOORD", 0) == 0 ? draco::GeometryAttribute::TEX_COORD
                          : name.rfind("COLOR", 0) == 0 ? draco::GeometryAttribute::COLOR : draco::GeometryAttribute::GENERIC;
        draco::GeometryAttribute ga;
        ga.Init(kind, nullptr, uint8_t(componentCount(a["type"])), dracoType(a["componentType"]), a.value("normalized", false),
                int64_t(elementSize(a)), 0);
        draco::PointAttribute* pa = dm.attribute(dm.AddAttribute(ga, true, uint32_t(n)));
        for (size_t i = 0; i < n; ++i) pa->SetAttributeValue(draco::AttributeValueIndex(uint32_t(i)), &bytes[i * elementSize(a)]);
        ids[name] = pa->unique_id();
      }
      const std::vector<uint32_t> ix = indices(glb, primitive["indices"]);
      for (size_t t = 0; t + 2 < ix.size(); t += 3)
        dm.AddFace({draco::PointIndex(ix[t]), draco::PointIndex(ix[t + 1]), draco::PointIndex(ix[t + 2])});
      draco::Encoder encoder;
      encoder.SetAttributeQuantization(draco::GeometryAttribute::POSITION, 16);
      encoder.SetAttributeQuantization(draco::GeometryAttribute::TEX_COORD, 14);
      encoder.SetAttributeQuantization(draco::GeometryAttribute::NORMAL, 10);
      draco::EncoderBuffer encoded;
      if (!encoder.EncodeMeshToBuffer(dm, &encoded).ok()) throw std::runtime_error("Draco encoding failed");
      draco::DecoderBuffer check;
      check.Init(encoded.data(), encoded.size());
      draco::Decoder decoder;
      const std::unique_ptr<draco::Mesh> back = decoder.DecodeMeshFromBuffer(&check).value();
      const size_t view = appendView(glb, std::vector<uint8_t>(encoded.data(), encoded.data() + encoded.size()));
      for (auto& [name, accessor] : primitive["attributes"].items()) {
        Json a = glb.doc["accessors"][accessor.get<size_t>()];
        a.erase("bufferView");
        a.erase("byteOffset");
        a["count"] = back->num_points();
        glb.doc["accessors"].push_back(a);
        accessor = glb.doc["accessors"].size() - 1;
      }
      glb.doc["accessors"].push_back({{"componentType", 5125}, {"count", back->num_faces() * 3}, {"type", "SCALAR"}});
      primitive["indices"] = glb.doc["accessors"].size() - 1;
      primitive["extensions"]["KHR_draco_mesh_compression"] = {{"bufferView", view}, {"attributes", ids}};
    }
  require(glb.doc, "KHR_draco_mesh_compression");
  writeGlb(out, glb);
}

/// Every vertex attribute and index list meshopt-compressed into the BIN chunk, decoding into
/// buffer 1, a fallback buffer without data; positions also through the exponential filter.
void makeMeshopt(Glb glb, const std::string& out) {
  size_t fallbackSize = 0;
  auto compress = [&](Json& accessorRef, bool isIndex, bool exponential) {
    Json a = glb.doc["accessors"][accessorRef.get<size_t>()];
    std::vector<uint8_t> bytes = accessorBytes(glb, accessorRef);
    const size_t count = a["count"], stride = elementSize(a);
    std::vector<uint8_t> encoded;
    Json ext = {{"buffer", 0}, {"byteStride", stride}, {"count", count}};
    if (isIndex) {
      const std::vector<uint32_t> ix = indices(glb, accessorRef);
      encoded.resize(meshopt_encodeIndexBufferBound(ix.size(), ix.empty() ? 0 : 1 + *std::max_element(ix.begin(), ix.end())));
      encoded.resize(meshopt_encodeIndexBuffer(encoded.data(), encoded.size(), ix.data(), ix.size()));
      ext["mode"] = "TRIANGLES";
    } else {
      if (exponential) {
        std::vector<float> values(bytes.size() / 4);
        std::memcpy(values.data(), bytes.data(), bytes.size());
        meshopt_encodeFilterExp(bytes.data(), count, stride, 18, values.data());
        ext["filter"] = "EXPONENTIAL";
      }
      encoded.resize(meshopt_encodeVertexBufferBound(count, stride));
      encoded.resize(meshopt_encodeVertexBuffer(encoded.data(), encoded.size(), bytes.data(), count, stride));
      ext["mode"] = "ATTRIBUTES";
    }
    const size_t source = appendView(glb, encoded);
    const Json sourceView = glb.doc["bufferViews"][source];
    ext["byteOffset"] = sourceView["byteOffset"];
    ext["byteLength"] = sourceView["byteLength"];
    Json view = {{"buffer", 1}, {"byteOffset", fallbackSize}, {"byteLength", count * stride},
                 {"extensions", {{"EXT_meshopt_compression", ext}}}};
    if (!isIndex) view["byteStride"] = stride;
    fallbackSize += (count * stride + 3) / 4 * 4;
    glb.doc["bufferViews"][source] = view;  // the compressed bytes stay in the BIN chunk, unviewed
    a["bufferView"] = source;
    a.erase("byteOffset");
    glb.doc["accessors"].push_back(a);
    accessorRef = glb.doc["accessors"].size() - 1;
  };
  for (Json& mesh : glb.doc["meshes"])
    for (Json& primitive : mesh["primitives"]) {
      for (auto& [name, accessor] : primitive["attributes"].items()) compress(accessor, false, name == "POSITION");
      compress(primitive["indices"], true, false);
    }
  glb.doc["buffers"].push_back({{"byteLength", fallbackSize}, {"extensions", {{"EXT_meshopt_compression", {{"fallback", true}}}}}});
  require(glb.doc, "EXT_meshopt_compression");
  writeGlb(out, glb);
}

/// The base-colour texture read through a KHR_texture_transform (offset, rotation, scale) from
/// TEXCOORD_1, which holds the original UVs mapped through the transform's inverse; TEXCOORD_0
/// becomes a constant decoy, so a loader ignoring the transform or its texCoord gets other colours.
void makeTextureTransform(Glb glb, const std::string& out) {
  const double ox = 0.3, oy = -0.2, rotation = 0.6, sx = 1.5, sy = 0.8;
  const double c = std::cos(rotation), s = std::sin(rotation);
  const double m[4] = {c * sx, s * sy, -s * sx, c * sy}, det = m[0] * m[3] - m[1] * m[2];
  for (Json& material : glb.doc["materials"])
    material["pbrMetallicRoughness"]["baseColorTexture"]["extensions"]["KHR_texture_transform"] =
        {{"offset", {ox, oy}}, {"rotation", rotation}, {"scale", {sx, sy}}, {"texCoord", 1}};
  for (Json& mesh : glb.doc["meshes"])
    for (Json& primitive : mesh["primitives"]) {
      const std::vector<uint8_t> bytes = accessorBytes(glb, primitive["attributes"]["TEXCOORD_0"]);
      std::vector<float> inverse(bytes.size() / 4), decoy(bytes.size() / 4, 0.5f);
      std::memcpy(inverse.data(), bytes.data(), bytes.size());
      for (size_t i = 0; i + 1 < inverse.size(); i += 2) {
        const double u = inverse[i] - ox, v = inverse[i + 1] - oy;
        inverse[i] = float((m[3] * u - m[1] * v) / det);
        inverse[i + 1] = float((-m[2] * u + m[0] * v) / det);
      }
      for (const auto& [name, values] : {std::pair<const char*, std::vector<float>*>{"TEXCOORD_1", &inverse}, {"TEXCOORD_0", &decoy}}) {
        const auto* raw = reinterpret_cast<const uint8_t*>(values->data());
        const size_t view = appendView(glb, std::vector<uint8_t>(raw, raw + values->size() * 4));
        glb.doc["accessors"].push_back({{"bufferView", view}, {"componentType", 5126}, {"count", values->size() / 2}, {"type", "VEC2"}});
        primitive["attributes"][name] = glb.doc["accessors"].size() - 1;
      }
    }
  require(glb.doc, "KHR_texture_transform");
  writeGlb(out, glb);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) {
    std::fprintf(stderr, "usage: make-gltf-variants SOURCE.glb OUT_DIR\n");
    return 2;
  }
  try {
    const Glb source = readGlb(argv[1]);
    const std::string dir = argv[2];
    makeDraco(source, dir + "/draco.glb");
    makeMeshopt(source, dir + "/meshopt.glb");
    makeTextureTransform(source, dir + "/transform.glb");
    Glb required = source;
    require(required.doc, "EXT_mesh_gpu_instancing");
    writeGlb(dir + "/required.glb", required);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "make-gltf-variants: %s\n", e.what());
    return 1;
  }
  return 0;
}
