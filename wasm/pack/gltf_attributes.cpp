#include "gltf_attributes.h"

#include <draco/compression/decode.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <functional>
#include <stdexcept>

namespace holoquic {
namespace {

[[noreturn]] void fail(const std::string& what) { throw std::runtime_error(what); }

/// Bytes per component of a glTF component type, or 0 when we do not read it.
size_t componentSize(int componentType) {
  switch (componentType) {
    case TINYGLTF_COMPONENT_TYPE_BYTE: case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return 1;
    case TINYGLTF_COMPONENT_TYPE_SHORT: case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: return 2;
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: case TINYGLTF_COMPONENT_TYPE_FLOAT: return 4;
    default: return 0;
  }
}

int componentsOf(int type) {
  switch (type) {
    case TINYGLTF_TYPE_SCALAR: return 1;
    case TINYGLTF_TYPE_VEC2: return 2;
    case TINYGLTF_TYPE_VEC3: return 3;
    case TINYGLTF_TYPE_VEC4: return 4;
    case TINYGLTF_TYPE_MAT4: return 16;
    default: return 0;  // MAT2 / MAT3 (column padding) are never vertex or animation data we use
  }
}

/// A normalized integer as the glTF specification maps it: unsigned to [0, 1], signed to [−1, 1].
double normalize(double v, int componentType) {
  switch (componentType) {
    case TINYGLTF_COMPONENT_TYPE_BYTE: return std::max(v / 127.0, -1.0);
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return v / 255.0;
    case TINYGLTF_COMPONENT_TYPE_SHORT: return std::max(v / 32767.0, -1.0);
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: return v / 65535.0;
    default: return v;
  }
}

double readComponent(const uint8_t* p, int componentType) {
  switch (componentType) {
    case TINYGLTF_COMPONENT_TYPE_BYTE: return int8_t(p[0]);
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_BYTE: return p[0];
    case TINYGLTF_COMPONENT_TYPE_SHORT: { int16_t s; std::memcpy(&s, p, 2); return s; }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_SHORT: { uint16_t s; std::memcpy(&s, p, 2); return s; }
    case TINYGLTF_COMPONENT_TYPE_UNSIGNED_INT: { uint32_t s; std::memcpy(&s, p, 4); return s; }
    default: { float s; std::memcpy(&s, p, 4); return s; }
  }
}

/// An accessor without a buffer view holds at most this many elements (16 M, far beyond a mesh's).
constexpr size_t kMaxElementsWithoutData = size_t(1) << 24;

/// Hands `take` (if given) each of `count` elements (`components` × `componentType`) of buffer view
/// `viewIndex` from `offset` on, after checking they lie inside the view and its buffer.
void readElements(const tinygltf::Model& model, int viewIndex, size_t offset, size_t count, int components, int componentType,
                  const std::string& where, const std::function<void(size_t, const uint8_t*)>& take) {
  if (viewIndex < 0 || size_t(viewIndex) >= model.bufferViews.size()) fail(where + ": buffer view out of range");
  const tinygltf::BufferView& view = model.bufferViews[size_t(viewIndex)];
  if (view.buffer < 0 || size_t(view.buffer) >= model.buffers.size()) fail(where + ": buffer out of range");
  const std::vector<uint8_t>& buffer = model.buffers[size_t(view.buffer)].data;
  if (view.byteOffset + view.byteLength > buffer.size()) fail(where + ": buffer view runs past its buffer");
  const size_t element = componentSize(componentType) * size_t(components);
  const size_t stride = view.byteStride ? view.byteStride : element;
  if (count && (count > view.byteLength || offset + stride * (count - 1) + element > view.byteLength)) fail(where + ": data runs past its buffer view");
  if (!take) return;  // only checked
  const uint8_t* base = buffer.data() + view.byteOffset + offset;
  for (size_t i = 0; i < count; ++i) take(i, base + i * stride);
}

}  // namespace

AttributeValues readAccessor(const tinygltf::Model& model, int index) {
  if (index < 0 || size_t(index) >= model.accessors.size()) fail("accessor " + std::to_string(index) + " out of range");
  const tinygltf::Accessor& a = model.accessors[size_t(index)];
  const std::string where = "accessor " + std::to_string(index);
  AttributeValues out;
  out.components = componentsOf(a.type);
  if (!out.components) fail(where + ": type " + std::to_string(a.type) + " is not supported");
  const size_t size = componentSize(a.componentType);
  if (!size) fail(where + ": component type " + std::to_string(a.componentType) + " is not supported");
  // Memory follows the data the file holds: a buffer view must hold every element before any is
  // allocated, and an accessor without one (zeros, or sparse values over zeros) is capped.
  if (a.bufferView >= 0) readElements(model, a.bufferView, a.byteOffset, a.count, out.components, a.componentType, where, {});
  else if (a.count > kMaxElementsWithoutData) fail(where + ": " + std::to_string(a.count) + " elements but no buffer view");
  const size_t components = size_t(out.components);
  out.values.assign(a.count * components, 0.0);  // no buffer view: zeros, per the specification
  auto store = [&](size_t i, const uint8_t* p) {
    for (size_t c = 0; c < components; ++c) {
      double v = readComponent(p + c * size, a.componentType);
      if (a.componentType == TINYGLTF_COMPONENT_TYPE_FLOAT && !std::isfinite(v)) fail(where + ": not a finite number");
      out.values[i * components + c] = a.normalized ? normalize(v, a.componentType) : v;
    }
  };
  if (a.bufferView >= 0) readElements(model, a.bufferView, a.byteOffset, a.count, out.components, a.componentType, where, store);
  if (a.sparse.isSparse) {  // replace the listed elements
    const size_t n = size_t(std::max(0, a.sparse.count));
    if (n > a.count) fail(where + ": more sparse values than elements");
    std::vector<size_t> targets(n);
    readElements(model, a.sparse.indices.bufferView, size_t(std::max(0, a.sparse.indices.byteOffset)), n, 1,
                 a.sparse.indices.componentType, where + " sparse indices", [&](size_t i, const uint8_t* p) {
                   const double t = readComponent(p, a.sparse.indices.componentType);
                   if (t < 0 || t >= double(a.count)) fail(where + ": sparse index out of range");
                   targets[i] = size_t(t);
                 });
    readElements(model, a.sparse.values.bufferView, size_t(std::max(0, a.sparse.values.byteOffset)), n, out.components,
                 a.componentType, where + " sparse values", [&](size_t i, const uint8_t* p) { store(targets[i], p); });
  }
  return out;
}

PrimitiveData::PrimitiveData(const tinygltf::Model& model, const tinygltf::Primitive& primitive, const std::string& where)
    : model_(model), primitive_(primitive), where_(where) {
  const auto ext = primitive.extensions.find("KHR_draco_mesh_compression");
  if (ext == primitive.extensions.end()) return;
  const tinygltf::Value& d = ext->second;
  const int viewIndex = d.Has("bufferView") && d.Get("bufferView").IsNumber() ? d.Get("bufferView").GetNumberAsInt() : -1;
  if (viewIndex < 0 || size_t(viewIndex) >= model.bufferViews.size()) fail(where + ": Draco buffer view out of range");
  const tinygltf::BufferView& view = model.bufferViews[size_t(viewIndex)];
  if (view.buffer < 0 || size_t(view.buffer) >= model.buffers.size() ||
      view.byteOffset + view.byteLength > model.buffers[size_t(view.buffer)].data.size())
    fail(where + ": Draco data runs past its buffer");
  draco::DecoderBuffer bytes;
  bytes.Init(reinterpret_cast<const char*>(model.buffers[size_t(view.buffer)].data.data() + view.byteOffset), view.byteLength);
  draco::Decoder decoder;
  auto decoded = decoder.DecodeMeshFromBuffer(&bytes);
  if (!decoded.ok()) fail(where + ": corrupt KHR_draco_mesh_compression data (" + decoded.status().error_msg_string() + ")");
  const std::unique_ptr<draco::Mesh> mesh = std::move(decoded).value();
  auto result = std::make_shared<Draco>();
  const size_t points = mesh->num_points();
  for (draco::FaceIndex f(0); f < mesh->num_faces(); ++f)
    for (int k = 0; k < 3; ++k) result->triangles.push_back(mesh->face(f)[k].value());
  const tinygltf::Value& ids = d.Has("attributes") ? d.Get("attributes") : tinygltf::Value();
  for (const std::string& name : ids.Keys()) {
    const draco::PointAttribute* attribute =
        ids.Get(name).IsNumber() ? mesh->GetAttributeByUniqueId(uint32_t(ids.Get(name).GetNumberAsInt())) : nullptr;
    if (!attribute) fail(where + ": the Draco stream has no attribute " + name);
    const auto accessor = primitive.attributes.find(name);
    const tinygltf::Accessor* a =
        accessor != primitive.attributes.end() && accessor->second >= 0 && size_t(accessor->second) < model.accessors.size()
            ? &model.accessors[size_t(accessor->second)] : nullptr;
    // The decoded values are the accessor's data: normalize integers the accessor says are
    // normalized, unless Draco already did.
    const bool normalizeHere = a && a->normalized && !attribute->normalized();
    AttributeValues values;
    values.components = attribute->num_components();
    values.values.resize(points * size_t(values.components));
    std::vector<double> one(size_t(values.components));
    for (draco::PointIndex p(0); p < uint32_t(points); ++p) {
      if (!attribute->ConvertValue<double>(attribute->mapped_index(p), int8_t(values.components), one.data()))
        fail(where + ": Draco attribute " + name + " has an unsupported data type");
      for (size_t c = 0; c < one.size(); ++c)
        values.values[p.value() * one.size() + c] = normalizeHere ? normalize(one[c], a->componentType) : one[c];
    }
    result->attributes[name] = std::move(values);
  }
  draco_ = std::move(result);
}

bool PrimitiveData::has(const std::string& attribute) const {
  if (draco_ && draco_->attributes.count(attribute)) return true;
  return primitive_.attributes.count(attribute) > 0;
}

AttributeValues PrimitiveData::attribute(const std::string& attribute) const {
  if (draco_) {
    const auto it = draco_->attributes.find(attribute);
    if (it != draco_->attributes.end()) return it->second;
  }
  const auto it = primitive_.attributes.find(attribute);
  if (it == primitive_.attributes.end()) fail(where_ + ": no " + attribute + " attribute");
  try {
    return readAccessor(model_, it->second);
  } catch (const std::runtime_error& e) {
    fail(where_ + " " + attribute + ": " + e.what());
  }
}

bool PrimitiveData::hasIndices() const { return draco_ || primitive_.indices >= 0; }

std::vector<uint32_t> PrimitiveData::indices() const {
  if (draco_) return draco_->triangles;
  const AttributeValues ix = readAccessor(model_, primitive_.indices);
  if (ix.components != 1) fail(where_ + ": indices are not scalars");
  std::vector<uint32_t> out(ix.values.size());
  for (size_t i = 0; i < out.size(); ++i) out[i] = uint32_t(ix.values[i]);
  return out;
}

int PrimitiveData::mode() const { return draco_ ? TINYGLTF_MODE_TRIANGLES : primitive_.mode < 0 ? TINYGLTF_MODE_TRIANGLES : primitive_.mode; }

}  // namespace holoquic
