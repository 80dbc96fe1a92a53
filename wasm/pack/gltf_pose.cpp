// Posing a loaded glTF model: its animation's channels sampled at a time (linear, step and
// cubic-spline keys; quaternions by slerp), the node hierarchy walked to world transforms, and
// skinned vertices blended from their joints' matrices.
#include <algorithm>
#include <cmath>
#include <functional>

#include "gltf.h"

namespace holoquic {
namespace {

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
  std::vector<Mat4> world(model.nodes.size(), kIdentityMatrix);
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
  for (int root : model.sceneRoots) visit(root, kIdentityMatrix, 0);

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
