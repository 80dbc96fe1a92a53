#include "vpcc/ply.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace vpcc {
namespace {

enum class Type { I8, U8, I16, U16, I32, U32, F32, F64 };

Type typeOf(const std::string& name, const std::string& file) {
  if (name == "char" || name == "int8") return Type::I8;
  if (name == "uchar" || name == "uint8") return Type::U8;
  if (name == "short" || name == "int16") return Type::I16;
  if (name == "ushort" || name == "uint16") return Type::U16;
  if (name == "int" || name == "int32") return Type::I32;
  if (name == "uint" || name == "uint32") return Type::U32;
  if (name == "float" || name == "float32") return Type::F32;
  if (name == "double" || name == "float64") return Type::F64;
  throw std::runtime_error(file + ": unknown PLY property type '" + name + "'");
}
size_t sizeOf(Type t) {
  switch (t) {
    case Type::I8: case Type::U8: return 1;
    case Type::I16: case Type::U16: return 2;
    case Type::I32: case Type::U32: case Type::F32: return 4;
    case Type::F64: return 8;
  }
  return 1;
}
double readValue(const uint8_t* p, Type t, bool bigEndian) {
  uint8_t b[8];
  const size_t n = sizeOf(t);
  for (size_t i = 0; i < n; ++i) b[i] = bigEndian ? p[n - 1 - i] : p[i];
  switch (t) {
    case Type::I8: return int8_t(b[0]);
    case Type::U8: return b[0];
    case Type::I16: { int16_t v; std::memcpy(&v, b, 2); return v; }
    case Type::U16: { uint16_t v; std::memcpy(&v, b, 2); return v; }
    case Type::I32: { int32_t v; std::memcpy(&v, b, 4); return v; }
    case Type::U32: { uint32_t v; std::memcpy(&v, b, 4); return v; }
    case Type::F32: { float v; std::memcpy(&v, b, 4); return v; }
    case Type::F64: { double v; std::memcpy(&v, b, 8); return v; }
  }
  return 0;
}

/// A colour sample as 0 … 255: 16-bit colours are scaled down, float ones are 0 … 1.
uint8_t colourByte(double value, Type t) {
  double v = value;
  if (t == Type::U16 || t == Type::I16) v = value / 257;
  else if (t == Type::F32 || t == Type::F64) v = value * 255;
  return uint8_t(std::lround(std::min(255.0, std::max(0.0, v))));
}

}  // namespace

PlyCloud readPly(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw std::runtime_error(path + ": cannot open");
  std::string line;
  std::getline(in, line);
  if (line.rfind("ply", 0) != 0) throw std::runtime_error(path + ": not a PLY file");
  enum { Ascii, Little, Big } format = Ascii;
  size_t vertices = 0;
  bool inVertex = false, vertexSeen = false, formatSeen = false;
  struct Prop { std::string name; Type type; };
  std::vector<Prop> props;
  while (std::getline(in, line)) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::istringstream ls(line);
    std::string word;
    ls >> word;
    if (word == "format") {
      std::string f;
      ls >> f;
      formatSeen = true;
      if (f == "ascii") format = Ascii;
      else if (f == "binary_little_endian") format = Little;
      else if (f == "binary_big_endian") format = Big;
      else throw std::runtime_error(path + ": unknown PLY format " + f);
    } else if (word == "element") {
      std::string name;
      size_t count = 0;
      ls >> name >> count;
      // Elements after the vertices (faces) are stored after them and never read; elements
      // before them would have to be skipped in the data, which is not supported.
      if (!vertexSeen && name != "vertex" && count > 0)
        throw std::runtime_error(path + ": elements before 'vertex' are not supported");
      inVertex = name == "vertex";
      if (inVertex) vertices = count, vertexSeen = true;
    } else if (word == "property" && inVertex) {
      std::string type, name;
      ls >> type;
      if (type == "list") throw std::runtime_error(path + ": list properties in 'vertex' are not supported");
      ls >> name;
      props.push_back({name, typeOf(type, path)});
    } else if (word == "end_header") {
      break;
    }
  }
  if (!formatSeen) throw std::runtime_error(path + ": PLY header without format");
  int ix = -1, iy = -1, iz = -1, ir = -1, ig = -1, ib = -1, inx = -1, iny = -1, inz = -1;
  for (size_t i = 0; i < props.size(); ++i) {
    const std::string& n = props[i].name;
    if (n == "x") ix = int(i);
    if (n == "y") iy = int(i);
    if (n == "z") iz = int(i);
    if (n == "red" || n == "r" || n == "diffuse_red") ir = int(i);
    if (n == "green" || n == "g" || n == "diffuse_green") ig = int(i);
    if (n == "blue" || n == "b" || n == "diffuse_blue") ib = int(i);
    if (n == "nx") inx = int(i);
    if (n == "ny") iny = int(i);
    if (n == "nz") inz = int(i);
  }
  if (ix < 0 || iy < 0 || iz < 0) throw std::runtime_error(path + ": vertex element lacks x, y or z");
  if (vertices > (size_t(1) << 28)) throw std::runtime_error(path + ": implausible vertex count");
  PlyCloud cloud;
  cloud.positions.resize(vertices * 3);
  cloud.colors.assign(vertices * 3, 128);
  const bool hasColor = ir >= 0 && ig >= 0 && ib >= 0;
  const bool hasNormal = inx >= 0 && iny >= 0 && inz >= 0;
  if (hasNormal) cloud.normals.resize(vertices * 3);
  std::vector<double> values(props.size());
  if (format == Ascii) {
    for (size_t v = 0; v < vertices; ++v) {
      for (double& x : values)
        if (!(in >> x)) throw std::runtime_error(path + ": truncated at vertex " + std::to_string(v));
      cloud.positions[v * 3] = values[ix], cloud.positions[v * 3 + 1] = values[iy], cloud.positions[v * 3 + 2] = values[iz];
      if (hasNormal)
        for (int c = 0; c < 3; ++c) cloud.normals[v * 3 + c] = float(values[c == 0 ? inx : c == 1 ? iny : inz]);
      if (hasColor)
        for (int c = 0; c < 3; ++c) {
          const int i = c == 0 ? ir : c == 1 ? ig : ib;
          cloud.colors[v * 3 + c] = colourByte(values[i], props[i].type);
        }
    }
  } else {
    size_t stride = 0;
    std::vector<size_t> offset;
    for (const Prop& p : props) offset.push_back(stride), stride += sizeOf(p.type);
    std::vector<uint8_t> data(vertices * stride);
    in.read(reinterpret_cast<char*>(data.data()), std::streamsize(data.size()));
    if (size_t(in.gcount()) != data.size())
      throw std::runtime_error(path + ": truncated at vertex " + std::to_string(size_t(in.gcount()) / std::max<size_t>(stride, 1)));
    const bool big = format == Big;
    for (size_t v = 0; v < vertices; ++v) {
      const uint8_t* row = data.data() + v * stride;
      for (int c = 0; c < 3; ++c) {
        const int i = c == 0 ? ix : c == 1 ? iy : iz;
        cloud.positions[v * 3 + c] = readValue(row + offset[i], props[i].type, big);
      }
      if (hasNormal)
        for (int c = 0; c < 3; ++c) {
          const int i = c == 0 ? inx : c == 1 ? iny : inz;
          cloud.normals[v * 3 + c] = float(readValue(row + offset[i], props[i].type, big));
        }
      if (hasColor)
        for (int c = 0; c < 3; ++c) {
          const int i = c == 0 ? ir : c == 1 ? ig : ib;
          cloud.colors[v * 3 + c] = colourByte(readValue(row + offset[i], props[i].type, big), props[i].type);
        }
    }
  }
  for (double x : cloud.positions)
    if (!std::isfinite(x)) throw std::runtime_error(path + ": non-finite coordinate");
  return cloud;
}

InputFrame voxelize(const PlyCloud& cloud, unsigned bits, const std::string& what) {
  InputFrame f;
  f.positions.resize(cloud.positions.size());
  f.colors = cloud.colors;
  const double limit = double(1u << bits);
  for (size_t i = 0; i < cloud.positions.size(); ++i) {
    const double r = std::round(cloud.positions[i]);
    if (std::fabs(r - cloud.positions[i]) > 0.01)
      throw std::invalid_argument(what + ": point " + std::to_string(i / 3) + " coordinate " + std::to_string(cloud.positions[i]) +
                                  " is not on the voxel grid (float coordinates need fitting: --fit)");
    if (r < 0 || r >= limit)
      throw std::invalid_argument(what + ": point " + std::to_string(i / 3) + " coordinate " + std::to_string(cloud.positions[i]) +
                                  " is outside the " + std::to_string(bits) + "-bit grid");
    f.positions[i] = uint16_t(r);
  }
  return f;
}

void growBounds(const PlyCloud& cloud, std::array<double, 6>& box) {
  for (size_t i = 0; i < cloud.size(); ++i)
    for (int c = 0; c < 3; ++c) {
      box[c] = std::min(box[c], cloud.positions[i * 3 + c]);
      box[c + 3] = std::max(box[c + 3], cloud.positions[i * 3 + c]);
    }
}

GridFit fitToGrid(const std::array<double, 6>& box, unsigned bits) {
  GridFit fit;
  const double extent = std::max({box[3] - box[0], box[4] - box[1], box[5] - box[2]});
  for (int c = 0; c < 3; ++c) fit.origin[c] = box[c];
  // A single point (no extent) sits at voxel 0 at one voxel per unit.
  fit.voxelsPerUnit = extent > 0 ? double((1u << bits) - 1) / extent : 1;
  return fit;
}

InputFrame voxelize(const PlyCloud& cloud, unsigned bits, const GridFit& fit, const std::string& what) {
  const int64_t limit = int64_t(1) << bits;
  // Voxel key (x, y, z packed) and point index, sorted so the points of one voxel are adjacent.
  std::vector<std::pair<uint64_t, uint32_t>> keyed(cloud.size());
  for (size_t i = 0; i < cloud.size(); ++i) {
    uint64_t key = 0;
    for (int c = 0; c < 3; ++c) {
      const int64_t v = std::llround((cloud.positions[i * 3 + c] - fit.origin[c]) * fit.voxelsPerUnit);
      if (v < 0 || v >= limit)
        throw std::invalid_argument(what + ": point " + std::to_string(i) + " falls outside the fitted " + std::to_string(bits) +
                                    "-bit grid (it lies outside the sequence's bounding box)");
      key = key << 16 | uint64_t(v);
    }
    keyed[i] = {key, uint32_t(i)};
  }
  std::sort(keyed.begin(), keyed.end());
  InputFrame f;
  for (size_t i = 0; i < keyed.size();) {
    size_t j = i;
    uint64_t sum[3] = {0, 0, 0};
    for (; j < keyed.size() && keyed[j].first == keyed[i].first; ++j)
      for (int c = 0; c < 3; ++c) sum[c] += cloud.colors[size_t(keyed[j].second) * 3 + c];
    const size_t n = j - i;
    for (int c = 0; c < 3; ++c) f.positions.push_back(uint16_t(keyed[i].first >> (16 * (2 - c)) & 0xffff));
    for (int c = 0; c < 3; ++c) f.colors.push_back(uint8_t((sum[c] + n / 2) / n));
    i = j;
  }
  return f;
}

void writePly(const std::string& path, const int16_t* positions, const uint8_t* colors, size_t count) {
  std::ofstream out(path, std::ios::binary);
  if (!out) throw std::runtime_error(path + ": cannot write");
  out << "ply\nformat binary_little_endian 1.0\nelement vertex " << count
      << "\nproperty short x\nproperty short y\nproperty short z\nproperty uchar red\nproperty uchar green\nproperty uchar blue\nend_header\n";
  for (size_t i = 0; i < count; ++i) {
    out.write(reinterpret_cast<const char*>(positions + i * 3), 6);
    out.write(reinterpret_cast<const char*>(colors + i * 3), 3);
  }
}

}  // namespace vpcc
