#include "gltf_document.h"

#include <meshoptimizer.h>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <stdexcept>

namespace holoquic {
namespace {

using Json = nlohmann::json;

/// Decoded bytes a model may ask us to allocate (meshopt fallback buffers, decoded views): bad
/// input gets an error instead of exhausting memory. A human-sized model needs a few MB.
constexpr uint64_t kMaxDecodedBytes = uint64_t(1) << 30;

/// Buffers tinygltf cannot find by itself get a URI of this form; our file callbacks serve them.
const std::string kServedPrefix = "holoquic-served-buffer-";

struct Failure {
  std::string path;
  [[noreturn]] void operator()(const std::string& what) const { throw std::runtime_error(path + ": " + what); }
};

std::vector<uint8_t> readWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot read the file");
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), {});
}

uint32_t le32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

/// The JSON text and, for a GLB, its BIN chunk.
struct Container {
  std::string json;
  std::vector<uint8_t> bin;
  bool glb = false, hasBin = false;
};

Container splitContainer(const std::vector<uint8_t>& bytes, const Failure& fail) {
  Container c;
  if (bytes.size() < 4 || std::memcmp(bytes.data(), "glTF", 4) != 0) {
    c.json.assign(bytes.begin(), bytes.end());
    return c;
  }
  c.glb = true;
  if (bytes.size() < 20) fail("truncated GLB header");
  if (le32(&bytes[4]) != 2) fail("GLB version " + std::to_string(le32(&bytes[4])) + " is not supported (2 only)");
  const size_t total = std::min<size_t>(le32(&bytes[8]), bytes.size());
  for (size_t at = 12; at + 8 <= total;) {
    const size_t length = le32(&bytes[at]);
    const uint32_t type = le32(&bytes[at + 4]);
    if (length > total - at - 8) fail("truncated GLB chunk");
    const uint8_t* data = &bytes[at + 8];
    if (type == 0x4e4f534a && c.json.empty()) c.json.assign(reinterpret_cast<const char*>(data), length);  // "JSON"
    else if (type == 0x004e4942 && !c.hasBin) c.bin.assign(data, data + length), c.hasBin = true;        // "BIN\0"
    at += 8 + length;
  }
  if (c.json.empty()) fail("GLB has no JSON chunk");
  return c;
}

/// Why a required extension cannot be honoured, for the error message.
std::string describeUnsupported(const std::string& name) {
  static const std::map<std::string, std::string> kKnown = {
      {"KHR_texture_basisu", "KTX2/Basis textures"}, {"EXT_texture_webp", "WebP textures"},
      {"EXT_texture_avif", "AVIF textures"},         {"EXT_mesh_gpu_instancing", "GPU instancing"},
      {"KHR_draco_mesh_compression", ""},            {"KHR_materials_variants", "material variants"},
  };
  const auto known = kKnown.find(name);
  return known == kKnown.end() || known->second.empty() ? "" : " (" + known->second + ")";
}

/// Bytes for the buffers tinygltf cannot resolve: the GLB BIN chunk (cut to the buffer's
/// byteLength: the chunk may be padded) and meshopt fallback buffers (zeros until decoded).
struct ServedBuffers {
  std::map<std::string, std::vector<uint8_t>> chunks;
  std::map<std::string, size_t> zeroFilled;
};

bool isMeshoptFallback(const Json& buffer) {
  for (const char* ext : {"EXT_meshopt_compression", "KHR_meshopt_compression"}) {
    const auto extensions = buffer.find("extensions");
    if (extensions != buffer.end() && extensions->is_object() && extensions->contains(ext)) return true;
  }
  return false;
}

/// Checks the document and points every buffer without a URI at a served one.
void prepareDocument(Json& doc, Container& c, ServedBuffers& served, const Failure& fail) {
  if (!doc.is_object()) fail("not a glTF document");
  const Json& version = doc["asset"]["version"];
  const std::string v = version.is_string() ? version.get<std::string>() : "";
  if (v.rfind("2.", 0) != 0) fail("glTF version '" + v + "' is not supported (2.x only)");
  if (doc.contains("extensionsRequired"))
    for (const Json& name : doc["extensionsRequired"]) {
      const std::string n = name.is_string() ? name.get<std::string>() : name.dump();
      if (!isSupportedGltfExtension(n)) fail("required extension " + n + describeUnsupported(n) + " is not supported");
    }
  // A Draco primitive's triangles come from its stream (gltf_attributes.h); its indices accessor
  // has no buffer view, which tinygltf 2.7 refuses, so tinygltf does not see it.
  if (doc.contains("meshes"))
    for (Json& mesh : doc["meshes"])
      if (mesh.contains("primitives"))
        for (Json& primitive : mesh["primitives"])
          if (primitive.contains("extensions") && primitive["extensions"].contains("KHR_draco_mesh_compression"))
            primitive.erase("indices");
  if (!doc.contains("buffers")) return;
  uint64_t zeroBytes = 0;
  for (size_t i = 0; i < doc["buffers"].size(); ++i) {
    Json& b = doc["buffers"][i];
    if (b.contains("uri")) continue;
    const uint64_t length = b.value("byteLength", uint64_t(0));
    const std::string uri = kServedPrefix + std::to_string(i);
    if (c.glb && i == 0 && c.hasBin) {
      if (length > c.bin.size()) fail("buffer 0 is longer than the GLB's BIN chunk");
      c.bin.resize(size_t(length));
      served.chunks[uri] = std::move(c.bin);
    } else if (isMeshoptFallback(b)) {
      zeroBytes += length;
      if (zeroBytes > kMaxDecodedBytes) fail("meshopt fallback buffers larger than 1 GiB");
      served.zeroFilled[uri] = size_t(length);
    } else {
      fail("buffer " + std::to_string(i) + " has no data");
    }
    if (length > 0) b["uri"] = uri;
  }
}

std::string servedName(const std::string& path) {
  const size_t at = path.rfind(kServedPrefix);
  return at == std::string::npos ? "" : path.substr(at);
}

bool fileExists(const std::string& path, void* context) {
  const auto* served = static_cast<const ServedBuffers*>(context);
  const std::string name = servedName(path);
  if (!name.empty()) return served->chunks.count(name) || served->zeroFilled.count(name);
  std::error_code error;
  return std::filesystem::is_regular_file(path, error);
}

std::string expandPath(const std::string& path, void*) { return path; }  // no shell expansion of names

bool readFile(std::vector<unsigned char>* out, std::string* error, const std::string& path, void* context) {
  const auto* served = static_cast<const ServedBuffers*>(context);
  const std::string name = servedName(path);
  if (served->chunks.count(name)) {
    *out = served->chunks.at(name);
    return true;
  }
  if (served->zeroFilled.count(name)) {
    out->assign(served->zeroFilled.at(name), 0);
    return true;
  }
  try {
    *out = readWholeFile(path);
    return true;
  } catch (const std::exception& e) {
    *error = e.what();
    return false;
  }
}

bool refuseWrite(std::string*, const std::string&, const std::vector<unsigned char>&, void*) { return false; }

/// Images stay encoded here: only the base-colour textures are decoded (image.h), so a model
/// whose other textures are in formats we cannot read still loads.
bool keepImageBytes(tinygltf::Image* image, const int, std::string*, std::string*, int, int, const unsigned char* bytes,
                    int size, void*) {
  image->image.assign(bytes, bytes + size);
  image->as_is = true;
  return true;
}

int integer(const tinygltf::Value& object, const std::string& key, int fallback) {
  return object.Has(key) && object.Get(key).IsNumber() ? object.Get(key).GetNumberAsInt() : fallback;
}

std::string text(const tinygltf::Value& object, const std::string& key, const std::string& fallback) {
  return object.Has(key) && object.Get(key).IsString() ? object.Get(key).Get<std::string>() : fallback;
}

/// Decodes one meshopt-compressed buffer view into its own place in its (fallback) buffer.
void decodeMeshoptView(tinygltf::Model& model, size_t index, const std::string& extension, const Failure& fail) {
  tinygltf::BufferView& view = model.bufferViews[index];
  const tinygltf::Value& ext = view.extensions.at(extension);
  const std::string where = "buffer view " + std::to_string(index) + " (" + extension + ")";
  const int source = integer(ext, "buffer", -1);
  const size_t offset = size_t(std::max(0, integer(ext, "byteOffset", 0))), length = size_t(std::max(0, integer(ext, "byteLength", 0)));
  const size_t stride = size_t(std::max(0, integer(ext, "byteStride", 0))), count = size_t(std::max(0, integer(ext, "count", 0)));
  const std::string mode = text(ext, "mode", ""), filter = text(ext, "filter", "NONE");
  if (source < 0 || size_t(source) >= model.buffers.size() || offset + length > model.buffers[size_t(source)].data.size())
    fail(where + ": compressed data outside its buffer");
  if (view.buffer < 0 || size_t(view.buffer) >= model.buffers.size()) fail(where + ": buffer out of range");
  if (stride == 0 || uint64_t(count) * stride > kMaxDecodedBytes) fail(where + ": bad byteStride or count");
  std::vector<uint8_t>& target = model.buffers[size_t(view.buffer)].data;
  const size_t size = count * stride;
  if (size > view.byteLength || view.byteOffset + size > target.size()) fail(where + ": decoded data does not fit its buffer view");
  const uint8_t* compressed = model.buffers[size_t(source)].data.data() + offset;
  std::vector<uint8_t> decoded(size);
  int status = -1;
  if (mode == "ATTRIBUTES") {
    if (stride % 4 || stride > 256) fail(where + ": ATTRIBUTES need a byteStride that is a multiple of 4, at most 256");
    if (length > 0 && (compressed[0] & 0x0f) != 0)
      fail(where + ": vertex codec version " + std::to_string(compressed[0] & 0x0f) +
           " is not supported (meshoptimizer " + std::to_string(MESHOPTIMIZER_VERSION / 1000) + "." +
           std::to_string(MESHOPTIMIZER_VERSION % 1000 / 10) + " decodes version 0)");
    status = meshopt_decodeVertexBuffer(decoded.data(), count, stride, compressed, length);
  } else if (mode == "TRIANGLES" || mode == "INDICES") {
    if (stride != 2 && stride != 4) fail(where + ": " + mode + " need a byteStride of 2 or 4");
    if (mode == "TRIANGLES" && count % 3) fail(where + ": TRIANGLES need a count divisible by 3");
    status = mode == "TRIANGLES" ? meshopt_decodeIndexBuffer(decoded.data(), count, stride, compressed, length)
                                 : meshopt_decodeIndexSequence(decoded.data(), count, stride, compressed, length);
  } else {
    fail(where + ": mode '" + mode + "' is not supported");
  }
  if (status != 0) fail(where + ": corrupt meshopt data");
  if (filter == "OCTAHEDRAL" && (stride == 4 || stride == 8)) meshopt_decodeFilterOct(decoded.data(), count, stride);
  else if (filter == "QUATERNION" && stride == 8) meshopt_decodeFilterQuat(decoded.data(), count, stride);
  else if (filter == "EXPONENTIAL" && stride % 4 == 0) meshopt_decodeFilterExp(decoded.data(), count, stride);
  else if (filter != "NONE") fail(where + ": filter " + filter + " with byteStride " + std::to_string(stride) + " is not supported");
  std::memcpy(target.data() + view.byteOffset, decoded.data(), size);
}

}  // namespace

bool isSupportedGltfExtension(const std::string& name) {
  static const char* const kSupported[] = {
      "KHR_draco_mesh_compression", "EXT_meshopt_compression", "KHR_meshopt_compression",
      "KHR_texture_transform",      "KHR_mesh_quantization",   "KHR_materials_unlit",
  };
  for (const char* s : kSupported)
    if (name == s) return true;
  return false;
}

tinygltf::Model readGltfDocument(const std::string& path) {
  const Failure fail{path};
  Container container = splitContainer(readWholeFile(path), fail);
  Json doc;
  try {
    doc = Json::parse(container.json);
  } catch (const Json::parse_error& e) {
    const std::string message = e.what();
    const size_t start = message.find("] ");  // drop nlohmann's "[json.exception.parse_error.101] "
    fail("malformed JSON: " + (start == std::string::npos ? message : message.substr(start + 2)));
  }
  ServedBuffers served;
  try {
    prepareDocument(doc, container, served, fail);
  } catch (const Json::exception& e) {
    fail(std::string("malformed document: ") + e.what());
  }
  const std::string json = doc.dump();
  const std::filesystem::path parent = std::filesystem::path(path).parent_path();

  tinygltf::TinyGLTF loader;
  loader.SetFsCallbacks({&fileExists, &expandPath, &readFile, &refuseWrite, &served});
  loader.SetImageLoader(&keepImageBytes, nullptr);
  tinygltf::Model model;
  std::string error, warning;
  if (!loader.LoadASCIIFromString(&model, &error, &warning, json.c_str(), unsigned(json.size()),
                                  parent.empty() ? "." : parent.string())) {
    while (!error.empty() && error.back() == '\n') error.pop_back();
    fail(error.empty() ? "not a usable glTF document" : error);
  }
  for (size_t i = 0; i < model.bufferViews.size(); ++i)
    for (const char* extension : {"EXT_meshopt_compression", "KHR_meshopt_compression"})
      if (model.bufferViews[i].extensions.count(extension)) {
        decodeMeshoptView(model, i, extension, fail);
        break;
      }
  return model;
}

}  // namespace holoquic
