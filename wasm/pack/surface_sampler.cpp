#include "surface_sampler.h"

#include <algorithm>
#include <cmath>

#include "vpcc/radix_sort.h"

namespace holoquic {
namespace {

constexpr double kSampleSpacing = 0.5;  // voxels between samples along a triangle's longest edge
constexpr int kMaxSteps = 4096;         // a triangle across the whole 12-bit grid, no more

double wrap(double coordinate, int mode) {
  if (mode == 33071) return std::min(std::max(coordinate, 0.0), 1.0);  // CLAMP_TO_EDGE
  double f = coordinate - std::floor(coordinate);
  if (mode == 33648 && (int64_t(std::floor(coordinate)) & 1)) f = 1 - f;  // MIRRORED_REPEAT
  return f;
}

/// Bilinearly filtered texel (RGBA, 0–255) at texture coordinate (u, v).
std::array<double, 4> sampleTexture(const RgbaImage& image, const GltfMaterial& m, double u, double v) {
  const double x = wrap(u, m.wrapS) * image.width - 0.5, y = wrap(v, m.wrapT) * image.height - 0.5;
  const double fx = std::floor(x), fy = std::floor(y), ax = x - fx, ay = y - fy;
  auto texel = [&](int64_t tx, int64_t ty) {
    tx = std::min<int64_t>(std::max<int64_t>(tx, 0), image.width - 1);
    ty = std::min<int64_t>(std::max<int64_t>(ty, 0), image.height - 1);
    return &image.rgba[(size_t(ty) * image.width + size_t(tx)) * 4];
  };
  const uint8_t *a = texel(int64_t(fx), int64_t(fy)), *b = texel(int64_t(fx) + 1, int64_t(fy)),
                *c = texel(int64_t(fx), int64_t(fy) + 1), *d = texel(int64_t(fx) + 1, int64_t(fy) + 1);
  std::array<double, 4> out;
  for (int k = 0; k < 4; ++k)
    out[size_t(k)] = (1 - ay) * ((1 - ax) * a[k] + ax * b[k]) + ay * ((1 - ax) * c[k] + ax * d[k]);
  return out;
}

double srgbToLinear(double c) { return c <= 0.04045 ? c / 12.92 : std::pow((c + 0.055) / 1.055, 2.4); }
double linearToSrgb(double c) { return c <= 0.0031308 ? c * 12.92 : 1.055 * std::pow(c, 1 / 2.4) - 0.055; }

struct Sample {
  uint64_t key;
  uint16_t rgb[3];
};

uint64_t keyOf(const int32_t v[3]) { return uint64_t(v[0]) << 42 | uint64_t(v[1]) << 21 | uint64_t(v[2]); }

}  // namespace

VoxelGrid fitGrid(const std::array<double, 6>& box, unsigned bits) {
  VoxelGrid grid;
  grid.bits = bits;
  const double extent = std::max({box[3] - box[0], box[4] - box[1], box[5] - box[2], 1e-9});
  const double margin = 2;
  grid.voxelsPerUnit = (double((1u << bits) - 1) - 2 * margin) / extent;
  for (int c = 0; c < 3; ++c) grid.origin[size_t(c)] = box[size_t(c)] - margin / grid.voxelsPerUnit;
  return grid;
}

void growBox(const std::vector<PosedPrimitive>& posed, std::array<double, 6>& box) {
  for (const PosedPrimitive& p : posed)
    for (const auto& v : p.world)
      for (int c = 0; c < 3; ++c) {
        box[size_t(c)] = std::min(box[size_t(c)], double(v[size_t(c)]));
        box[size_t(c) + 3] = std::max(box[size_t(c) + 3], double(v[size_t(c)]));
      }
}

vpcc::InputFrame voxelizeSurfaces(const GltfModel& model, const std::vector<PosedPrimitive>& posed, const VoxelGrid& grid) {
  const int32_t limit = int32_t(1u << grid.bits);
  std::vector<Sample> samples;
  for (const PosedPrimitive& pp : posed) {
    const GltfPrimitive& prim = *pp.primitive;
    const GltfMaterial* material = prim.material >= 0 ? &model.materials[size_t(prim.material)] : nullptr;
    const RgbaImage* image = material && material->image >= 0 && !prim.uvs.empty() ? &model.images[size_t(material->image)] : nullptr;
    const std::array<float, 4> factor = material ? material->baseColorFactor : std::array<float, 4>{1, 1, 1, 1};
    const bool plainTexture = prim.colours.empty() && factor[0] == 1 && factor[1] == 1 && factor[2] == 1;
    auto colourAt = [&](uint32_t i0, uint32_t i1, uint32_t i2, double b1, double b2, uint16_t out[3]) {
      const double b0 = 1 - b1 - b2;
      std::array<double, 4> texel{255, 255, 255, 255};
      if (image) {
        const double u = b0 * prim.uvs[i0][0] + b1 * prim.uvs[i1][0] + b2 * prim.uvs[i2][0];
        const double v = b0 * prim.uvs[i0][1] + b1 * prim.uvs[i1][1] + b2 * prim.uvs[i2][1];
        texel = sampleTexture(*image, *material, u, v);
      }
      for (int c = 0; c < 3; ++c) {
        if (plainTexture) {
          out[c] = uint16_t(std::lround(texel[size_t(c)]));
          continue;
        }
        // Factors and vertex colours are linear; the texture is sRGB.
        double linear = srgbToLinear(texel[size_t(c)] / 255) * factor[size_t(c)];
        if (!prim.colours.empty())
          linear *= b0 * prim.colours[i0][size_t(c)] + b1 * prim.colours[i1][size_t(c)] + b2 * prim.colours[i2][size_t(c)];
        out[c] = uint16_t(std::lround(255 * linearToSrgb(std::min(std::max(linear, 0.0), 1.0))));
      }
    };
    for (size_t t = 0; t + 2 < prim.triangles.size(); t += 3) {
      const uint32_t i0 = prim.triangles[t], i1 = prim.triangles[t + 1], i2 = prim.triangles[t + 2];
      std::array<double, 3> p[3];
      for (int c = 0; c < 3; ++c) {
        p[0][size_t(c)] = (pp.world[i0][size_t(c)] - grid.origin[size_t(c)]) * grid.voxelsPerUnit;
        p[1][size_t(c)] = (pp.world[i1][size_t(c)] - grid.origin[size_t(c)]) * grid.voxelsPerUnit;
        p[2][size_t(c)] = (pp.world[i2][size_t(c)] - grid.origin[size_t(c)]) * grid.voxelsPerUnit;
      }
      auto length = [&](int a, int b) {
        return std::sqrt((p[a][0] - p[b][0]) * (p[a][0] - p[b][0]) + (p[a][1] - p[b][1]) * (p[a][1] - p[b][1]) +
                         (p[a][2] - p[b][2]) * (p[a][2] - p[b][2]));
      };
      const double longest = std::max({length(0, 1), length(1, 2), length(2, 0)});
      const int steps = std::min(kMaxSteps, std::max(1, int(std::ceil(longest / kSampleSpacing))));
      uint64_t previous = ~uint64_t(0);
      for (int i = 0; i <= steps; ++i)
        for (int j = 0; j <= steps - i; ++j) {
          const double b1 = double(i) / steps, b2 = double(j) / steps, b0 = 1 - b1 - b2;
          int32_t v[3];
          bool inside = true;
          for (int c = 0; c < 3; ++c) {
            v[c] = int32_t(std::floor(b0 * p[0][size_t(c)] + b1 * p[1][size_t(c)] + b2 * p[2][size_t(c)] + 0.5));
            inside &= v[c] >= 0 && v[c] < limit;
          }
          if (!inside) continue;
          const uint64_t key = keyOf(v);
          if (key == previous) continue;  // the next sample along a row mostly stays in its voxel
          previous = key;
          Sample s;
          s.key = key;
          colourAt(i0, i1, i2, b1, b2, s.rgb);
          samples.push_back(s);
        }
    }
  }
  // One point per voxel, with the mean colour of its samples (sorted: deterministic order; the
  // order of a voxel's samples does not change their sum).
  vpcc::radixSortBy(samples, [](const Sample& s) { return s.key; });
  vpcc::InputFrame frame;
  for (size_t i = 0; i < samples.size();) {
    size_t j = i;
    uint32_t sum[3] = {0, 0, 0};
    for (; j < samples.size() && samples[j].key == samples[i].key; ++j)
      for (int c = 0; c < 3; ++c) sum[c] += samples[j].rgb[c];
    const uint32_t n = uint32_t(j - i);
    const uint64_t k = samples[i].key;
    frame.positions.insert(frame.positions.end(), {uint16_t(k >> 42), uint16_t((k >> 21) & 0x1fffff), uint16_t(k & 0x1fffff)});
    for (int c = 0; c < 3; ++c) frame.colors.push_back(uint8_t((sum[c] + n / 2) / n));
    i = j;
  }
  return frame;
}

}  // namespace holoquic
