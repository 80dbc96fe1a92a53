// Reading a glTF 2.0 file (.glb, or .gltf with its files) into tinygltf's model of it, ready for
// gltf.cpp to convert: the container split, the document checked for what the packager cannot
// honour before anything large is read, and compressed buffer views decoded in place.
//
// tinygltf (Debian's libtinygltf) parses the document, resolves buffers, data URIs and files, and
// hands us every image's bytes. Around it we do what its version 2.7 does not: GLB buffers other
// than the BIN chunk and meshopt "fallback" buffers (which carry no data: the decoder fills them)
// are given their storage, and EXT_meshopt_compression / KHR_meshopt_compression views are
// decoded into it with meshoptimizer. Draco primitives are decoded later, per primitive
// (gltf_draco.h), because their data replaces accessors rather than buffer views.
#pragma once

#include <string>
#include <tiny_gltf.h>

namespace holoquic {

/// The extensions a model may list in `extensionsRequired`; any other required extension is
/// refused with its name.
bool isSupportedGltfExtension(const std::string& name);

/// Loads `path` with every meshopt-compressed buffer view decoded; images keep their encoded
/// bytes (Image::image, as_is). Throws std::runtime_error "path: what" for unreadable, malformed
/// or unsupported files (the feature named).
tinygltf::Model readGltfDocument(const std::string& path);

}  // namespace holoquic
