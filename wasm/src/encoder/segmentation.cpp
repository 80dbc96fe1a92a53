// Segmentation, the encoder's first stage: a frame's points become patches. Normals per spatial
// cell (covariance of the cell's neighbourhood), a projection plane per cell out of the six axis
// planes, smoothed so neighbours agree; each plane's points split into surfaces connected in 3-D
// (an arm apart from the torso behind it), each surface's projection into depth-continuous
// connected components; points a nearer part of the same surface hid are left for a further pass.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <utility>
#include <vector>

#include "common/eigen.h"
#include "vpcc/radix_sort.h"
#include "stages.h"

namespace vpcc::encoding {
namespace {

// ------------------------------------------------------------------ normals

struct Cells {
  unsigned shift = 0;
  std::vector<uint64_t> keys;          // sorted unique cell keys
  std::vector<uint32_t> cellOfPoint;
  std::vector<uint32_t> counts;
  std::vector<std::array<double, 9>> sums;  // x y z xx xy xz yy yz zz

  static uint64_t key(uint32_t x, uint32_t y, uint32_t z) { return uint64_t(x) | uint64_t(y) << 21 | uint64_t(z) << 42; }
  int64_t find(uint64_t k) const {
    const auto it = std::lower_bound(keys.begin(), keys.end(), k);
    return it != keys.end() && *it == k ? int64_t(it - keys.begin()) : -1;
  }
};

Cells buildCells(const InputFrame& frame) {
  const size_t n = frame.size();
  Cells cells;
  // Smallest cell size giving ≥ 6 points per occupied cell: enough for a stable covariance.
  // The cells of one size are those of the size below, halved: each size after the first
  // sorts the (fewer) cells found before rather than every point again.
  std::vector<uint64_t> unique(n);
  for (size_t i = 0; i < n; ++i) {
    const uint16_t* p = &frame.positions[i * 3];
    unique[i] = Cells::key(p[0] >> 1, p[1] >> 1, p[2] >> 1);
  }
  for (unsigned shift = 1; shift <= 5; ++shift) {
    if (shift > 1)
      for (uint64_t& k : unique) k = Cells::key(uint32_t(k & 0x1fffff) >> 1, uint32_t((k >> 21) & 0x1fffff) >> 1, uint32_t(k >> 42) >> 1);
    radixSort(unique);
    unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    cells.shift = shift;
    if (n >= 6 * unique.size() || shift == 5) break;
  }
  cells.keys = std::move(unique);
  std::vector<uint64_t> keys(n);
  for (size_t i = 0; i < n; ++i) {
    const uint16_t* p = &frame.positions[i * 3];
    keys[i] = Cells::key(p[0] >> cells.shift, p[1] >> cells.shift, p[2] >> cells.shift);
  }
  cells.cellOfPoint.resize(n);
  cells.counts.assign(cells.keys.size(), 0);
  cells.sums.assign(cells.keys.size(), {});
  for (size_t i = 0; i < n; ++i) {
    const uint32_t c = uint32_t(cells.find(keys[i]));
    cells.cellOfPoint[i] = c;
    const double x = frame.positions[i * 3], y = frame.positions[i * 3 + 1], z = frame.positions[i * 3 + 2];
    auto& s = cells.sums[c];
    s[0] += x, s[1] += y, s[2] += z;
    s[3] += x * x, s[4] += x * y, s[5] += x * z, s[6] += y * y, s[7] += y * z, s[8] += z * z;
    ++cells.counts[c];
  }
  return cells;
}

/// The cells around each cell (the 27-cell neighbourhood, itself included, those that exist),
/// in z, y, x order, found once: normals and the three smoothing passes all read them. Within a
/// row of fixed y and z the keys of x − 1 … x + 1 are adjacent in the sorted keys (x is the low
/// field), so a row takes one search.
struct Neighbourhoods {
  std::vector<uint32_t> start;  // cell c's neighbours: cells[start[c] … start[c + 1])
  std::vector<uint32_t> cells;

  explicit Neighbourhoods(const Cells& grid) {
    const std::vector<uint64_t>& keys = grid.keys;
    start.reserve(keys.size() + 1);
    cells.reserve(keys.size() * 9);
    for (size_t c = 0; c < keys.size(); ++c) {
      start.push_back(uint32_t(cells.size()));
      const uint64_t k = keys[c];
      const int64_t x = int64_t(k & 0x1fffff), y = int64_t((k >> 21) & 0x1fffff), z = int64_t(k >> 42);
      for (int dz = -1; dz <= 1; ++dz)
        for (int dy = -1; dy <= 1; ++dy) {
          if (y + dy < 0 || z + dz < 0) continue;
          const uint64_t first = Cells::key(uint32_t(std::max<int64_t>(x - 1, 0)), uint32_t(y + dy), uint32_t(z + dz));
          const uint64_t last = Cells::key(uint32_t(x + 1), uint32_t(y + dy), uint32_t(z + dz));
          for (auto it = std::lower_bound(keys.begin(), keys.end(), first); it != keys.end() && *it <= last; ++it)
            cells.push_back(uint32_t(it - keys.begin()));
        }
    }
    start.push_back(uint32_t(cells.size()));
  }
  /// Calls fn(neighbourCell) for the cells around cell c, in z, y, x order.
  template <typename Fn>
  void forEach(size_t c, Fn fn) const {
    for (uint32_t i = start[c]; i < start[c + 1]; ++i) fn(size_t(cells[i]));
  }
};

/// Projection plane per cell: normal from the covariance of the 27-cell neighbourhood, oriented
/// away from the centroid of its horizontal slab of the object, then smoothed so neighbouring
/// cells agree (fewer, larger patches).
std::vector<uint8_t> segmentCells(const Cells& cells, const InputFrame& frame) {
  const size_t cellCount = cells.keys.size();
  const Neighbourhoods around(cells);
  // Centroid per slab of 16 voxels height (y up) and overall.
  std::vector<std::array<double, 3>> slab(4096, {0, 0, 0});
  std::vector<double> slabCount(4096, 0);
  double gy = 0;
  for (size_t i = 0; i < frame.size(); ++i) {
    const uint16_t* p = &frame.positions[i * 3];
    const size_t s = std::min<size_t>(p[1] >> 4, 4095);
    slab[s][0] += p[0], slab[s][2] += p[2], slabCount[s] += 1;
    gy += p[1];
  }
  gy /= double(std::max<size_t>(frame.size(), 1));
  std::vector<std::array<double, 3>> normal(cellCount);
  for (size_t c = 0; c < cellCount; ++c) {
    double n = 0;
    std::array<double, 9> s{};
    around.forEach(c, [&](size_t o) {
      n += cells.counts[o];
      for (int k = 0; k < 9; ++k) s[k] += cells.sums[o][k];
    });
    const double mx = s[0] / n, my = s[1] / n, mz = s[2] / n;
    double cov[3][3] = {{s[3] / n - mx * mx, s[4] / n - mx * my, s[5] / n - mx * mz},
                        {0, s[6] / n - my * my, s[7] / n - my * mz},
                        {0, 0, s[8] / n - mz * mz}};
    cov[1][0] = cov[0][1], cov[2][0] = cov[0][2], cov[2][1] = cov[1][2];
    std::array<double, 3> nv = smallestEigenvector(cov);
    const auto& own = cells.sums[c];
    const double cn = cells.counts[c];
    const double cx = own[0] / cn, cy = own[1] / cn, cz = own[2] / cn;
    const size_t si = std::min<size_t>(size_t(cy) >> 4, 4095);
    const double sx = slabCount[si] ? slab[si][0] / slabCount[si] : cx, sz = slabCount[si] ? slab[si][2] / slabCount[si] : cz;
    const double out[3] = {cx - sx, cy - gy, cz - sz};
    if (nv[0] * out[0] + nv[1] * out[1] + nv[2] * out[2] < 0) nv = {-nv[0], -nv[1], -nv[2]};
    normal[c] = nv;
  }
  // Plane direction: mode 0 planes see surfaces facing −axis, mode 1 planes +axis.
  auto score = [&](size_t c, int p) {
    const double d = normal[c][kPlanes[p].normal];
    return kPlanes[p].mode ? d : -d;
  };
  std::vector<uint8_t> plane(cellCount);
  for (size_t c = 0; c < cellCount; ++c) {
    int best = 0;
    for (int p = 1; p < 6; ++p)
      if (score(c, p) > score(c, best)) best = p;
    plane[c] = uint8_t(best);
  }
  constexpr double kSmoothing = 1.0;
  for (int iteration = 0; iteration < 3; ++iteration) {
    std::vector<uint8_t> next(cellCount);
    for (size_t c = 0; c < cellCount; ++c) {
      double votes[6] = {0, 0, 0, 0, 0, 0}, total = 0;
      around.forEach(c, [&](size_t o) {
        votes[plane[o]] += cells.counts[o];
        total += cells.counts[o];
      });
      int best = 0;
      double bestScore = -1e9;
      for (int p = 0; p < 6; ++p) {
        const double s = score(c, p) + kSmoothing * votes[p] / total;
        if (s > bestScore) bestScore = s, best = p;
      }
      next[c] = uint8_t(best);
    }
    plane.swap(next);
  }
  return plane;
}

// ------------------------------------------------------------- 3-D surfaces

/// The points of `pts` split into surfaces connected in 3-D (26-neighbour voxels), each listed
/// in the order of `pts`. One projection plane's points can hold several surfaces one behind
/// the other (an arm before the torso): projected together, the nearer one hides and cuts the
/// further one into pieces left for later passes; projected one surface at a time, each keeps
/// its whole outline in one patch.
std::vector<std::vector<uint32_t>> connectedSurfaces(const InputFrame& frame, const std::vector<uint32_t>& pts) {
  std::vector<std::pair<uint64_t, uint32_t>> sorted(pts.size());  // voxel key, index into pts
  for (size_t i = 0; i < pts.size(); ++i) {
    const uint16_t* p = &frame.positions[size_t(pts[i]) * 3];
    sorted[i] = {Cells::key(p[0], p[1], p[2]), uint32_t(i)};
  }
  radixSortBy(sorted, [](const std::pair<uint64_t, uint32_t>& e) { return e.first; });
  std::vector<uint32_t> parent(pts.size());
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = uint32_t(i);
  auto root = [&](uint32_t a) {
    while (parent[a] != a) a = parent[a] = parent[parent[a]];
    return a;
  };
  // The 13 neighbours whose keys are larger: rows (dy, dz) of x − 1 … x + 1 after this one, and x + 1.
  // Walking the points in key order, each row's first key only grows: one cursor per row.
  constexpr int kRows[4][2] = {{1, 0}, {-1, 1}, {0, 1}, {1, 1}};
  size_t cursor[4] = {0, 0, 0, 0};
  for (size_t i = 0; i < sorted.size(); ++i) {
    const uint64_t k = sorted[i].first;
    const int64_t x = int64_t(k & 0x1fffff), y = int64_t((k >> 21) & 0x1fffff), z = int64_t(k >> 42);
    const uint32_t a = sorted[i].second;
    auto join = [&](size_t j) {
      const uint32_t ra = root(a), rb = root(sorted[j].second);
      if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
    };
    for (size_t j = i + 1; j < sorted.size() && sorted[j].first <= k + 1; ++j) join(j);  // same voxel, x + 1
    for (int r = 0; r < 4; ++r) {
      if (y + kRows[r][0] < 0) continue;
      const uint64_t first = Cells::key(uint32_t(std::max<int64_t>(x - 1, 0)), uint32_t(y + kRows[r][0]), uint32_t(z + kRows[r][1]));
      const uint64_t last = Cells::key(uint32_t(x + 1), uint32_t(y + kRows[r][0]), uint32_t(z + kRows[r][1]));
      size_t& c = cursor[r];
      while (c < sorted.size() && sorted[c].first < first) ++c;
      for (size_t j = c; j < sorted.size() && sorted[j].first <= last; ++j) join(j);
    }
  }
  std::vector<int32_t> surfaceOf(pts.size(), -1);
  std::vector<std::vector<uint32_t>> surfaces;
  for (size_t i = 0; i < pts.size(); ++i) {
    const uint32_t r = root(uint32_t(i));
    if (surfaceOf[r] < 0) surfaceOf[r] = int32_t(surfaces.size()), surfaces.emplace_back();
    surfaces[size_t(surfaceOf[r])].push_back(pts[i]);
  }
  return surfaces;
}

}  // namespace

FramePatches generatePatches(const InputFrame& frame, const EncoderConfig& cfg) {
  const size_t n = frame.size();
  const Cells cells = buildCells(frame);
  const std::vector<uint8_t> cellPlane = segmentCells(cells, frame);
  const int32_t maxCoord = int32_t((1u << cfg.geometryBits) - 1);
  const int32_t maxNearRange = 255 - int32_t(cfg.surfaceThickness);
  const int32_t depthJump = int32_t(8 * cfg.lod);

  // Components under cfg.minPatchPixels are dropped (their points lost) while the pixels dropped
  // stay within 2 % of the frame's points; under kNoisePixels always. A sparse cloud whose
  // projections fall apart into small components keeps them instead of vanishing.
  constexpr size_t kNoisePixels = 8;
  const size_t dropBudget = n / 50;
  size_t dropped = 0;
  FramePatches out;
  std::vector<uint8_t> done(n, 0);  // covered or dropped
  std::vector<int32_t> nearMap, label;
  std::vector<uint32_t> queue;
  for (unsigned pass = 0; pass < cfg.maxPasses; ++pass) {
    bool any = false;
    for (int pl = 0; pl < 6; ++pl) {
      const Plane6& P = kPlanes[pl];
      std::vector<uint32_t> planePoints;
      for (size_t i = 0; i < n; ++i)
        if (!done[i] && cellPlane[cells.cellOfPoint[i]] == pl) planePoints.push_back(uint32_t(i));
      if (planePoints.empty()) continue;
      any = true;
      for (const std::vector<uint32_t>& pts : connectedSurfaces(frame, planePoints)) {
        auto coords = [&](uint32_t i, int32_t& tu, int32_t& tv, int32_t& s) {
          const uint16_t* p = &frame.positions[size_t(i) * 3];
          tu = p[P.tangent] / int32_t(cfg.lod);
          tv = p[P.bitangent] / int32_t(cfg.lod);
          s = P.mode ? maxCoord - p[P.normal] : p[P.normal];
        };
        int32_t u0 = INT32_MAX, v0 = INT32_MAX, u1 = 0, v1 = 0;
        for (uint32_t i : pts) {
          int32_t tu, tv, s;
          coords(i, tu, tv, s);
          u0 = std::min(u0, tu), v0 = std::min(v0, tv), u1 = std::max(u1, tu), v1 = std::max(v1, tv);
        }
        const int32_t w = u1 - u0 + 1, h = v1 - v0 + 1;
        nearMap.assign(size_t(w) * h, INT32_MAX);
        for (uint32_t i : pts) {
          int32_t tu, tv, s;
          coords(i, tu, tv, s);
          int32_t& d = nearMap[size_t(tv - v0) * w + (tu - u0)];
          d = std::min(d, s);
        }
        // Depth-continuous connected components whose near depths fit the 8-bit geometry video.
        label.assign(size_t(w) * h, -1);
        std::vector<std::array<int32_t, 5>> boxes;  // u0 v0 u1 v1 minS per component
        std::vector<size_t> sizes;
        for (size_t start = 0; start < nearMap.size(); ++start) {
          if (nearMap[start] == INT32_MAX || label[start] >= 0) continue;
          const int32_t id = int32_t(boxes.size());
          int32_t minS = nearMap[start], maxS = nearMap[start];
          std::array<int32_t, 5> box = {w, h, -1, -1, 0};
          queue.assign(1, uint32_t(start));
          label[start] = id;
          size_t count = 0;
          for (size_t qi = 0; qi < queue.size(); ++qi) {
            const uint32_t cur = queue[qi];
            const int32_t x = int32_t(cur % uint32_t(w)), y = int32_t(cur / uint32_t(w));
            box[0] = std::min(box[0], x), box[1] = std::min(box[1], y), box[2] = std::max(box[2], x), box[3] = std::max(box[3], y);
            ++count;
            const int32_t dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
            for (int k = 0; k < 4; ++k) {
              const int32_t nx = x + dx[k], ny = y + dy[k];
              if (nx < 0 || ny < 0 || nx >= w || ny >= h) continue;
              const size_t ni = size_t(ny) * w + nx;
              const int32_t s = nearMap[ni];
              if (s == INT32_MAX || label[ni] >= 0 || std::abs(s - nearMap[cur]) > depthJump) continue;
              if (std::max(maxS, s) - std::min(minS, s) > maxNearRange) continue;
              minS = std::min(minS, s), maxS = std::max(maxS, s);
              label[ni] = id;
              queue.push_back(uint32_t(ni));
            }
          }
          box[4] = minS;
          boxes.push_back(box);
          sizes.push_back(count);
        }
        // Components become patches (or noise to drop).
        std::vector<int32_t> patchOf(boxes.size(), -1);
        for (size_t c = 0; c < boxes.size(); ++c) {
          if (sizes[c] < kNoisePixels) continue;
          if (sizes[c] < cfg.minPatchPixels && dropped + sizes[c] <= dropBudget) {
            dropped += sizes[c];
            continue;
          }
          EncPatch patch;
          patch.plane = uint8_t(pl);
          patch.tangentMin = uint32_t(u0 + boxes[c][0]);
          patch.bitangentMin = uint32_t(v0 + boxes[c][1]);
          patch.minDepth = boxes[c][4];
          const uint32_t pw = uint32_t(boxes[c][2] - boxes[c][0] + 1), ph = uint32_t(boxes[c][3] - boxes[c][1] + 1);
          patch.width = (pw + kBlock - 1) / kBlock * kBlock;
          patch.height = (ph + kBlock - 1) / kBlock * kBlock;
          patch.nearDepth.assign(size_t(patch.width) * patch.height, -1);
          patch.farDepth.assign(patch.nearDepth.size(), -1);
          patch.occupied.assign(patch.nearDepth.size(), 0);
          patch.pixels = sizes[c];
            patchOf[c] = int32_t(out.patches.size());
          out.patches.push_back(std::move(patch));
        }
        // Points on a patch pixel within the surface thickness of its near depth are coded there.
        for (uint32_t i : pts) {
          int32_t tu, tv, s;
          coords(i, tu, tv, s);
          const size_t mi = size_t(tv - v0) * w + (tu - u0);
          const int32_t c = label[mi];
          if (c < 0) continue;
          const int32_t nearS = nearMap[mi];
          if (s > nearS + int32_t(cfg.surfaceThickness)) continue;  // hidden behind: a later pass
          done[i] = 1;
          if (patchOf[c] < 0) continue;  // dropped as noise
          EncPatch& patch = out.patches[size_t(patchOf[c])];
          const size_t pi = size_t(tv - int32_t(patch.bitangentMin)) * patch.width + size_t(tu - int32_t(patch.tangentMin));
          const int16_t depth = int16_t(s - patch.minDepth);
          if (s == nearS && patch.nearDepth[pi] < 0) {
            patch.nearDepth[pi] = depth;
            patch.occupied[pi] = 1;
          }
          if (depth > patch.farDepth[pi]) patch.farDepth[pi] = depth;
          ++out.covered;
        }
      }
    }
    if (!any) break;
  }
  return out;
}

}  // namespace vpcc::encoding
