#include "gltf.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <functional>
#include <iterator>
#include <stdexcept>

#include "json.h"

namespace holoquic {
namespace {

// ------------------------------------------------------------------ files and buffers

std::vector<uint8_t> readWholeFile(const std::string& path, const std::string& what) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(what + ": cannot read " + path);
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(in)), {});
}

uint32_t le32(const uint8_t* p) { return uint32_t(p[0]) | uint32_t(p[1]) << 8 | uint32_t(p[2]) << 16 | uint32_t(p[3]) << 24; }

std::vector<uint8_t> decodeBase64(const std::string& text, const std::string& what) {
  std::vector<uint8_t> out;
  uint32_t acc = 0;
  int bits = 0;
  for (char c : text) {
    int v;
    if (c >= 'A' && c <= 'Z') v = c - 'A';
    else if (c >= 'a' && c <= 'z') v = c - 'a' + 26;
    else if (c >= '0' && c <= '9') v = c - '0' + 52;
    else if (c == '+' || c == '-') v = 62;
    else if (c == '/' || c == '_') v = 63;
    else if (c == '=' || c == '\n' || c == '\r') continue;
    else throw std::runtime_error(what + ": bad base64 in a data URI");
    acc = acc << 6 | uint32_t(v);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out.push_back(uint8_t(acc >> bits));
    }
  }
  return out;
}

/// Where a model's files live and how they are named in errors.
struct Loader {
  std::string path, directory;
  JsonValue doc;
  std::vector<std::vector<uint8_t>> buffers;

  [[noreturn]] void fail(const std::string& what) const { throw std::runtime_error(path + ": " + what); }

  std::vector<uint8_t> resolveUri(const std::string& uri) const {
    if (uri.rfind("data:", 0) == 0) {
      const size_t comma = uri.find(',');
      if (comma == std::string::npos || uri.substr(0, comma).find(";base64") == std::string::npos)
        fail("data URI is not base64");
      return decodeBase64(uri.substr(comma + 1), path);
    }
    if (uri.find("://") != std::string::npos) fail("external URI " + uri + " is not supported (files next to the model only)");
    std::string file;  // percent-decoded
    for (size_t i = 0; i < uri.size(); ++i) {
      if (uri[i] == '%' && i + 2 < uri.size()) {
        file += char(std::stoi(uri.substr(i + 1, 2), nullptr, 16));
        i += 2;
      } else {
        file += uri[i];
      }
    }
    return readWholeFile(directory + file, path);
  }

  void open(const std::string& file) {
    path = file;
    const size_t slash = file.find_last_of('/');
    directory = slash == std::string::npos ? "" : file.substr(0, slash + 1);
    const std::vector<uint8_t> bytes = readWholeFile(file, "glTF");
    std::vector<uint8_t> bin;
    bool hasBin = false;
    std::string json;
    if (bytes.size() >= 4 && std::memcmp(bytes.data(), "glTF", 4) == 0) {
      if (bytes.size() < 20) fail("truncated GLB header");
      if (le32(&bytes[4]) != 2) fail("GLB version " + std::to_string(le32(&bytes[4])) + " is not supported (2 only)");
      const size_t total = std::min<size_t>(le32(&bytes[8]), bytes.size());
      for (size_t at = 12; at + 8 <= total;) {
        const size_t length = le32(&bytes[at]);
        const uint32_t type = le32(&bytes[at + 4]);
        if (length > total - at - 8) fail("truncated GLB chunk");
        const uint8_t* data = &bytes[at + 8];
        if (type == 0x4e4f534a) json.assign(reinterpret_cast<const char*>(data), length);  // "JSON"
        else if (type == 0x004e4942 && !hasBin) bin.assign(data, data + length), hasBin = true;  // "BIN\0"
        at += 8 + length;
      }
      if (json.empty()) fail("GLB has no JSON chunk");
    } else {
      json.assign(bytes.begin(), bytes.end());
    }
    try {
      doc = JsonValue::parse(json);
    } catch (const std::exception& e) {
      fail(e.what());
    }
    if (!doc.isObject()) fail("not a glTF document");
    const std::string version = doc["asset"]["version"].isString() ? doc["asset"]["version"].string() : "";
    if (version.rfind("2.", 0) != 0) fail("glTF version '" + version + "' is not supported (2.x only)");
    checkExtensions();
    for (size_t i = 0; i < doc["buffers"].size(); ++i) {
      const JsonValue& b = doc["buffers"].at(i);
      std::vector<uint8_t> data;
      if (b.has("uri")) data = resolveUri(b["uri"].string());
      else if (i == 0 && hasBin) data = bin;
      else fail("buffer " + std::to_string(i) + " has no data");
      if (data.size() < size_t(b.numberOr("byteLength", 0))) fail("buffer " + std::to_string(i) + " is shorter than its byteLength");
      buffers.push_back(std::move(data));
    }
  }

  void checkExtensions() const {
    static const char* const kUnsupported[][2] = {
        {"KHR_draco_mesh_compression", "Draco-compressed geometry"},
        {"EXT_meshopt_compression", "meshopt-compressed geometry"},
        {"KHR_mesh_quantization", "quantized vertex attributes"},
        {"KHR_texture_basisu", "KTX2/Basis textures"},
        {"EXT_texture_webp", "WebP textures"},
        {"EXT_texture_avif", "AVIF textures"},
    };
    for (const char* list : {"extensionsRequired", "extensionsUsed"}) {
      const JsonValue& names = doc[list];
      for (size_t i = 0; i < names.size(); ++i) {
        const std::string& name = names.at(i).string();
        for (const auto& u : kUnsupported)
          if (name == u[0]) fail(name + " (" + u[1] + ") is not supported");
        if (std::string(list) == "extensionsRequired" && name != "KHR_materials_unlit")
          fail("required extension " + name + " is not supported");
      }
    }
  }

  /// Accessor `index` as `count × components` doubles (normalised integers mapped to [0, 1] / [−1, 1]).
  std::vector<double> accessor(int index, int& components) const {
    const JsonValue& a = doc["accessors"].at(size_t(index));
    const std::string where = "accessor " + std::to_string(index);
    if (a.has("sparse")) fail(where + ": sparse accessors are not supported");
    static const std::pair<const char*, int> kTypes[] = {{"SCALAR", 1}, {"VEC2", 2}, {"VEC3", 3}, {"VEC4", 4}, {"MAT4", 16}};
    components = 0;
    for (const auto& [name, n] : kTypes)
      if (a["type"].string() == name) components = n;
    if (!components) fail(where + ": type " + a["type"].string() + " is not supported");
    const int componentType = int(a["componentType"].number());
    int size;
    switch (componentType) {
      case 5120: case 5121: size = 1; break;
      case 5122: case 5123: size = 2; break;
      case 5125: case 5126: size = 4; break;
      default: fail(where + ": component type " + std::to_string(componentType) + " is not supported");
    }
    const size_t count = size_t(a["count"].number());
    if (count > (size_t(1) << 28)) fail(where + ": count too large");
    std::vector<double> out(count * size_t(components), 0.0);
    if (!a.has("bufferView")) return out;  // all zeros, per the specification
    const JsonValue& view = doc["bufferViews"].at(size_t(a["bufferView"].number()));
    const size_t buffer = size_t(view["buffer"].number());
    if (buffer >= buffers.size()) fail(where + ": buffer out of range");
    const size_t viewOffset = size_t(view.numberOr("byteOffset", 0)), viewLength = size_t(view["byteLength"].number());
    if (viewOffset + viewLength > buffers[buffer].size()) fail(where + ": buffer view runs past its buffer");
    const size_t element = size_t(size) * size_t(components);
    const size_t stride = view.has("byteStride") ? size_t(view["byteStride"].number()) : element;
    const size_t offset = size_t(a.numberOr("byteOffset", 0));
    if (count && offset + stride * (count - 1) + element > viewLength) fail(where + ": data runs past its buffer view");
    const bool normalized = a["normalized"].isNull() ? false : a["normalized"].boolean();
    const uint8_t* base = buffers[buffer].data() + viewOffset + offset;
    for (size_t i = 0; i < count; ++i)
      for (int c = 0; c < components; ++c) {
        const uint8_t* p = base + i * stride + size_t(c) * size_t(size);
        double v;
        switch (componentType) {
          case 5120: v = int8_t(p[0]); if (normalized) v = std::max(v / 127.0, -1.0); break;
          case 5121: v = p[0]; if (normalized) v /= 255.0; break;
          case 5122: { int16_t s; std::memcpy(&s, p, 2); v = s; if (normalized) v = std::max(v / 32767.0, -1.0); break; }
          case 5123: { uint16_t s; std::memcpy(&s, p, 2); v = s; if (normalized) v /= 65535.0; break; }
          case 5125: { uint32_t s; std::memcpy(&s, p, 4); v = s; break; }
          default: { float s; std::memcpy(&s, p, 4); v = s; if (!std::isfinite(v)) fail(where + ": not a finite number"); break; }
        }
        out[i * size_t(components) + size_t(c)] = v;
      }
    return out;
  }

  std::vector<double> accessorOf(int index, int wantComponents, const std::string& what) const {
    int components;
    std::vector<double> v = accessor(index, components);
    if (components != wantComponents) fail(what + " has " + std::to_string(components) + " components, expected " + std::to_string(wantComponents));
    return v;
  }
};

// ------------------------------------------------------------------ model parts

GltfPrimitive loadPrimitive(const Loader& L, const JsonValue& p, const std::vector<GltfMaterial>& materials,
                            const std::vector<int>& uvSetOfMaterial, const std::string& where) {
  if (p.has("targets")) L.fail(where + ": morph targets are not supported");
  if (p["extensions"].has("KHR_draco_mesh_compression")) L.fail(where + ": Draco-compressed geometry is not supported");
  const int mode = int(p.numberOr("mode", 4));
  if (mode < 4) L.fail(where + ": points and lines are not supported (triangles only)");
  const JsonValue& attributes = p["attributes"];
  if (!attributes.has("POSITION")) L.fail(where + ": no POSITION attribute");
  GltfPrimitive prim;
  prim.material = p.has("material") ? int(p["material"].number()) : -1;
  if (prim.material >= int(materials.size())) L.fail(where + ": material out of range");
  const std::vector<double> pos = L.accessorOf(int(attributes["POSITION"].number()), 3, where + " POSITION");
  const size_t n = pos.size() / 3;
  prim.positions.resize(n);
  for (size_t i = 0; i < n; ++i) prim.positions[i] = {float(pos[i * 3]), float(pos[i * 3 + 1]), float(pos[i * 3 + 2])};
  auto perVertex = [&](const std::string& name, int components) {
    std::vector<double> v = L.accessorOf(int(attributes[name].number()), components, where + " " + name);
    if (v.size() != n * size_t(components)) L.fail(where + ": " + name + " count differs from POSITION");
    return v;
  };
  if (prim.material >= 0 && materials[size_t(prim.material)].image >= 0) {
    const std::string set = "TEXCOORD_" + std::to_string(uvSetOfMaterial[size_t(prim.material)]);
    if (!attributes.has(set)) L.fail(where + ": textured material but no " + set);
    const std::vector<double> uv = perVertex(set, 2);
    prim.uvs.resize(n);
    for (size_t i = 0; i < n; ++i) prim.uvs[i] = {float(uv[i * 2]), float(uv[i * 2 + 1])};
  }
  if (attributes.has("COLOR_0")) {
    int components;
    const std::vector<double> c = L.accessor(int(attributes["COLOR_0"].number()), components);
    if ((components != 3 && components != 4) || c.size() != n * size_t(components)) L.fail(where + ": bad COLOR_0");
    prim.colours.resize(n);
    for (size_t i = 0; i < n; ++i)
      prim.colours[i] = {float(c[i * components]), float(c[i * components + 1]), float(c[i * components + 2]),
                         components == 4 ? float(c[i * components + 3]) : 1.f};
  }
  if (attributes.has("JOINTS_0") && attributes.has("WEIGHTS_0")) {
    const std::vector<double> j = perVertex("JOINTS_0", 4), w = perVertex("WEIGHTS_0", 4);
    prim.joints.resize(n);
    prim.weights.resize(n);
    for (size_t i = 0; i < n; ++i)
      for (int k = 0; k < 4; ++k) {
        prim.joints[i][size_t(k)] = uint16_t(j[i * 4 + size_t(k)]);
        prim.weights[i][size_t(k)] = float(w[i * 4 + size_t(k)]);
      }
  }
  std::vector<uint32_t> index(n);
  if (p.has("indices")) {
    const std::vector<double> ix = L.accessorOf(int(p["indices"].number()), 1, where + " indices");
    index.resize(ix.size());
    for (size_t i = 0; i < ix.size(); ++i) {
      if (ix[i] >= double(n)) L.fail(where + ": vertex index out of range");
      index[i] = uint32_t(ix[i]);
    }
  } else {
    for (size_t i = 0; i < n; ++i) index[i] = uint32_t(i);
  }
  if (mode == 4) {
    prim.triangles.assign(index.begin(), index.end() - index.size() % 3);
  } else {  // 5 strip, 6 fan
    for (size_t i = 2; i < index.size(); ++i) {
      if (mode == 5) {
        const bool even = i % 2 == 0;
        prim.triangles.insert(prim.triangles.end(), {index[i - 2], even ? index[i - 1] : index[i], even ? index[i] : index[i - 1]});
      } else {
        prim.triangles.insert(prim.triangles.end(), {index[0], index[i - 1], index[i]});
      }
    }
  }
  return prim;
}

GltfChannel::Path pathOf(const Loader& L, const std::string& path, const std::string& where) {
  if (path == "translation") return GltfChannel::Path::Translation;
  if (path == "rotation") return GltfChannel::Path::Rotation;
  if (path == "scale") return GltfChannel::Path::Scale;
  L.fail(where + ": animating '" + path + "' (morph target weights) is not supported");
}

// ------------------------------------------------------------------ maths

Mat4 identity() { return {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1}; }

Mat4 multiply(const Mat4& a, const Mat4& b) {
  Mat4 r{};
  for (int c = 0; c < 4; ++c)
    for (int row = 0; row < 4; ++row) {
      double s = 0;
      for (int k = 0; k < 4; ++k) s += a[size_t(k * 4 + row)] * b[size_t(c * 4 + k)];
      r[size_t(c * 4 + row)] = s;
    }
  return r;
}

Mat4 compose(const Vec3& t, const Quat& q, const Vec3& s) {
  const double x = q[0], y = q[1], z = q[2], w = q[3];
  Mat4 m = {1 - 2 * (y * y + z * z), 2 * (x * y + z * w),     2 * (x * z - y * w),     0,
            2 * (x * y - z * w),     1 - 2 * (x * x + z * z), 2 * (y * z + x * w),     0,
            2 * (x * z + y * w),     2 * (y * z - x * w),     1 - 2 * (x * x + y * y), 0,
            t[0],                    t[1],                    t[2],                    1};
  for (int c = 0; c < 3; ++c)
    for (int row = 0; row < 3; ++row) m[size_t(c * 4 + row)] *= s[size_t(c)];
  return m;
}

std::array<float, 3> transformPoint(const Mat4& m, const std::array<float, 3>& p) {
  std::array<float, 3> r;
  for (int row = 0; row < 3; ++row)
    r[size_t(row)] = float(m[size_t(row)] * p[0] + m[size_t(4 + row)] * p[1] + m[size_t(8 + row)] * p[2] + m[size_t(12 + row)]);
  return r;
}

Quat normalize(Quat q) {
  const double n = std::sqrt(q[0] * q[0] + q[1] * q[1] + q[2] * q[2] + q[3] * q[3]);
  if (n == 0) return {0, 0, 0, 1};
  for (double& v : q) v /= n;
  return q;
}

Quat slerp(Quat a, Quat b, double t) {
  double d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
  if (d < 0) {  // the shorter way round
    for (double& v : b) v = -v;
    d = -d;
  }
  Quat r;
  if (d > 0.9995) {
    for (int i = 0; i < 4; ++i) r[size_t(i)] = a[size_t(i)] + t * (b[size_t(i)] - a[size_t(i)]);
    return normalize(r);
  }
  const double theta = std::acos(d), s = std::sin(theta);
  const double wa = std::sin((1 - t) * theta) / s, wb = std::sin(t * theta) / s;
  for (int i = 0; i < 4; ++i) r[size_t(i)] = wa * a[size_t(i)] + wb * b[size_t(i)];
  return r;
}

/// A channel's value at time t (clamped to its keys).
std::array<double, 4> sampleChannel(const GltfChannel& ch, double t) {
  const size_t width = ch.path == GltfChannel::Path::Rotation ? 4 : 3;
  const bool cubic = ch.interpolation == GltfChannel::Interpolation::CubicSpline;
  const size_t stride = cubic ? width * 3 : width, valueAt = cubic ? width : 0;
  auto key = [&](size_t k, size_t part) { return &ch.values[k * stride + part]; };
  std::array<double, 4> out{0, 0, 0, 1};
  const size_t n = ch.times.size();
  size_t k = 0;
  if (t <= ch.times.front() || n == 1) {
    for (size_t c = 0; c < width; ++c) out[c] = key(0, valueAt)[c];
  } else if (t >= ch.times.back()) {
    for (size_t c = 0; c < width; ++c) out[c] = key(n - 1, valueAt)[c];
  } else {
    k = size_t(std::upper_bound(ch.times.begin(), ch.times.end(), float(t)) - ch.times.begin()) - 1;
    const double t0 = ch.times[k], t1 = ch.times[k + 1], dt = t1 - t0;
    const double u = dt > 0 ? (t - t0) / dt : 0;
    if (ch.interpolation == GltfChannel::Interpolation::Step) {
      for (size_t c = 0; c < width; ++c) out[c] = key(k, 0)[c];
    } else if (cubic) {
      const double u2 = u * u, u3 = u2 * u;
      const double h00 = 2 * u3 - 3 * u2 + 1, h10 = u3 - 2 * u2 + u, h01 = -2 * u3 + 3 * u2, h11 = u3 - u2;
      for (size_t c = 0; c < width; ++c)
        out[c] = h00 * key(k, width)[c] + h10 * dt * key(k, 2 * width)[c] + h01 * key(k + 1, width)[c] + h11 * dt * key(k + 1, 0)[c];
    } else if (width == 4) {
      const Quat a = {key(k, 0)[0], key(k, 0)[1], key(k, 0)[2], key(k, 0)[3]};
      const Quat b = {key(k + 1, 0)[0], key(k + 1, 0)[1], key(k + 1, 0)[2], key(k + 1, 0)[3]};
      const Quat q = slerp(a, b, u);
      for (size_t c = 0; c < 4; ++c) out[c] = q[c];
    } else {
      for (size_t c = 0; c < width; ++c) out[c] = key(k, 0)[c] + u * (key(k + 1, 0)[c] - key(k, 0)[c]);
    }
  }
  if (width == 4) {
    const Quat q = normalize({out[0], out[1], out[2], out[3]});
    return {q[0], q[1], q[2], q[3]};
  }
  return out;
}

}  // namespace

GltfModel loadGltf(const std::string& path) {
  Loader L;
  L.open(path);
  const JsonValue& doc = L.doc;
  GltfModel model;
  model.path = path;
  try {
    // Images (PNG / JPEG, embedded in a buffer view or as files / data URIs).
    for (size_t i = 0; i < doc["images"].size(); ++i) {
      const JsonValue& im = doc["images"].at(i);
      const std::string what = path + ": image " + std::to_string(i);
      std::vector<uint8_t> bytes;
      if (im.has("bufferView")) {
        const JsonValue& view = doc["bufferViews"].at(size_t(im["bufferView"].number()));
        const size_t buffer = size_t(view["buffer"].number()), offset = size_t(view.numberOr("byteOffset", 0)),
                     length = size_t(view["byteLength"].number());
        if (buffer >= L.buffers.size() || offset + length > L.buffers[buffer].size()) L.fail("image " + std::to_string(i) + " runs past its buffer");
        bytes.assign(L.buffers[buffer].begin() + long(offset), L.buffers[buffer].begin() + long(offset + length));
      } else if (im.has("uri")) {
        bytes = L.resolveUri(im["uri"].string());
      } else {
        L.fail("image " + std::to_string(i) + " has no data");
      }
      model.images.push_back(decodeImage(bytes.data(), bytes.size(), what));
    }
    // Materials: base colour factor and texture (with its sampler's wrap modes).
    std::vector<int> uvSet;
    for (size_t i = 0; i < doc["materials"].size(); ++i) {
      const JsonValue& pbr = doc["materials"].at(i)["pbrMetallicRoughness"];
      GltfMaterial m;
      if (pbr.has("baseColorFactor"))
        for (size_t c = 0; c < 4; ++c) m.baseColorFactor[c] = float(pbr["baseColorFactor"].at(c).number());
      int set = 0;
      if (pbr.has("baseColorTexture")) {
        const JsonValue& ref = pbr["baseColorTexture"];
        if (ref["extensions"].has("KHR_texture_transform")) L.fail("material " + std::to_string(i) + ": texture transforms are not supported");
        const JsonValue& tex = doc["textures"].at(size_t(ref["index"].number()));
        if (!tex.has("source")) L.fail("texture " + std::to_string(size_t(ref["index"].number())) + " has no PNG/JPEG source (KTX2/Basis textures are not supported)");
        m.image = int(tex["source"].number());
        if (m.image >= int(model.images.size())) L.fail("texture source out of range");
        if (tex.has("sampler")) {
          const JsonValue& s = doc["samplers"].at(size_t(tex["sampler"].number()));
          m.wrapS = int(s.numberOr("wrapS", 10497));
          m.wrapT = int(s.numberOr("wrapT", 10497));
        }
        set = int(ref.numberOr("texCoord", 0));
      }
      model.materials.push_back(m);
      uvSet.push_back(set);
    }
    for (size_t i = 0; i < doc["meshes"].size(); ++i) {
      std::vector<GltfPrimitive> prims;
      const JsonValue& ps = doc["meshes"].at(i)["primitives"];
      for (size_t k = 0; k < ps.size(); ++k)
        prims.push_back(loadPrimitive(L, ps.at(k), model.materials, uvSet, "mesh " + std::to_string(i) + " primitive " + std::to_string(k)));
      model.meshes.push_back(std::move(prims));
    }
    const size_t nodeCount = doc["nodes"].size();
    for (size_t i = 0; i < nodeCount; ++i) {
      const JsonValue& n = doc["nodes"].at(i);
      GltfNode node;
      for (size_t c = 0; c < n["children"].size(); ++c) {
        const int child = int(n["children"].at(c).number());
        if (child < 0 || size_t(child) >= nodeCount) L.fail("node " + std::to_string(i) + ": child out of range");
        node.children.push_back(child);
      }
      if (n.has("matrix")) {
        node.hasMatrix = true;
        for (size_t c = 0; c < 16; ++c) node.matrix[c] = n["matrix"].at(c).number();
      }
      for (size_t c = 0; c < n["translation"].size() && c < 3; ++c) node.translation[c] = n["translation"].at(c).number();
      for (size_t c = 0; c < n["rotation"].size() && c < 4; ++c) node.rotation[c] = n["rotation"].at(c).number();
      for (size_t c = 0; c < n["scale"].size() && c < 3; ++c) node.scale[c] = n["scale"].at(c).number();
      node.mesh = n.has("mesh") ? int(n["mesh"].number()) : -1;
      node.skin = n.has("skin") ? int(n["skin"].number()) : -1;
      if (node.mesh >= int(model.meshes.size())) L.fail("node " + std::to_string(i) + ": mesh out of range");
      if (node.skin >= int(doc["skins"].size())) L.fail("node " + std::to_string(i) + ": skin out of range");
      model.nodes.push_back(node);
    }
    for (size_t i = 0; i < doc["skins"].size(); ++i) {
      const JsonValue& s = doc["skins"].at(i);
      GltfSkin skin;
      for (size_t j = 0; j < s["joints"].size(); ++j) {
        const int joint = int(s["joints"].at(j).number());
        if (joint < 0 || size_t(joint) >= nodeCount) L.fail("skin " + std::to_string(i) + ": joint out of range");
        skin.joints.push_back(joint);
      }
      skin.inverseBindMatrices.assign(skin.joints.size(), identity());
      if (s.has("inverseBindMatrices")) {
        const std::vector<double> m = L.accessorOf(int(s["inverseBindMatrices"].number()), 16, "skin " + std::to_string(i));
        if (m.size() < skin.joints.size() * 16) L.fail("skin " + std::to_string(i) + ": too few inverse bind matrices");
        for (size_t j = 0; j < skin.joints.size(); ++j) std::copy(m.begin() + long(j * 16), m.begin() + long(j * 16 + 16), skin.inverseBindMatrices[j].begin());
      }
      model.skins.push_back(std::move(skin));
    }
    for (size_t i = 0; i < doc["animations"].size(); ++i) {
      const JsonValue& a = doc["animations"].at(i);
      GltfAnimation anim;
      anim.name = a["name"].isString() ? a["name"].string() : "animation " + std::to_string(i);
      anim.start = 1e300;
      anim.end = -1e300;
      for (size_t c = 0; c < a["channels"].size(); ++c) {
        const JsonValue& ch = a["channels"].at(c);
        const std::string where = "animation " + std::to_string(i) + " channel " + std::to_string(c);
        if (!ch["target"].has("node")) continue;  // no target: to be ignored, per the specification
        GltfChannel channel;
        channel.node = int(ch["target"]["node"].number());
        if (channel.node < 0 || size_t(channel.node) >= nodeCount) L.fail(where + ": node out of range");
        channel.path = pathOf(L, ch["target"]["path"].string(), where);
        const JsonValue& sampler = a["samplers"].at(size_t(ch["sampler"].number()));
        const std::string interpolation = sampler["interpolation"].isString() ? sampler["interpolation"].string() : "LINEAR";
        if (interpolation == "STEP") channel.interpolation = GltfChannel::Interpolation::Step;
        else if (interpolation == "CUBICSPLINE") channel.interpolation = GltfChannel::Interpolation::CubicSpline;
        else if (interpolation != "LINEAR") L.fail(where + ": interpolation " + interpolation + " is not supported");
        const std::vector<double> times = L.accessorOf(int(sampler["input"].number()), 1, where + " input");
        const int width = channel.path == GltfChannel::Path::Rotation ? 4 : 3;
        const std::vector<double> values = L.accessorOf(int(sampler["output"].number()), width, where + " output");
        const size_t perKey = size_t(width) * (channel.interpolation == GltfChannel::Interpolation::CubicSpline ? 3 : 1);
        if (times.empty() || values.size() != times.size() * perKey) L.fail(where + ": key count mismatch");
        for (size_t k = 1; k < times.size(); ++k)
          if (times[k] < times[k - 1]) L.fail(where + ": key times are not increasing");
        channel.times.assign(times.begin(), times.end());
        channel.values.assign(values.begin(), values.end());
        anim.start = std::min(anim.start, times.front());
        anim.end = std::max(anim.end, times.back());
        anim.channels.push_back(std::move(channel));
      }
      if (anim.channels.empty()) anim.start = anim.end = 0;
      model.animations.push_back(std::move(anim));
    }
    const size_t scene = size_t(doc.numberOr("scene", 0));
    if (doc["scenes"].size() > scene) {
      for (size_t i = 0; i < doc["scenes"].at(scene)["nodes"].size(); ++i) {
        const int root = int(doc["scenes"].at(scene)["nodes"].at(i).number());
        if (root < 0 || size_t(root) >= nodeCount) L.fail("scene root out of range");
        model.sceneRoots.push_back(root);
      }
    } else {  // no scene: every node that is nobody's child
      std::vector<bool> isChild(nodeCount, false);
      for (const auto& n : model.nodes)
        for (int c : n.children) isChild[size_t(c)] = true;
      for (size_t i = 0; i < nodeCount; ++i)
        if (!isChild[i]) model.sceneRoots.push_back(int(i));
    }
  } catch (const std::runtime_error& e) {
    const std::string message = e.what();
    if (message.rfind(path, 0) == 0) throw;
    throw std::runtime_error(path + ": " + message);  // JSON type errors: name the file
  }
  return model;
}

std::vector<PosedPrimitive> poseModel(const GltfModel& model, int animation, double seconds) {
  // Local transforms, with the animation's channels applied.
  std::vector<Vec3> translation(model.nodes.size()), scale(model.nodes.size());
  std::vector<Quat> rotation(model.nodes.size());
  for (size_t i = 0; i < model.nodes.size(); ++i) {
    translation[i] = model.nodes[i].translation;
    rotation[i] = model.nodes[i].rotation;
    scale[i] = model.nodes[i].scale;
  }
  std::vector<bool> animated(model.nodes.size(), false);
  if (animation >= 0 && size_t(animation) < model.animations.size()) {
    const GltfAnimation& a = model.animations[size_t(animation)];
    const double length = a.end - a.start;
    const double t = length > 0 ? a.start + std::fmod(std::max(seconds, 0.0), length) : a.start;
    for (const GltfChannel& ch : a.channels) {
      const std::array<double, 4> v = sampleChannel(ch, t);
      const size_t n = size_t(ch.node);
      animated[n] = true;
      if (ch.path == GltfChannel::Path::Translation) translation[n] = {v[0], v[1], v[2]};
      else if (ch.path == GltfChannel::Path::Rotation) rotation[n] = {v[0], v[1], v[2], v[3]};
      else scale[n] = {v[0], v[1], v[2]};
    }
  }
  // World transforms, walking down from the scene roots (a node reached twice keeps the first;
  // the depth guard stops cyclic hierarchies in malformed files).
  std::vector<Mat4> world(model.nodes.size(), identity());
  std::vector<bool> reached(model.nodes.size(), false);
  std::vector<int> instances;  // nodes with a mesh, in traversal order
  std::function<void(int, const Mat4&, int)> visit = [&](int n, const Mat4& parent, int depth) {
    if (reached[size_t(n)] || depth > 1000) return;
    reached[size_t(n)] = true;
    const GltfNode& node = model.nodes[size_t(n)];
    const Mat4 local = node.hasMatrix && !animated[size_t(n)] ? node.matrix : compose(translation[size_t(n)], rotation[size_t(n)], scale[size_t(n)]);
    world[size_t(n)] = multiply(parent, local);
    if (node.mesh >= 0) instances.push_back(n);
    for (int c : node.children) visit(c, world[size_t(n)], depth + 1);
  };
  for (int root : model.sceneRoots) visit(root, identity(), 0);

  std::vector<PosedPrimitive> out;
  for (int n : instances) {
    const GltfNode& node = model.nodes[size_t(n)];
    // Skinned meshes ignore their node's transform: the joints place them (glTF 2.0 §3.7.3).
    std::vector<Mat4> jointMatrices;
    if (node.skin >= 0) {
      const GltfSkin& skin = model.skins[size_t(node.skin)];
      for (size_t j = 0; j < skin.joints.size(); ++j)
        jointMatrices.push_back(multiply(world[size_t(skin.joints[j])], skin.inverseBindMatrices[j]));
    }
    for (const GltfPrimitive& prim : model.meshes[size_t(node.mesh)]) {
      PosedPrimitive posed;
      posed.primitive = &prim;
      posed.world.resize(prim.positions.size());
      const bool skinned = !jointMatrices.empty() && !prim.weights.empty();
      for (size_t v = 0; v < prim.positions.size(); ++v) {
        if (!skinned) {
          posed.world[v] = transformPoint(world[size_t(n)], prim.positions[v]);
          continue;
        }
        std::array<double, 3> sum{0, 0, 0};
        double total = 0;
        for (int k = 0; k < 4; ++k) {
          const float w = prim.weights[v][size_t(k)];
          const size_t j = prim.joints[v][size_t(k)];
          if (w == 0 || j >= jointMatrices.size()) continue;
          const std::array<float, 3> p = transformPoint(jointMatrices[j], prim.positions[v]);
          for (int c = 0; c < 3; ++c) sum[size_t(c)] += w * p[size_t(c)];
          total += w;
        }
        if (total <= 0) {
          posed.world[v] = transformPoint(world[size_t(n)], prim.positions[v]);
          continue;
        }
        posed.world[v] = {float(sum[0] / total), float(sum[1] / total), float(sum[2] / total)};
      }
      out.push_back(std::move(posed));
    }
  }
  return out;
}

}  // namespace holoquic
