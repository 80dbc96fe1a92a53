#include "figures.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <vector>

namespace holoquic {
namespace {

using Vec = std::array<double, 3>;
Vec add(Vec a, Vec b) { return {a[0] + b[0], a[1] + b[1], a[2] + b[2]}; }
Vec sub(Vec a, Vec b) { return {a[0] - b[0], a[1] - b[1], a[2] - b[2]}; }
Vec mul(Vec a, double s) { return {a[0] * s, a[1] * s, a[2] * s}; }
double dot(Vec a, Vec b) { return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]; }

/// Rotations about the x (forward swing), z (sideways raise) and y (twist) axes.
Vec rotX(Vec v, double a) { return {v[0], v[1] * std::cos(a) - v[2] * std::sin(a), v[1] * std::sin(a) + v[2] * std::cos(a)}; }
Vec rotZ(Vec v, double a) { return {v[0] * std::cos(a) - v[1] * std::sin(a), v[0] * std::sin(a) + v[1] * std::cos(a), v[2]}; }
Vec rotY(Vec v, double a) { return {v[0] * std::cos(a) + v[2] * std::sin(a), v[1], -v[0] * std::sin(a) + v[2] * std::cos(a)}; }

enum Material : uint8_t { Skin, Hair, Shirt, Trousers, Shoes };

struct Capsule {
  Vec a, b;
  double radius;
  Material material;
};

double capsuleDistance(const Capsule& c, Vec p) {
  const Vec ab = sub(c.b, c.a), ap = sub(p, c.a);
  const double len2 = dot(ab, ab);
  const double t = len2 > 0 ? std::clamp(dot(ap, ab) / len2, 0.0, 1.0) : 0.0;
  const Vec d = sub(ap, mul(ab, t));
  return std::sqrt(dot(d, d)) - c.radius;
}

struct Palette {
  std::array<double, 3> skin, hair, shirt, trousers, shoes, stripe;
};

Palette paletteFor(uint32_t seed) {
  static const std::array<double, 3> skins[] = {{224, 172, 138}, {141, 85, 36}, {198, 134, 66}, {255, 219, 172}};
  static const std::array<double, 3> shirts[] = {{200, 40, 40}, {40, 90, 200}, {240, 200, 40}, {40, 160, 80}, {150, 60, 170}};
  static const std::array<double, 3> trousers[] = {{30, 40, 70}, {60, 60, 60}, {110, 80, 50}, {20, 20, 20}};
  static const std::array<double, 3> hairs[] = {{30, 20, 10}, {90, 60, 20}, {200, 170, 90}, {15, 15, 15}};
  Palette p;
  p.skin = skins[seed % 4];
  p.shirt = shirts[seed % 5];
  p.trousers = trousers[(seed / 2) % 4];
  p.hair = hairs[(seed / 3) % 4];
  p.shoes = {240, 240, 240};
  p.stripe = {250, 250, 250};
  return p;
}

/// The body's capsules at time t (metres, feet at y = 0, facing +z).
std::vector<Capsule> pose(uint32_t seed, double t) {
  const double tempo = 0.45 + 0.1 * (seed % 3);  // beats per second / 2
  const double w = 2 * M_PI * tempo, phase = 1.7 * seed;
  const double bob = 0.03 * std::sin(2 * w * t + phase);
  const double twist = 0.35 * std::sin(w * t + phase);
  const double sway = 0.05 * std::sin(w * t + phase);
  std::vector<Capsule> parts;
  const Vec pelvis = {sway, 0.93 + bob, 0};
  auto upper = [&](Vec local) { return add(pelvis, rotY(local, twist)); };

  // Torso: two capsules side by side give a wider-than-deep chest; hips below.
  parts.push_back({upper({-0.07, 0.05, 0}), upper({-0.08, 0.45, 0}), 0.115, Shirt});
  parts.push_back({upper({0.07, 0.05, 0}), upper({0.08, 0.45, 0}), 0.115, Shirt});
  parts.push_back({add(pelvis, {-0.09, 0.0, 0}), add(pelvis, {0.09, 0.0, 0}), 0.12, Trousers});
  parts.push_back({upper({0, 0.52, 0}), upper({0, 0.62, 0.01}), 0.05, Skin});
  const double nod = 0.15 * std::sin(2 * w * t + phase + 0.5);
  const Vec head = upper(add({0, 0.72, 0.02}, rotX({0, 0.0, 0.0}, nod)));
  parts.push_back({head, add(head, {0, 0.05, 0}), 0.105, Skin});

  for (int side = -1; side <= 1; side += 2) {
    const double s = double(side);
    // Arms swing forward/back in opposition and rise sideways on the beat.
    const double swing = 0.7 * std::sin(w * t + phase + (side > 0 ? 0 : M_PI));
    const double raise = 0.25 + 0.55 * (0.5 + 0.5 * std::sin(2 * w * t + phase + s));
    const double elbow = 0.5 + 0.5 * (0.5 + 0.5 * std::sin(w * t + phase + 1 + s));
    const Vec shoulder = upper({0.2 * s, 0.44, 0});
    const Vec upperDir = rotY(rotZ(rotX({0, -1, 0}, -swing), s * raise), twist);
    const Vec elbowPos = add(shoulder, mul(upperDir, 0.29));
    const Vec foreDir = rotY(rotZ(rotX({0, -1, 0}, -swing - elbow), s * raise), twist);
    const Vec wrist = add(elbowPos, mul(foreDir, 0.26));
    parts.push_back({shoulder, elbowPos, 0.052, Shirt});
    parts.push_back({elbowPos, wrist, 0.042, Skin});
    parts.push_back({wrist, add(wrist, mul(foreDir, 0.08)), 0.045, Skin});
    // Legs step in place: hip swing, knee bend, foot pointing forward.
    const double hipSwing = 0.35 * std::sin(w * t + phase + (side > 0 ? M_PI : 0));
    const double knee = 0.25 + 0.25 * std::sin(w * t + phase + (side > 0 ? M_PI : 0) + 1.2);
    const Vec hip = add(pelvis, {0.1 * s, -0.02, 0});
    const Vec thighDir = rotX({0, -1, 0}, -hipSwing);
    const Vec kneePos = add(hip, mul(thighDir, 0.44));
    const Vec shinDir = rotX({0, -1, 0}, -hipSwing + knee);
    const Vec ankle = add(kneePos, mul(shinDir, 0.42));
    parts.push_back({hip, kneePos, 0.08, Trousers});
    parts.push_back({kneePos, ankle, 0.058, Trousers});
    parts.push_back({ankle, add(ankle, {0, -0.02, 0.17}), 0.05, Shoes});
  }
  return parts;
}

std::array<double, 3> colourAt(const Palette& pal, Material m, Vec p, Vec headCentre, uint32_t seed) {
  std::array<double, 3> c;
  switch (m) {
    case Skin: {
      const Vec rel = sub(p, headCentre);
      const bool hair = dot(rel, rel) < 0.16 * 0.16 && (rel[1] > 0.0 || rel[2] < -0.03);
      c = hair ? pal.hair : pal.skin;
      break;
    }
    case Shirt: {
      // Horizontal stripes every 6 cm on even seeds, plain otherwise.
      const bool stripe = seed % 2 == 0 && std::fmod(p[1] + 10.0, 0.06) < 0.015;
      c = stripe ? pal.stripe : pal.shirt;
      break;
    }
    case Trousers: c = pal.trousers; break;
    case Shoes: c = pal.shoes; break;
    default: c = pal.hair; break;
  }
  // Baked soft light from above-front, as captured clouds carry their studio lighting.
  const double shade = 0.8 + 0.2 * std::clamp(p[1] / 1.8, 0.0, 1.0);
  return {c[0] * shade, c[1] * shade, c[2] * shade};
}

}  // namespace

vpcc::InputFrame figureFrame(const FigureStyle& style, double seconds) {
  const std::vector<Capsule> parts = pose(style.seed, seconds);
  const Palette pal = paletteFor(style.seed);
  const double v = style.metresPerVoxel;
  const double centre = double(1u << (style.bits - 1));
  const int32_t limit = int32_t(1u << style.bits);
  const Vec headCentre = add(parts[4].a, {0, 0.02, 0});
  auto toVoxel = [&](Vec p) { return Vec{p[0] / v + centre, p[1] / v + 8, p[2] / v + centre}; };
  auto distance = [&](Vec p, size_t& nearest) {
    double best = 1e9;
    for (size_t i = 0; i < parts.size(); ++i) {
      const double d = capsuleDistance(parts[i], p);
      if (d < best) best = d, nearest = i;
    }
    return best;
  };
  vpcc::InputFrame frame;
  for (size_t pi = 0; pi < parts.size(); ++pi) {
    const Capsule& c = parts[pi];
    const Vec lo = toVoxel({std::min(c.a[0], c.b[0]) - c.radius, std::min(c.a[1], c.b[1]) - c.radius, std::min(c.a[2], c.b[2]) - c.radius});
    const Vec hi = toVoxel({std::max(c.a[0], c.b[0]) + c.radius, std::max(c.a[1], c.b[1]) + c.radius, std::max(c.a[2], c.b[2]) + c.radius});
    for (int32_t z = std::max(0, int32_t(lo[2]) - 1); z <= std::min(limit - 1, int32_t(hi[2]) + 1); ++z)
      for (int32_t y = std::max(0, int32_t(lo[1]) - 1); y <= std::min(limit - 1, int32_t(hi[1]) + 1); ++y)
        for (int32_t x = std::max(0, int32_t(lo[0]) - 1); x <= std::min(limit - 1, int32_t(hi[0]) + 1); ++x) {
          const Vec p = {(x - centre) * v, (y - 8) * v, (z - centre) * v};
          if (capsuleDistance(c, p) > 0) continue;  // only this part's inside band is visited
          size_t nearest = pi;
          const double d = distance(p, nearest);
          // A voxel is on the surface when it is inside the body but within one voxel of the outside.
          if (d > 0 || d <= -v) continue;
          if (nearest != pi) continue;  // each voxel is emitted by exactly one part
          frame.positions.insert(frame.positions.end(), {uint16_t(x), uint16_t(y), uint16_t(z)});
          const auto rgb = colourAt(pal, c.material, p, headCentre, style.seed);
          for (double ch : rgb) frame.colors.push_back(uint8_t(std::clamp(ch, 0.0, 255.0)));
        }
  }
  return frame;
}

}  // namespace holoquic
