// Where a glTF primitive's vertex data comes from, as plain numbers: accessors (strided, sparse,
// every component type, normalized integers mapped to [0, 1] / [−1, 1] — which is also all that
// KHR_mesh_quantization needs) or, for a KHR_draco_mesh_compression primitive, the Draco stream
// decoded with Debian's libdraco (the accessors then only describe the decoded data's type).
#pragma once

#include <map>
#include <memory>
#include <string>
#include <tiny_gltf.h>
#include <vector>

namespace holoquic {

struct AttributeValues {
  std::vector<double> values;  // count × components
  int components = 0;
};

/// Accessor `index` of `model`; throws std::runtime_error naming the accessor and the problem.
AttributeValues readAccessor(const tinygltf::Model& model, int index);

/// One primitive's attributes and vertex indices, from accessors or its Draco stream.
class PrimitiveData {
 public:
  /// Decodes the Draco stream if the primitive has one; `where` names the primitive in errors.
  PrimitiveData(const tinygltf::Model& model, const tinygltf::Primitive& primitive, const std::string& where);

  bool has(const std::string& attribute) const;
  /// The attribute's values; throws when absent or malformed.
  AttributeValues attribute(const std::string& attribute) const;
  /// Whether the primitive is indexed, and its vertex indices.
  bool hasIndices() const;
  std::vector<uint32_t> indices() const;
  /// The primitive's topology (glTF mode: 4 triangles, 5 strip, 6 fan; a Draco stream decodes to
  /// a triangle list).
  int mode() const;
  bool isDraco() const { return draco_ != nullptr; }

 private:
  struct Draco {
    std::map<std::string, AttributeValues> attributes;
    std::vector<uint32_t> triangles;
  };
  const tinygltf::Model& model_;
  const tinygltf::Primitive& primitive_;
  std::string where_;
  std::shared_ptr<const Draco> draco_;
};

}  // namespace holoquic
