// V-PCC encoding: normals per spatial cell, six-plane segmentation with neighbourhood smoothing,
// depth-continuous connected components in each projection (repeated for points a nearer
// surface hid), packing into 16×16 blocks, hole filling and push-pull padding, occupancy and
// geometry videos; then the geometry is decoded back and reconstructed exactly as the decoder
// will, colours are transferred from the source onto those points, and the attribute video is
// coded from them. The atlas codes the first frame of a sequence with intra patches and (with
// inter prediction) later frames against their predecessor, patches matched between frames as
// INTER or SKIP patches; a sequence (a segment) never refers outside itself.
#include "vpcc/encoder.h"

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <cstring>
#include <limits>
#include <stdexcept>
#include <string>
#include <mutex>
#include <thread>

#include "color_transfer.h"
#include "eigen.h"
#include "vpcc/atlas.h"
#include "vpcc/bit_writer.h"
#include "vpcc/reconstruct.h"
#include "vpcc/writer.h"

namespace vpcc {
namespace {

using Clock = std::chrono::steady_clock;
double msSince(Clock::time_point t) { return std::chrono::duration<double, std::milli>(Clock::now() - t).count(); }

constexpr uint32_t kBlock = 16;  // patch packing block (log2 = 4)

/// Projection planes 0–5 (projection ids of ISO/IEC 23090-5 Table 11): mode 0 stores the depth
/// above the patch's minimum (surfaces facing −axis), mode 1 below its maximum (facing +axis).
struct Plane6 {
  uint8_t normal, tangent, bitangent, mode;
};
constexpr Plane6 kPlanes[6] = {{0, 2, 1, 0}, {1, 2, 0, 0}, {2, 0, 1, 0}, {0, 2, 1, 1}, {1, 2, 0, 1}, {2, 0, 1, 1}};

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
  std::vector<uint64_t> keys(n);
  // Smallest cell size giving ≥ 6 points per occupied cell: enough for a stable covariance.
  for (unsigned shift = 1; shift <= 5; ++shift) {
    for (size_t i = 0; i < n; ++i) {
      const uint16_t* p = &frame.positions[i * 3];
      keys[i] = Cells::key(p[0] >> shift, p[1] >> shift, p[2] >> shift);
    }
    std::vector<uint64_t> unique = keys;
    std::sort(unique.begin(), unique.end());
    unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
    cells.shift = shift;
    cells.keys = std::move(unique);
    if (n >= 6 * cells.keys.size() || shift == 5) break;
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

/// Calls fn(neighbourCell) for the 27 cells around cell c (itself included) that exist.
template <typename Fn>
void forNeighbourCells(const Cells& cells, size_t c, Fn fn) {
  const uint64_t k = cells.keys[c];
  const int64_t x = int64_t(k & 0x1fffff), y = int64_t((k >> 21) & 0x1fffff), z = int64_t(k >> 42);
  for (int dz = -1; dz <= 1; ++dz)
    for (int dy = -1; dy <= 1; ++dy)
      for (int dx = -1; dx <= 1; ++dx) {
        if (x + dx < 0 || y + dy < 0 || z + dz < 0) continue;
        const int64_t found = cells.find(Cells::key(uint32_t(x + dx), uint32_t(y + dy), uint32_t(z + dz)));
        if (found >= 0) fn(size_t(found));
      }
}

/// Projection plane per cell: normal from the covariance of the 27-cell neighbourhood, oriented
/// away from the centroid of its horizontal slab of the object, then smoothed so neighbouring
/// cells agree (fewer, larger patches).
std::vector<uint8_t> segmentCells(const Cells& cells, const InputFrame& frame) {
  const size_t cellCount = cells.keys.size();
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
    forNeighbourCells(cells, c, [&](size_t o) {
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
      forNeighbourCells(cells, c, [&](size_t o) {
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

// ------------------------------------------------------------------ patches

/// A patch as the encoder builds it: depths per pixel of its block-rounded rectangle. (Colours
/// are not kept here: they are transferred onto the decoded geometry later.)
struct EncPatch {
  uint8_t plane = 0;
  uint32_t tangentMin = 0, bitangentMin = 0;  // in LoD pixels
  int32_t minDepth = 0;                        // minimum of the plane's depth coordinate s
  uint32_t width = 0, height = 0;              // pixels (block-rounded)
  std::vector<int16_t> nearDepth, farDepth;    // −1 where no point projects
  std::vector<uint8_t> occupied;               // pixels a point projected to (before filling)
  Patch placement;                             // position/orientation in the atlas (blocks)
  int reference = -1;                          // the previous frame's patch of the same surface, or −1
  size_t pixels = 0;
  bool pixelOccupied(uint32_t u, uint32_t v) const { return occupied[size_t(v) * width + u] != 0; }
};

struct FramePatches {
  std::vector<EncPatch> patches;
  size_t covered = 0;
};

FramePatches generatePatches(const InputFrame& frame, const EncoderConfig& cfg) {
  const size_t n = frame.size();
  const Cells cells = buildCells(frame);
  const std::vector<uint8_t> cellPlane = segmentCells(cells, frame);
  const int32_t maxCoord = int32_t((1u << cfg.geometryBits) - 1);
  const int32_t maxNearRange = 255 - int32_t(cfg.surfaceThickness);
  const int32_t depthJump = int32_t(8 * cfg.lod);

  FramePatches out;
  std::vector<uint8_t> done(n, 0);  // covered or dropped
  std::vector<int32_t> nearMap, label;
  std::vector<uint32_t> queue;
  for (unsigned pass = 0; pass < cfg.maxPasses; ++pass) {
    bool any = false;
    for (int pl = 0; pl < 6; ++pl) {
      const Plane6& P = kPlanes[pl];
      std::vector<uint32_t> pts;
      for (size_t i = 0; i < n; ++i)
        if (!done[i] && cellPlane[cells.cellOfPoint[i]] == pl) pts.push_back(uint32_t(i));
      if (pts.empty()) continue;
      any = true;
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
        if (sizes[c] < cfg.minPatchPixels) continue;
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
    if (!any) break;
  }
  return out;
}

/// Fills every empty pixel of a patch rectangle with its nearest filled pixel (multi-source BFS),
/// so the decoder's block-precision occupancy finds plausible depths there.
void fillPatch(EncPatch& p) {
  const size_t count = size_t(p.width) * p.height;
  std::vector<uint32_t> queue;
  queue.reserve(count);
  for (size_t i = 0; i < count; ++i)
    if (p.nearDepth[i] >= 0) queue.push_back(uint32_t(i));
  for (size_t qi = 0; qi < queue.size(); ++qi) {
    const uint32_t cur = queue[qi];
    const uint32_t x = cur % p.width, y = cur / p.width;
    const int dx[4] = {1, -1, 0, 0}, dy[4] = {0, 0, 1, -1};
    for (int k = 0; k < 4; ++k) {
      const int64_t nx = int64_t(x) + dx[k], ny = int64_t(y) + dy[k];
      if (nx < 0 || ny < 0 || nx >= int64_t(p.width) || ny >= int64_t(p.height)) continue;
      const size_t ni = size_t(ny) * p.width + size_t(nx);
      if (p.nearDepth[ni] >= 0) continue;
      p.nearDepth[ni] = p.nearDepth[cur];
      p.farDepth[ni] = p.farDepth[cur];
      queue.push_back(uint32_t(ni));
    }
  }
}

// ------------------------------------------------------------------ packing

/// For each patch of `current`, the patch of `previous` that shows the same surface, or −1: same
/// projection plane and the largest overlap of their tangent-plane rectangles (at least a third
/// of the smaller one). Each previous patch matches at most one current patch, larger first.
std::vector<int> matchPatches(const std::vector<EncPatch>& previous, const std::vector<EncPatch>& current) {
  std::vector<int> match(current.size(), -1);
  std::vector<bool> taken(previous.size(), false);
  std::vector<size_t> order(current.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return current[a].pixels > current[b].pixels; });
  auto overlap = [](const EncPatch& a, const EncPatch& b) {
    const int64_t u = int64_t(std::min(a.tangentMin + a.width, b.tangentMin + b.width)) - std::max(a.tangentMin, b.tangentMin);
    const int64_t v = int64_t(std::min(a.bitangentMin + a.height, b.bitangentMin + b.height)) - std::max(a.bitangentMin, b.bitangentMin);
    return u > 0 && v > 0 ? u * v : 0;
  };
  for (size_t c : order) {
    int64_t best = 0;
    for (size_t p = 0; p < previous.size(); ++p) {
      if (taken[p] || previous[p].plane != current[c].plane) continue;
      const int64_t o = overlap(previous[p], current[c]);
      const int64_t smaller = std::min(int64_t(previous[p].width) * previous[p].height, int64_t(current[c].width) * current[c].height);
      if (3 * o >= smaller && o > best) best = o, match[c] = int(p);
    }
    if (match[c] >= 0) taken[size_t(match[c])] = true;
  }
  return match;
}

/// Records each patch's reference (matchPatches) and puts the frame's patches in prediction order:
/// the matched ones first, in the order of the patches they match, then the new ones in generation
/// order. INTER patches then code their reference as a step of one from the last (one bit), and a
/// frame that repeats its predecessor keeps its patch order, which SKIP patches need (they copy the
/// previous frame's patch of the same index). Intra-only coding uses the same order, so both codings
/// decode to the same points.
void orderForPrediction(std::vector<EncPatch>& patches, const std::vector<EncPatch>& previous) {
  const std::vector<int> match = matchPatches(previous, patches);
  for (size_t i = 0; i < patches.size(); ++i) patches[i].reference = match[i];
  std::stable_sort(patches.begin(), patches.end(), [](const EncPatch& a, const EncPatch& b) {
    if ((a.reference >= 0) != (b.reference >= 0)) return a.reference >= 0;
    return a.reference < b.reference;
  });
}

/// Packing of one frame in 16×16 blocks. A patch with a reference in the previous frame first tries
/// that patch's place and orientation, so the same surface stays at the same atlas position and
/// the videos predict it from the previous picture; everything else (and what no longer fits
/// there) goes first-fit in raster order, largest first, default or swapped orientation.
/// Returns the used height in blocks.
uint32_t packPatches(std::vector<EncPatch>& patches, const std::vector<EncPatch>* previous, uint32_t widthBlocks) {
  std::vector<size_t> order(patches.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto bigness = [&](size_t i) { return std::max(patches[i].width, patches[i].height) * 4096 + patches[i].width * patches[i].height; };
  auto matched = [&](size_t i) { return previous && patches[i].reference >= 0; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (matched(a) != matched(b)) return matched(a);  // matched patches claim their places first
    return bigness(a) > bigness(b);
  });
  std::vector<uint8_t> used;  // widthBlocks × rows
  uint32_t rows = 0, usedRows = 0;
  auto fits = [&](uint32_t x, uint32_t y, uint32_t bw, uint32_t bh) {
    if (x + bw > widthBlocks) return false;
    for (uint32_t j = 0; j < bh; ++j) {
      if (y + j >= rows) return true;  // rows beyond the grid are free
      for (uint32_t i = 0; i < bw; ++i)
        if (used[size_t(y + j) * widthBlocks + x + i]) return false;
    }
    return true;
  };
  auto place = [&](EncPatch& p, uint32_t x, uint32_t y, bool swap) {
    const uint32_t bw = p.width / kBlock, bh = p.height / kBlock;
    const uint32_t w = swap ? bh : bw, h = swap ? bw : bh;
    if (y + h > rows) {
      rows = y + h;
      used.resize(size_t(rows) * widthBlocks, 0);
    }
    for (uint32_t j = 0; j < h; ++j)
      for (uint32_t i = 0; i < w; ++i) used[size_t(y + j) * widthBlocks + x + i] = 1;
    p.placement.u0 = x;
    p.placement.v0 = y;
    p.placement.sizeU0 = bw;
    p.placement.sizeV0 = bh;
    p.placement.orientation = uint8_t(swap ? kSwap : kDefault);
    usedRows = std::max(usedRows, y + h);
  };
  for (size_t index : order) {
    EncPatch& p = patches[index];
    const uint32_t bw = p.width / kBlock, bh = p.height / kBlock;
    if (std::min(bw, bh) > widthBlocks) throw std::invalid_argument("patch wider than the atlas");
    // A matched patch keeps its reference's orientation where it can (an INTER patch must).
    bool preferSwap = false;
    if (matched(index)) {
      const Patch& before = (*previous)[size_t(p.reference)].placement;
      preferSwap = before.orientation == kSwap;
      if (fits(before.u0, before.v0, preferSwap ? bh : bw, preferSwap ? bw : bh)) {
        place(p, before.u0, before.v0, preferSwap);
        continue;
      }
    }
    bool placed = false;
    for (uint32_t y = 0; !placed; ++y)
      for (uint32_t x = 0; x < widthBlocks && !placed; ++x)
        for (const bool swap : {preferSwap, !preferSwap})
          if (!placed && fits(x, y, swap ? bh : bw, swap ? bw : bh)) {
            place(p, x, y, swap);
            placed = true;
          }
  }
  return usedRows;
}

// ------------------------------------------------------------------ images

/// Occupancy coding. HEVC (TMC2's codec group) codes the map losslessly as 0/1 with threshold 0,
/// as TMC2 does: TMC2's decoder rewrites each occupancy sample to 0/1 while up-sampling it and
/// then compares the rewritten sample to the threshold again, so any threshold above 0 empties a
/// map coded at precision 2 or 4 there. AVC (for browsers' WebCodecs, whose profiles have no
/// lossless mode) codes 0/255 lossy with threshold 127, which the quantiser never crosses.
bool losslessOccupancy(const EncoderConfig& cfg) { return cfg.codec == VideoCodec::Hevc; }
uint16_t occupiedSample(const EncoderConfig& cfg) { return losslessOccupancy(cfg) ? 1 : 255; }
uint32_t occupancyThreshold(const EncoderConfig& cfg) { return losslessOccupancy(cfg) ? 0 : 127; }

/// Push-pull padding: pixels outside `mask` get values interpolated from a pyramid of averages
/// of the valid pixels, which leaves smooth areas that cost few bits.
void pushPull(std::vector<float>& image, std::vector<float> weight, uint32_t width, uint32_t height, int channels) {
  if (width <= 1 && height <= 1) return;
  const uint32_t w2 = (width + 1) / 2, h2 = (height + 1) / 2;
  std::vector<float> coarse(size_t(w2) * h2 * channels, 0), coarseWeight(size_t(w2) * h2, 0);
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      const float wt = weight[size_t(y) * width + x];
      if (wt <= 0) continue;
      const size_t ci = size_t(y / 2) * w2 + x / 2;
      coarseWeight[ci] += wt;
      for (int c = 0; c < channels; ++c) coarse[ci * channels + c] += wt * image[(size_t(y) * width + x) * channels + c];
    }
  for (size_t i = 0; i < coarseWeight.size(); ++i)
    if (coarseWeight[i] > 0) {
      for (int c = 0; c < channels; ++c) coarse[i * channels + c] /= coarseWeight[i];
      coarseWeight[i] = 1;
    }
  pushPull(coarse, coarseWeight, w2, h2, channels);
  for (uint32_t y = 0; y < height; ++y)
    for (uint32_t x = 0; x < width; ++x) {
      const size_t i = size_t(y) * width + x;
      if (weight[i] > 0) continue;
      for (int c = 0; c < channels; ++c) image[i * channels + c] = coarse[(size_t(y / 2) * w2 + x / 2) * channels + c];
    }
}

Picture makePicture(uint32_t width, uint32_t height) {
  Picture pic;
  pic.width = width;
  pic.height = height;
  pic.bitDepth = 8;
  for (int c = 0; c < 3; ++c) {
    pic.planes[c].width = c ? width / 2 : width;
    pic.planes[c].height = c ? height / 2 : height;
    pic.planes[c].samples.assign(size_t(pic.planes[c].width) * pic.planes[c].height, c ? 128 : 0);
  }
  return pic;
}

uint16_t clamp8(float v) { return uint16_t(std::lround(std::min(255.f, std::max(0.f, v)))); }

/// RGB (float, per pixel) → full-range BT.709 YUV 4:2:0, the inverse of the decoder's conversion.
Picture rgbToYuv420(const std::vector<float>& rgb, uint32_t width, uint32_t height) {
  Picture pic = makePicture(width, height);
  std::vector<float> cb(size_t(width) * height), cr(size_t(width) * height);
  for (size_t i = 0; i < size_t(width) * height; ++i) {
    const float r = rgb[i * 3], g = rgb[i * 3 + 1], b = rgb[i * 3 + 2];
    const float y = 0.2126f * r + 0.7152f * g + 0.0722f * b;
    pic.planes[0].samples[i] = clamp8(y);
    cb[i] = (b - y) / 1.8556f + 128.f;
    cr[i] = (r - y) / 1.5748f + 128.f;
  }
  for (uint32_t y = 0; y < height / 2; ++y)
    for (uint32_t x = 0; x < width / 2; ++x) {
      const size_t a = size_t(2 * y) * width + 2 * x, b = a + width;
      pic.planes[1].samples[size_t(y) * (width / 2) + x] = clamp8((cb[a] + cb[a + 1] + cb[b] + cb[b + 1]) / 4);
      pic.planes[2].samples[size_t(y) * (width / 2) + x] = clamp8((cr[a] + cr[a + 1] + cr[b] + cr[b + 1]) / 4);
    }
  return pic;
}

/// Occupancy and geometry pictures of one frame.
struct GeometryImages {
  Picture occupancy;
  std::vector<Picture> geometry;  // per map
};

GeometryImages renderGeometry(const std::vector<EncPatch>& patches, uint32_t width, uint32_t height, const EncoderConfig& cfg) {
  const uint32_t prec = cfg.occupancyPrecision;
  GeometryImages out;
  out.occupancy = makePicture(width / prec, height / prec);
  std::vector<uint8_t> inPatch(size_t(width) * height, 0);
  std::vector<float> depth[2];
  for (unsigned m = 0; m < cfg.mapCount; ++m) depth[m].assign(size_t(width) * height, 0);
  for (const EncPatch& p : patches) {
    for (uint32_t v = 0; v < p.height; ++v)
      for (uint32_t u = 0; u < p.width; ++u) {
        uint32_t x, y;
        patchToCanvas(p.placement, kBlock, u, v, x, y);
        const size_t src = size_t(v) * p.width + u, dst = size_t(y) * width + x;
        inPatch[dst] = 1;
        depth[0][dst] = p.nearDepth[src];
        if (cfg.mapCount > 1) depth[1][dst] = p.farDepth[src];
        // Occupancy at its precision: a block is occupied when any of its pixels held a point
        // (before filling).
        if (p.pixelOccupied(u, v))
          out.occupancy.planes[0].samples[size_t(y / prec) * (width / prec) + x / prec] = occupiedSample(cfg);
      }
  }
  std::vector<float> weight(size_t(width) * height);
  for (size_t i = 0; i < weight.size(); ++i) weight[i] = inPatch[i] ? 1.f : 0.f;
  for (unsigned m = 0; m < cfg.mapCount; ++m) {
    pushPull(depth[m], weight, width, height, 1);
    Picture g = makePicture(width, height);
    for (size_t i = 0; i < depth[m].size(); ++i) g.planes[0].samples[i] = clamp8(depth[m][i]);
    out.geometry.push_back(std::move(g));
  }
  return out;
}

/// The attribute pictures of one frame: each decoded point's colour at the pixel and map the
/// decoder reads it from. A map-1 pixel whose point the decoder drops as a duplicate repeats map 0
/// (it is never read; equal content predicts well); every other pixel is push-pull padding.
std::vector<Picture> renderAttributes(const PointCloudFrame& decoded, const std::vector<float>& colours, uint32_t width,
                                      uint32_t height, unsigned mapCount) {
  const size_t pixels = size_t(width) * height;
  std::vector<float> rgb[2], weight[2];
  for (unsigned m = 0; m < mapCount; ++m) {
    rgb[m].assign(pixels * 3, 0.f);
    weight[m].assign(pixels, 0.f);
  }
  for (size_t i = 0; i < decoded.size(); ++i) {
    const unsigned m = decoded.map[i];
    const size_t px = decoded.pixel[i];
    for (int c = 0; c < 3; ++c) rgb[m][px * 3 + c] = colours[i * 3 + c];
    weight[m][px] = 1.f;
  }
  if (mapCount > 1)
    for (size_t px = 0; px < pixels; ++px)
      if (weight[1][px] == 0 && weight[0][px] > 0) {
        for (int c = 0; c < 3; ++c) rgb[1][px * 3 + c] = rgb[0][px * 3 + c];
        weight[1][px] = 1.f;
      }
  std::vector<Picture> out;
  for (unsigned m = 0; m < mapCount; ++m) {
    pushPull(rgb[m], weight[m], width, height, 3);
    out.push_back(rgbToYuv420(rgb[m], width, height));
  }
  return out;
}

/// Runs fn(i) for i in [0, count) on up to `threads` threads; rethrows the first failure.
template <typename Fn>
void parallelFor(size_t count, int threads, Fn fn) {
  const size_t workers = std::max<size_t>(1, std::min<size_t>(size_t(std::max(threads, 1)), count));
  std::vector<std::thread> pool;
  std::exception_ptr failure;
  std::mutex failureLock;
  for (size_t w = 0; w < workers; ++w)
    pool.emplace_back([&, w] {
      try {
        for (size_t i = w; i < count; i += workers) fn(i);
      } catch (...) {
        std::lock_guard<std::mutex> guard(failureLock);
        if (!failure) failure = std::current_exception();
      }
    });
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
}

// ------------------------------------------------------------------ atlas

/// A patch as an INTRA patch data unit: its absolute parameters, which every other coding of it
/// must reproduce.
PatchDataUnit intraPatch(const EncPatch& p, const EncoderConfig& cfg) {
  const Plane6& P = kPlanes[p.plane];
  const int32_t maxCoord = int32_t((1u << cfg.geometryBits) - 1);
  PatchDataUnit d;
  d.mode = PatchMode::Intra;
  d.pos2dX = p.placement.u0;
  d.pos2dY = p.placement.v0;
  d.size2dXMinus1 = p.placement.sizeU0 - 1;
  d.size2dYMinus1 = p.placement.sizeV0 - 1;
  d.offset3dU = uint64_t(p.tangentMin) * cfg.lod;
  d.offset3dV = uint64_t(p.bitangentMin) * cfg.lod;
  d.offset3dD = uint64_t(P.mode ? maxCoord - p.minDepth : p.minDepth);
  d.projectionId = p.plane;
  d.orientation = p.placement.orientation;
  if (cfg.lod > 1) {
    d.lodEnabled = true;
    d.lodScaleXMinus1 = cfg.lod - 1;
    d.lodScaleYIdc = cfg.lod - 1;
  }
  return d;
}

/// Lengths of the Exp-Golomb codes ue(v) and se(v).
size_t ueBits(uint64_t v) {
  size_t prefix = 0;
  while ((v + 1) >> (prefix + 1)) ++prefix;
  return 2 * prefix + 1;
}
size_t seBits(int64_t v) { return ueBits(v > 0 ? uint64_t(2 * v - 1) : uint64_t(-2 * v)); }

/// Bits of one patch_information_data() as the writer codes it with this encoder's parameter sets
/// (one reference frame; no point local reconstruction, patch size quantizer or 3D range), the
/// patch mode included: I_INTRA is code 0 in I tiles; P_SKIP 0, P_INTER 2 and P_INTRA 3 in P tiles.
size_t patchBits(const PatchDataUnit& d, TileType tile, const EncoderConfig& cfg) {
  switch (d.mode) {
    case PatchMode::Skip:
      return ueBits(0);
    case PatchMode::Inter:
      return ueBits(2) + seBits(d.refPatchIndex) + seBits(d.deltaPos2dX) + seBits(d.deltaPos2dY) + seBits(d.deltaSize2dX) +
             seBits(d.deltaSize2dY) + seBits(d.deltaOffset3dU) + seBits(d.deltaOffset3dV) + seBits(d.deltaOffset3dD);
    default: {  // INTRA: the encoder writes no MERGE, RAW or EOM patches
      size_t bits = ueBits(tile == TileType::I ? 0 : 3) + ueBits(d.pos2dX) + ueBits(d.pos2dY) + ueBits(d.size2dXMinus1) +
                    ueBits(d.size2dYMinus1) + 3 * size_t(cfg.geometryBits) + ceilLog2(6) + 1;
      if (cfg.lod > 1) bits += 1 + ueBits(d.lodScaleXMinus1) + ueBits(d.lodScaleYIdc);
      return bits;
    }
  }
}

size_t tileBits(const std::vector<PatchDataUnit>& patches, TileType type, const EncoderConfig& cfg) {
  size_t bits = ueBits(uint32_t(type));
  for (const PatchDataUnit& d : patches) bits += patchBits(d, type, cfg);
  return bits;
}

/// An INTER patch takes its projection, orientation and level of detail from its reference, so
/// only a reference that has the same ones can predict a patch.
bool canPredict(const PatchDataUnit& patch, const PatchDataUnit& reference) {
  return patch.projectionId == reference.projectionId && patch.orientation == reference.orientation &&
         patch.lodEnabled == reference.lodEnabled && patch.lodScaleXMinus1 == reference.lodScaleXMinus1 &&
         patch.lodScaleYIdc == reference.lodScaleYIdc;
}

/// `patch` as deltas against its reference patch (both as INTRA data units, i.e. absolute), which
/// is `refPatchIndex` away from the index the tile's INTER patches count from.
PatchDataUnit interPatch(const PatchDataUnit& patch, const PatchDataUnit& reference, int64_t refPatchIndex) {
  PatchDataUnit d;
  d.mode = PatchMode::Inter;
  d.refPatchIndex = int32_t(refPatchIndex);
  d.deltaPos2dX = int32_t(patch.pos2dX) - int32_t(reference.pos2dX);
  d.deltaPos2dY = int32_t(patch.pos2dY) - int32_t(reference.pos2dY);
  d.deltaSize2dX = int32_t(patch.size2dXMinus1) - int32_t(reference.size2dXMinus1);
  d.deltaSize2dY = int32_t(patch.size2dYMinus1) - int32_t(reference.size2dYMinus1);
  d.deltaOffset3dU = int32_t(int64_t(patch.offset3dU) - int64_t(reference.offset3dU));
  d.deltaOffset3dV = int32_t(int64_t(patch.offset3dV) - int64_t(reference.offset3dV));
  d.deltaOffset3dD = int32_t(int64_t(patch.offset3dD) - int64_t(reference.offset3dD));  // no D quantizer
  return d;
}

bool repeatsReference(const PatchDataUnit& d) {
  return d.mode == PatchMode::Inter && d.deltaPos2dX == 0 && d.deltaPos2dY == 0 && d.deltaSize2dX == 0 &&
         d.deltaSize2dY == 0 && d.deltaOffset3dU == 0 && d.deltaOffset3dV == 0 && d.deltaOffset3dD == 0;
}

/// Turns INTER patches that repeat their reference into SKIP patches, where every reading of SKIP
/// decodes them alike. A SKIP patch copies the previous frame's patch of its own index; how it
/// moves the index later INTER patches count from is read differently (TMC2's decoder adds the
/// skip patch's own index to it; the INTER rule would set it past the copied patch). So only a run
/// of patches that each repeat the reference of their own index becomes SKIP, a run that starts
/// where the count already stands and after which no INTER patch follows. A frame that repeats
/// its predecessor is all SKIP: one bit per patch.
void useSkipPatches(std::vector<PatchDataUnit>& tile, const std::vector<int>& reference) {
  size_t end = tile.size();
  while (end > 0 && tile[end - 1].mode != PatchMode::Inter) --end;
  size_t start = end;
  while (start > 0 && reference[start - 1] == int(start - 1) && repeatsReference(tile[start - 1])) --start;
  int64_t counted = 0;
  for (size_t i = 0; i < start; ++i)
    if (tile[i].mode == PatchMode::Inter) counted = reference[i] + 1;
  if (counted != int64_t(start)) ++start;  // that patch stays INTER, which brings the count to start + 1
  for (size_t i = start; i < end; ++i) {
    tile[i] = PatchDataUnit{};
    tile[i].mode = PatchMode::Skip;
  }
}

/// A frame's patches coded in a P tile against the previous frame's (`previous`, absolute): a patch
/// with a reference it can be predicted from is INTER when that costs fewer bits than INTRA,
/// SKIP where useSkipPatches allows, INTRA otherwise. Either way the decoder derives `intra`.
std::vector<PatchDataUnit> predictTile(const std::vector<PatchDataUnit>& intra, const std::vector<int>& reference,
                                       const std::vector<PatchDataUnit>& previous, const EncoderConfig& cfg) {
  std::vector<PatchDataUnit> tile = intra;
  int64_t counted = 0;  // the index INTER patches count from: past the last one's reference
  for (size_t i = 0; i < tile.size(); ++i) {
    if (reference[i] < 0 || !canPredict(intra[i], previous.at(size_t(reference[i])))) continue;
    const PatchDataUnit inter = interPatch(intra[i], previous[size_t(reference[i])], reference[i] - counted);
    if (patchBits(inter, TileType::P, cfg) >= patchBits(intra[i], TileType::P, cfg)) continue;
    tile[i] = inter;
    counted = reference[i] + 1;
  }
  useSkipPatches(tile, reference);
  return tile;
}

/// The geometry smoothing SEI (payload type 66) asking for grid smoothing: one persistent
/// instance, method 1, grid 8, threshold 64, EOM points not filtered (there are none).
Sei geometrySmoothingSei() {
  Sei sei;
  sei.payloadType = 66;
  sei.prefix = true;
  sei.essential = true;
  sei.persistence = true;
  GeometrySmoothingInstance instance;
  instance.methodType = 1;
  instance.gridSizeMinus2 = 8 - 2;
  instance.threshold = 64;
  sei.geometrySmoothing.emplace_back(0, instance);
  BitWriter w;
  w.flag(sei.persistence);
  w.flag(sei.reset);
  w.u(1, 8);  // instances updated
  w.u(0, 8);  // instance index
  w.flag(instance.cancel);
  w.ue(instance.methodType);
  w.flag(instance.filterEomPoints);
  w.u(instance.gridSizeMinus2, 7);
  w.u(instance.threshold, 8);
  w.rbspTrailingBits();  // the payload's byte alignment
  sei.payload = w.take();
  return sei;
}

/// The sequence's parameter sets and atlas tile layers, without attribute information and videos:
/// the encoder first reconstructs the geometry through it. The first frame is an I tile; with
/// inter prediction, each later frame is a P tile predicted from the previous frame when that
/// costs fewer bits than an I tile.
CodedSequence describeSequence(const std::vector<FramePatches>& framePatches, const EncoderConfig& cfg, uint32_t width,
                               uint32_t height, EncodeStats& stats) {
  CodedSequence seq;
  ProfileTierLevel& ptl = seq.vps.ptl;
  ptl.codecGroup = cfg.codec == VideoCodec::Avc ? uint8_t(CodecGroup::AvcProgressiveHigh) : uint8_t(CodecGroup::HevcMain10);
  ptl.toolset = 0;
  // Rec1: duplicate point removal (two maps) is a Rec1 tool; without post-processing SEI, Rec1
  // adds nothing else (Rec0 decoders, TMC2's among them, keep the duplicates).
  ptl.reconstruction = 1;
  ptl.level = 30;
  VpsAtlas atlas;
  atlas.frameWidth = width;
  atlas.frameHeight = height;
  atlas.mapCountMinus1 = uint8_t(cfg.mapCount - 1);
  atlas.mapAbsoluteCoding.assign(cfg.mapCount, true);
  atlas.mapPredictorIndexDiff.assign(cfg.mapCount, 0);
  atlas.occupancy.lossyThreshold = occupancyThreshold(cfg);
  atlas.geometry.coordinatesBitDepthMinus1 = uint8_t(cfg.geometryBits - 1);
  seq.vps.atlases.push_back(atlas);

  const uint32_t frameCount = uint32_t(framePatches.size());
  const bool inter = cfg.interPrediction && frameCount > 1;
  Asps asps;
  asps.frameWidth = width;
  asps.frameHeight = height;
  asps.geometry3dBitDepthMinus1 = uint8_t(cfg.geometryBits - 1);
  asps.geometry2dBitDepthMinus1 = 7;
  asps.log2MaxAfocLsbMinus4 = ceilLog2(frameCount) > 4 ? ceilLog2(frameCount) - 4 : 0;
  if (inter) {
    RefListEntry previousFrame;  // short-term, AFOC difference +1
    previousFrame.absDeltaAfoc = 1;
    asps.refLists.push_back({previousFrame});
    asps.maxDecAtlasFrameBufferingMinus1 = 1;  // the reference and the frame being decoded
  }
  asps.log2PatchPackingBlockSize = 4;
  asps.mapCountMinus1 = uint8_t(cfg.mapCount - 1);
  asps.extension = true;
  asps.vpccExtension = true;
  asps.removeDuplicatePoints = cfg.mapCount > 1;
  seq.asps.push_back(asps);
  Afps afps;
  afps.lodModeEnabled = cfg.lod > 1;
  seq.afps.push_back(afps);

  std::vector<PatchDataUnit> previous;
  for (size_t f = 0; f < framePatches.size(); ++f) {
    std::vector<PatchDataUnit> intra;
    std::vector<int> reference;
    for (const EncPatch& p : framePatches[f].patches) {
      intra.push_back(intraPatch(p, cfg));
      reference.push_back(p.reference);
    }
    AtlasTileLayer layer;
    layer.header.nalType = f == 0 ? kNalIdrNLp : kNalTrailR;
    layer.header.type = TileType::I;
    layer.header.afocLsb = uint32_t(f % (size_t(1) << (asps.log2MaxAfocLsbMinus4 + 4)));
    layer.header.raw3dOffsetBitCountMinus1 = 0;
    if (inter) {
      layer.header.refListFromAsps = true;
      layer.header.refList = asps.refLists[0];
    }
    layer.patches = intra;
    if (inter && f > 0) {
      std::vector<PatchDataUnit> predicted = predictTile(intra, reference, previous, cfg);
      if (tileBits(predicted, TileType::P, cfg) < tileBits(intra, TileType::I, cfg)) {
        layer.header.type = TileType::P;
        layer.patches = std::move(predicted);
        ++stats.pTiles;
      }
    }
    if (cfg.geometrySmoothing) layer.prefixSei.push_back(geometrySmoothingSei());
    for (const PatchDataUnit& d : layer.patches) {
      if (d.mode == PatchMode::Inter) ++stats.interPatches;
      if (d.mode == PatchMode::Skip) ++stats.skipPatches;
    }
    seq.tileLayers.push_back(std::move(layer));
    previous = std::move(intra);
  }
  return seq;
}

void addVideo(CodedSequence& seq, V3cUnitType type, std::vector<uint8_t> bits) {
  VideoSubBitstream v;
  v.header.type = type;
  v.data = std::move(bits);
  seq.videos.push_back(std::move(v));
}

}  // namespace

std::vector<uint8_t> encodeSequence(const std::vector<InputFrame>& frames, const EncoderConfig& cfg, VideoEncoder& video,
                                    EncodeStats* stats) {
  if (frames.empty()) throw std::invalid_argument("no frames to encode");
  if (cfg.geometryBits < 4 || cfg.geometryBits > 16) throw std::invalid_argument("geometry bit depth must be 4–16");
  if (cfg.mapCount < 1 || cfg.mapCount > 2) throw std::invalid_argument("map count must be 1 or 2");
  if (cfg.occupancyPrecision != 1 && cfg.occupancyPrecision != 2 && cfg.occupancyPrecision != 4)
    throw std::invalid_argument("occupancy precision must be 1, 2 or 4");
  if (cfg.lod < 1 || cfg.lod > 4) throw std::invalid_argument("level of detail must be 1–4");
  if (cfg.surfaceThickness < 1 || cfg.surfaceThickness > 64) throw std::invalid_argument("surface thickness must be 1–64");
  const uint32_t limit = 1u << cfg.geometryBits;
  for (size_t f = 0; f < frames.size(); ++f) {
    const InputFrame& fr = frames[f];
    if (fr.size() == 0) throw std::invalid_argument("frame " + std::to_string(f) + " has no points");
    if (fr.colors.size() != fr.positions.size()) throw std::invalid_argument("frame " + std::to_string(f) + ": colours and positions differ in count");
    for (uint16_t c : fr.positions)
      if (c >= limit)
        throw std::invalid_argument("frame " + std::to_string(f) + ": coordinate " + std::to_string(c) + " outside the " +
                                    std::to_string(cfg.geometryBits) + "-bit grid");
  }
  EncodeStats st;
  st.frames = frames.size();
  const auto t0 = Clock::now();

  // Patches per frame (frames are independent: spread them over the threads).
  std::vector<FramePatches> framePatches(frames.size());
  parallelFor(frames.size(), cfg.threads, [&](size_t f) {
    framePatches[f] = generatePatches(frames[f], cfg);
    for (EncPatch& p : framePatches[f].patches) fillPatch(p);
  });
  size_t area = 0;
  uint32_t widest = kBlock;
  for (const auto& fp : framePatches) {
    size_t frameArea = 0;
    for (const EncPatch& p : fp.patches) {
      frameArea += size_t(p.width) * p.height;
      widest = std::max(widest, std::min(p.width, p.height));
    }
    area = std::max(area, frameArea);
  }
  uint32_t width = cfg.atlasWidth;
  if (width == 0) {
    width = uint32_t(std::ceil(std::sqrt(double(area) * 1.25)));
    width = std::max<uint32_t>({width, widest, 64});
    width = (width + 63) / 64 * 64;
  }
  if (width % kBlock || width < widest) throw std::invalid_argument("atlas width must be a multiple of 16 and fit the widest patch");
  uint32_t heightBlocks = 1;
  for (size_t f = 0; f < framePatches.size(); ++f) {
    if (f) orderForPrediction(framePatches[f].patches, framePatches[f - 1].patches);
    heightBlocks = std::max(heightBlocks, packPatches(framePatches[f].patches, f ? &framePatches[f - 1].patches : nullptr, width / kBlock));
  }
  const uint32_t height = heightBlocks * kBlock;
  for (const auto& fp : framePatches) {
    st.coveredPoints += fp.covered;
    st.patches += fp.patches.size();
  }
  for (const auto& fr : frames) st.inputPoints += fr.size();

  // Occupancy and geometry: pictures per frame (geometry per frame and map, maps interleaved).
  std::vector<Picture> occupancy(frames.size()), geometry(frames.size() * cfg.mapCount);
  parallelFor(frames.size(), cfg.threads, [&](size_t f) {
    GeometryImages img = renderGeometry(framePatches[f].patches, width, height, cfg);
    occupancy[f] = std::move(img.occupancy);
    for (unsigned m = 0; m < cfg.mapCount; ++m) geometry[f * cfg.mapCount + m] = std::move(img.geometry[m]);
  });
  CodedSequence seq = describeSequence(framePatches, cfg, width, height, st);
  framePatches.clear();
  st.segmentationMs = msSince(t0);

  VideoEncodeSettings base;
  base.codec = cfg.codec;
  base.preset = cfg.preset;
  VideoEncodeSettings occSettings = base, geoSettings = base, attSettings = base;
  occSettings.qp = cfg.occupancyQp;
  occSettings.lossless = losslessOccupancy(cfg);
  geoSettings.qp = cfg.geometryQp;
  attSettings.qp = cfg.attributeQp;
  std::vector<uint8_t> occBits, geoBits, attBits;
  auto t1 = Clock::now();
  parallelFor(2, cfg.threads, [&](size_t which) {
    if (which == 0) occBits = video.encode(occupancy, occSettings);
    else geoBits = video.encode(geometry, geoSettings);
  });
  st.videoMs = msSince(t1);
  addVideo(seq, V3cUnitType::OVD, std::move(occBits));
  addVideo(seq, V3cUnitType::GVD, std::move(geoBits));

  // Colours: decode occupancy and geometry as the decoder will, reconstruct the points with the
  // decoder's own reconstruction, and give each decoded point the colour its source neighbours
  // call for (color_transfer.h). The attribute pictures carry those colours.
  const auto t2 = Clock::now();
  const DecodedVideo decoded = decodeVideo(seq, *makeLibavDecoder());
  const std::vector<DecodedAtlasFrame> atlasFrames = decodeAtlas(seq);
  std::vector<Picture> attribute(frames.size() * cfg.mapCount);
  parallelFor(frames.size(), cfg.threads, [&](size_t f) {
    const PointCloudFrame points = reconstructFrame(seq, atlasFrames.at(f), decoded, true);
    const std::vector<float> colours = transferColours(frames[f].positions.data(), frames[f].colors.data(), frames[f].size(),
                                                       points.positions.data(), points.size());
    std::vector<Picture> pictures = renderAttributes(points, colours, width, height, cfg.mapCount);
    for (unsigned m = 0; m < cfg.mapCount; ++m) attribute[f * cfg.mapCount + m] = std::move(pictures[m]);
  });
  st.transferMs = msSince(t2);

  const auto t3 = Clock::now();
  attSettings.threads = std::max(1, cfg.threads);
  attBits = video.encode(attribute, attSettings);
  st.videoMs += msSince(t3);
  seq.vps.atlases[0].attributes.push_back(AttributeInformation{});
  st.occupancyBytes = seq.videos[0].data.size();
  st.geometryBytes = seq.videos[1].data.size();
  st.attributeBytes = attBits.size();
  addVideo(seq, V3cUnitType::AVD, std::move(attBits));

  std::vector<uint8_t> bytes = writeSampleStream({seq});
  st.totalBytes = bytes.size();
  st.atlasBytes = st.totalBytes - st.occupancyBytes - st.geometryBytes - st.attributeBytes;
  st.atlasWidth = width;
  st.atlasHeight = height;
  if (stats) *stats = st;
  return bytes;
}

}  // namespace vpcc
