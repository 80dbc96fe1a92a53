#include "vpcc/postprocess.h"

#include <algorithm>
#include <array>
#include <atomic>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>

#include "vpcc/bit_reader.h"
#include "vpcc/color.h"
#include "common/parallel.h"
#include "neighbour_tree.h"

namespace vpcc {

bool gridSmoothingFor(const CodedSequence& seq, const DecodedAtlasFrame& frame, GridSmoothingParams& params) {
  // Only the Rec1 reconstruction profile applies grid geometry smoothing.
  if (seq.vps.ptl.reconstruction != 1 || !frame.geometrySmoothing) return false;
  bool enabled = false;
  for (const auto& [index, instance] : frame.geometrySmoothing->geometrySmoothing) {
    if (instance.cancel) continue;
    if (instance.methodType == 1) {
      enabled = true;
      params.gridSize = instance.gridSizeMinus2 + 2u;
      params.threshold = instance.threshold;
    }
  }
  return enabled;
}

bool attributeSmoothingFor(const CodedSequence& seq, const DecodedAtlasFrame& frame, AttributeSmoothingParams& params) {
  // Rec1 and Rec2 apply attribute smoothing (Rec0 none); any live instance of any attribute
  // turns it on, the last one giving the thresholds — what TMC2's decoder does.
  if (seq.vps.ptl.reconstruction == 0 || !frame.attributeSmoothing) return false;
  bool enabled = false;
  for (const AttributeSmoothingUpdate& update : frame.attributeSmoothing->attributeSmoothing) {
    if (update.cancel) continue;
    for (const auto& [index, instance] : update.instances) {
      if (instance.cancel) continue;
      enabled = true;
      params.threshold = instance.threshold;
      params.thresholdVariation = instance.thresholdVariation;
      params.thresholdDifference = instance.thresholdDifference;
    }
  }
  return enabled;
}

size_t smoothAttributesGrid(PointCloudFrame& frame, const AttributeSmoothingParams& params,
                            const std::vector<uint8_t>& moved, std::vector<uint8_t>& recoloured) {
  const size_t n = frame.size();
  recoloured.assign(n, 0);
  if (n == 0 || frame.boundary.size() != n || frame.patchIndex.size() != n || frame.colors16.size() != n * 3) return 0;
  const int16_t* pos = frame.positions.data();
  uint16_t* colour = frame.colors16.data();
  const int g = int(std::max<uint32_t>(frame.occupancyPrecision, 1)), half = g / 2;
  if (frame.bitDepth3d > 16) throw ParseError("attribute smoothing of " + std::to_string(frame.bitDepth3d) + "-bit geometry is beyond this decoder");
  const int size = 1 << frame.bitDepth3d, w = size / g;
  if (w <= 0) return 0;
  const size_t w2 = size_t(w) * w, gridCells = w2 * size_t(w);
  const int margin = std::max(half, 1);
  auto inside = [&](const int16_t* p) {
    for (int d = 0; d < 3; ++d)
      if (p[d] < margin || size <= p[d] + margin) return false;
    return true;
  };
  // A point takes part when it is a boundary point that geometry smoothing did not move (TMC2
  // marks moved points as another boundary type).
  auto candidate = [&](size_t i) { return frame.boundary[i] == 1 && (moved.empty() || !moved[i]) && inside(pos + i * 3); };
  auto firstCell = [&](const int16_t* p, int c[3]) {
    for (int d = 0; d < 3; ++d) c[d] = p[d] / g + ((p[d] % g < half) ? -1 : 0);
  };
  // Cells around candidate points get a slot. A hash map, not a dense grid: with 2-pixel
  // occupancy precision a 10-bit grid has 2^27 cells, of which a frame touches a few thousand.
  std::unordered_map<size_t, int32_t> slotMap;
  int32_t slots = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!candidate(i)) continue;
    int c[3];
    firstCell(pos + i * 3, c);
    for (int dx = 0; dx < 2; ++dx)
      for (int dy = 0; dy < 2; ++dy)
        for (int dz = 0; dz < 2; ++dz)
          if (slotMap.emplace(size_t(c[0] + dx) + size_t(c[1] + dy) * w + size_t(c[2] + dz) * w2, slots).second) ++slots;
  }
  auto slotAt = [&](size_t cellId) {
    const auto it = slotMap.find(cellId);
    return it == slotMap.end() ? -1 : it->second;
  };
  if (slots == 0) return 0;
  // Per cell: colour sum (float, as the reference accumulates), count, first patch, whether a
  // second patch shows up, and every luma value (for the mean/median test).
  std::vector<uint16_t> count(size_t(slots), 0);
  std::vector<float> sum(size_t(slots) * 3, 0.f);
  std::vector<uint32_t> patchOf(size_t(slots), 0);
  std::vector<uint8_t> mixed(size_t(slots), 0);
  std::vector<std::vector<uint16_t>> luma(static_cast<size_t>(slots));
  for (size_t i = 0; i < n; ++i) {
    const int16_t* p = pos + i * 3;
    if (p[0] < 0 || p[1] < 0 || p[2] < 0) continue;
    const size_t cellId = size_t(p[0] / g) + size_t(p[1] / g) * w + size_t(p[2] / g) * w2;
    if (cellId >= gridCells) continue;
    const int32_t s = slotAt(cellId);
    if (s < 0) continue;
    const uint32_t patch = frame.patchIndex[i] + 1;
    if (count[s] == 0) {
      patchOf[s] = patch;
      mixed[s] = 0;
    } else if (!mixed[s] && patchOf[s] != patch) {
      mixed[s] = 1;
    }
    for (int c = 0; c < 3; ++c) sum[size_t(s) * 3 + c] += float(colour[i * 3 + c]);
    ++count[s];
    luma[s].push_back(colour[i * 3]);
  }
  // Whether a cell's luma is textured (mean and median apart by more than the variation
  // threshold); computed once per cell, on demand.
  std::vector<int8_t> textured(size_t(slots), -1);
  const double variationLimit = double(params.thresholdVariation) * 256.0;
  auto isTextured = [&](int32_t s) {
    if (textured[s] < 0) {
      auto& values = luma[s];
      double mean = 0;
      for (uint16_t v : values) mean += double(v);
      mean /= double(values.size());
      std::sort(values.begin(), values.end());
      const size_t m = values.size();
      const double median = m % 2 == 0 ? (double(values[m / 2]) + double(values[m / 2 - 1])) / 2.0 : double(values[m / 2]);
      textured[s] = std::abs(mean - median) > variationLimit ? 1 : 0;
    }
    return textured[s] == 1;
  };
  const double differenceLimit = double(params.thresholdDifference) * 256.0;
  const int g2 = g * 2;
  const double g2cube = double(g2) * g2 * g2;
  std::vector<std::array<uint16_t, 3>> smoothed;
  std::vector<uint32_t> changed;
  for (size_t i = 0; i < n; ++i) {
    if (!candidate(i)) continue;
    const int16_t* p = pos + i * 3;
    const uint16_t* own = colour + i * 3;
    int c[3];
    firstCell(p, c);
    int32_t cell[2][2][2];
    bool seam = false;
    for (int dz = 0; dz < 2; ++dz)
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
          const int32_t s = slotAt(size_t(c[0] + dx) + size_t(c[1] + dy) * w + size_t(c[2] + dz) * w2);
          cell[dz][dy][dx] = s;
          if (mixed[s] && count[s] != 0) seam = true;
        }
    if (!seam) continue;
    // The eight cell means, each replaced by the point's own colour when it is empty, textured,
    // or (cells other than the first) too far in luma from the first.
    double mean[2][2][2][3];
    double firstLuma = 0;
    bool keep = false;
    for (int dz = 0; dz < 2 && !keep; ++dz)
      for (int dy = 0; dy < 2 && !keep; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
          const int32_t s = cell[dz][dy][dx];
          double* dst = mean[dz][dy][dx];
          const bool first = dx == 0 && dy == 0 && dz == 0;
          bool useOwn = count[s] == 0;
          if (!useOwn) {
            for (int k = 0; k < 3; ++k) dst[k] = double(sum[size_t(s) * 3 + k]) / double(count[s]);
            if (first) {
              // A textured first cell keeps the point as it is.
              if (count[s] > 1 && isTextured(s)) {
                keep = true;
                break;
              }
            } else {
              if (std::abs(firstLuma - dst[0]) > differenceLimit) useOwn = true;
              if (count[s] > 1 && isTextured(s)) useOwn = true;
            }
          }
          if (useOwn)
            for (int k = 0; k < 3; ++k) dst[k] = double(own[k]);
          if (first) firstLuma = dst[0];
        }
    if (keep) {
      // The reference still compares the point's own colour with itself: only a zero
      // threshold "changes" it, to the same value.
      continue;
    }
    int wHigh[3], wLow[3];
    for (int d = 0; d < 3; ++d) {
      wHigh[d] = (p[d] - c[d] * g - half) * 2 + 1;
      wLow[d] = g2 - wHigh[d];
    }
    double blend[3] = {0, 0, 0};
    for (int dz = 0; dz < 2; ++dz)
      for (int dy = 0; dy < 2; ++dy)
        for (int dx = 0; dx < 2; ++dx) {
          // 64-bit: the cell size is the occupancy precision, which a stream may make large.
          const int64_t weight = int64_t{dx ? wHigh[0] : wLow[0]} * (dy ? wHigh[1] : wLow[1]) * (dz ? wHigh[2] : wLow[2]);
          for (int k = 0; k < 3; ++k) blend[k] += mean[dz][dy][dx][k] * double(weight);
        }
    uint16_t result[3];
    for (int k = 0; k < 3; ++k) {
      const double v = blend[k] / g2cube + 0.5;
      result[k] = uint16_t(std::min<int64_t>(std::max<int64_t>(int64_t(v), 0), 65535));
    }
    const double change = std::abs(double(result[0]) - double(own[0])) * 10.0 / 256.0;
    if (change >= double(params.threshold)) {
      smoothed.push_back({result[0], result[1], result[2]});
      changed.push_back(uint32_t(i));
    }
  }
  // Applied after the pass: cell means were taken before any point changed, and a point's blend
  // only reads its own colour besides them.
  size_t recolouredCount = 0;
  for (size_t m = 0; m < changed.size(); ++m) {
    uint16_t* dst = colour + size_t(changed[m]) * 3;
    if (dst[0] != smoothed[m][0] || dst[1] != smoothed[m][1] || dst[2] != smoothed[m][2]) {
      std::copy(smoothed[m].begin(), smoothed[m].end(), dst);
      recoloured[changed[m]] = 1;
      ++recolouredCount;
    }
  }
  return recolouredCount;
}

namespace {

/// Set bits of a word (bit tricks: __builtin_popcount is a library call on baseline x86-64).
uint32_t bitCount(uint32_t v) {
  v = v - ((v >> 1) & 0x55555555u);
  v = (v & 0x33333333u) + ((v >> 2) & 0x33333333u);
  return (((v + (v >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
}

/// Grid geometry smoothing with cells of `g` voxels a side; `Cells` divides non-negative
/// coordinates by g (a shift when g is a power of two, as in every stream seen so far: integer
/// division is one of the slowest instructions in wasm, and this runs for every point).
template <typename Cells>
size_t smoothOnGrid(PointCloudFrame& frame, const GridSmoothingParams& params, const Cells cells, std::vector<uint8_t>& moved) {
  const size_t n = frame.size();
  int16_t* pos = frame.positions.data();
  const int g = int(params.gridSize), half = g / 2;
  int maxCoord = pos[0];
  for (size_t i = 0; i < n * 3; ++i) maxCoord = std::max<int>(maxCoord, pos[i]);
  const int w = (maxCoord + g - 1) / g;
  if (w <= 0) return 0;  // no point inside the grid
  const int margin = std::max(half, 1), limit = g * w;
  auto inside = [&](const int16_t* p) {
    for (int d = 0; d < 3; ++d)
      if (p[d] < margin || limit <= p[d] + margin) return false;
    return true;
  };
  // First of the 2×2×2 cells around a point (the cells whose centres enclose it); p is inside.
  auto firstCell = [&](const int16_t* p, int c[3]) {
    for (int d = 0; d < 3; ++d) c[d] = cells.quotient(p[d]) + (cells.remainder(p[d]) < half ? -1 : 0);
  };
  // Cells are indexed with one spare cell per axis: with an odd cell size the 2×2×2 cells of a
  // point near the top of the grid reach cell w (the margin, half a cell, rounds down), which
  // must not alias the next row's first cell or run past the grid's end.
  const size_t side = size_t(w) + 1, w2 = side * side;
  // Cells around boundary points get a slot, bounded so that a corrupt stream cannot ask for
  // gigabytes (10-bit geometry with 8³ cells needs 2^21). A bitmap says which cells have one, and
  // a cell's slot is its rank among them: the slotted cells before its bitmap word plus those
  // before it in the word. No cell-sized table (an 8 MB one for 2^21 cells, touched at random
  // by every lookup): the bitmap and the per-word counts, 1/16 of that, stay in cache. Slots
  // are numbered in cell order; a slot's sums still take its points in point order.
  const size_t gridCells = w2 * side;
  if (gridCells > kMaxGeometrySmoothingGridCells)
    throw ParseError("geometry smoothing grid of " + std::to_string(gridCells) + " cells is beyond this decoder's limit");
  const size_t words = (gridCells + 31) / 32;
  std::vector<uint32_t> hasSlot(words, 0);
  for (size_t i = 0; i < n; ++i) {
    const int16_t* p = pos + i * 3;
    if (frame.boundary[i] != 1 || !inside(p)) continue;
    int c[3];
    firstCell(p, c);
    for (int dz = 0; dz < 2; ++dz)
      for (int dy = 0; dy < 2; ++dy) {
        const size_t cell = size_t(c[0]) + size_t(c[1] + dy) * side + size_t(c[2] + dz) * w2;
        hasSlot[cell >> 5] |= 1u << (cell & 31);
        hasSlot[(cell + 1) >> 5] |= 1u << ((cell + 1) & 31);
      }
  }
  std::vector<int32_t> slotsBefore(words);
  int32_t slots = 0;
  for (size_t word = 0; word < words; ++word) {
    slotsBefore[word] = slots;
    slots += int32_t(bitCount(hasSlot[word]));
  }
  if (slots == 0) return 0;
  // (only for slotted cells)
  auto slotOf = [&](size_t cell) {
    return slotsBefore[cell >> 5] + int32_t(bitCount(hasSlot[cell >> 5] & ((1u << (cell & 31)) - 1)));
  };
  auto slotAt = [&](size_t cell) { return (hasSlot[cell >> 5] >> (cell & 31)) & 1u ? slotOf(cell) : -1; };
  // Per slot: point count, coordinate sum → mean (float, as the reference), first patch seen,
  // and whether points of another patch fall in it too.
  std::vector<uint16_t> cellCount(size_t(slots), 0);
  std::vector<float> cellCentre(size_t(slots) * 3, 0.f);
  std::vector<uint32_t> cellPatch(size_t(slots), 0);
  std::vector<uint8_t> cellMixed(size_t(slots), 0);
  for (size_t i = 0; i < n; ++i) {
    const int16_t* p = pos + i * 3;
    if (!inside(p)) continue;
    const int32_t s = slotAt(size_t(cells.quotient(p[0])) + size_t(cells.quotient(p[1])) * side + size_t(cells.quotient(p[2])) * w2);
    if (s < 0) continue;
    const uint32_t patch = frame.patchIndex[i] + 1;
    if (cellCount[s] == 0) {
      cellPatch[s] = patch;
      for (int d = 0; d < 3; ++d) cellCentre[size_t(s) * 3 + d] = 0.f;
      cellMixed[s] = 0;
    } else if (!cellMixed[s] && cellPatch[s] != patch) {
      cellMixed[s] = 1;
    }
    for (int d = 0; d < 3; ++d) cellCentre[size_t(s) * 3 + d] += float(p[d]);
    ++cellCount[s];
  }
  for (int32_t s = 0; s < slots; ++s)
    if (cellCount[s])
      for (int d = 0; d < 3; ++d) cellCentre[size_t(s) * 3 + d] /= float(cellCount[s]);

  // Each boundary point reads only the cell means (final by now) and its own position, and
  // writes only its own position and flag: the points split across threads freely.
  const int g2 = g * 2, g2cube = g2 * g2 * g2;
  std::atomic<size_t> movedTotal{0};
  parallel::forRanges(n, 16384, [&](size_t begin, size_t end) {
    size_t movedCount = 0;
    for (size_t i = begin; i < end; ++i) {
      int16_t* p = pos + i * 3;
      if (frame.boundary[i] != 1 || !inside(p)) continue;
      int c[3];
      firstCell(p, c);
      int32_t cell[2][2][2];
      bool mixed = false;
      for (int dz = 0; dz < 2; ++dz)
        for (int dy = 0; dy < 2; ++dy)
          for (int dx = 0; dx < 2; ++dx) {
            const int32_t s = slotOf(size_t(c[0] + dx) + size_t(c[1] + dy) * side + size_t(c[2] + dz) * w2);
            cell[dz][dy][dx] = s;
            if (cellMixed[s] && cellCount[s] != 0) mixed = true;
          }
      if (!mixed) continue;
      // Trilinear weights of the eight cell centroids (empty cells count as the point itself).
      int wHigh[3], wLow[3];
      for (int d = 0; d < 3; ++d) {
        wHigh[d] = (p[d] - c[d] * g - half) * 2 + 1;
        wLow[d] = g2 - wHigh[d];
      }
      double sum[3] = {0, 0, 0};
      // 64-bit: with the largest grid the SEI allows (257) a weight reaches 514³ ≈ 1.4·10^8, and
      // times a cell's point count it overflows int (UBSan, found by the postprocess target).
      int64_t count = 0;
      for (int dz = 0; dz < 2; ++dz) {
        const int wz = dz ? wHigh[2] : wLow[2];
        for (int dy = 0; dy < 2; ++dy) {
          const int wy = dy ? wHigh[1] : wLow[1];
          for (int dx = 0; dx < 2; ++dx) {
            const int wx = dx ? wHigh[0] : wLow[0];
            const int32_t s = cell[dz][dy][dx];
            const int weight = wx * wy * wz;
            for (int d = 0; d < 3; ++d) {
              const double v = cellCount[s] > 0 ? double(cellCentre[size_t(s) * 3 + d]) : double(p[d]);
              sum[d] += v * double(weight);
            }
            count += int64_t{weight} * cellCount[s];
          }
        }
      }
      count /= g2cube;
      if (count == 0) continue;  // the reference's distance is then NaN: never moves
      double centroid[3];
      for (int d = 0; d < 3; ++d) centroid[d] = sum[d] / double(g2cube) * double(count);
      double diff[3];
      for (int d = 0; d < 3; ++d) diff[d] = double(p[d]) * double(count) - centroid[d];
      const double dist2 = (diff[0] * diff[0] + diff[1] * diff[1] + diff[2] * diff[2]) / double(count) + 0.5;
      if (dist2 >= double(std::max(int64_t{params.threshold}, count) * 2)) {
        for (int d = 0; d < 3; ++d) p[d] = int16_t(int64_t(centroid[d] / double(count) + 0.5));
        moved[i] = 1;
        ++movedCount;
      }
    }
    movedTotal += movedCount;
  });
  return movedTotal;
}

/// Division by a power-of-two cell size, as shifts and masks.
struct PowerOfTwoCells {
  int shift;
  int quotient(int v) const { return v >> shift; }
  int remainder(int v) const { return v & ((1 << shift) - 1); }
};
/// Division by any other cell size.
struct AnyCells {
  int size;
  int quotient(int v) const { return v / size; }
  int remainder(int v) const { return v % size; }
};

}  // namespace

size_t smoothGeometryGrid(PointCloudFrame& frame, const GridSmoothingParams& params, std::vector<uint8_t>& moved) {
  const size_t n = frame.size();
  moved.assign(n, 0);
  if (n == 0 || frame.boundary.size() != n || frame.patchIndex.size() != n) return 0;
  const int g = int(params.gridSize);
  if ((g & (g - 1)) == 0) {
    int shift = 0;
    while ((1 << shift) < g) ++shift;
    return smoothOnGrid(frame, params, PowerOfTwoCells{shift}, moved);
  }
  return smoothOnGrid(frame, params, AnyCells{g}, moved);
}

namespace {

/// transferColors from the points at `sourcePositions` (the frame before smoothing: the same
/// points, in the same order, as the target's) with colours `srcColor`, which may be the
/// target's own colours: every read of them happens before the moved points' new colours are
/// written. `sourceTree`, when given, is the tree of `sourcePositions` (perhaps partly split
/// already); else one is made here.
void transferColorsFrom(const int16_t* sourcePositions, const uint16_t* srcColor, PointCloudFrame& target,
                        const std::vector<uint8_t>& moved, NeighbourTree* sourceTree = nullptr) {
  const size_t nt = target.size(), ns = nt;
  std::vector<uint32_t> movedList;
  for (size_t i = 0; i < nt; ++i)
    if (moved[i]) movedList.push_back(uint32_t(i));
  if (movedList.empty()) return;
  const uint16_t* tgtColor = target.colors16.data();
  constexpr uint32_t kNotLooked = UINT32_MAX, kNoVote = UINT32_MAX - 1;
  // Per source point: its nearest smoothed point for the backward votes (found once, below).
  std::vector<uint32_t> nearestOf(ns, kNotLooked);
  std::unique_ptr<double[]> distanceOf(new double[ns]);
  auto findNearestSmoothed = [&](NeighbourTree& targetTree, uint32_t s) {
    uint32_t found;
    double d;
    if (targetTree.search(sourcePositions + size_t(s) * 3, 1, &found, &d) == 0) {  // (only an empty frame finds none)
      nearestOf[s] = kNoVote;
    } else {
      nearestOf[s] = found;
      distanceOf[s] = d;
    }
  };

  // Forward: each moved point from its 8 nearest unsmoothed points (the one at its position if
  // any, else weights 1 / (d² + 4)). The neighbours found are also the backward candidates.
  constexpr size_t kForward = 8;
  std::vector<uint16_t> forward(movedList.size() * 3);
  std::vector<uint32_t> candidates;  // source indices, in the order found
  auto forwardPass = [&] {
    std::optional<NeighbourTree> ownTree;
    if (!sourceTree) sourceTree = &ownTree.emplace(sourcePositions, ns);
    candidates.reserve(movedList.size() * kForward);
    uint32_t idx[kForward];
    double dist[kForward];
    for (size_t m = 0; m < movedList.size(); ++m) {
      const size_t t = movedList[m];
      const size_t found = sourceTree->search(target.positions.data() + t * 3, kForward, idx, dist);
      candidates.insert(candidates.end(), idx, idx + found);
      uint16_t* out = &forward[m * 3];
      if (found == 0) {
        std::copy(tgtColor + t * 3, tgtColor + t * 3 + 3, out);
      } else if (dist[0] < 0.0001 || found == 1) {
        std::copy(srcColor + size_t(idx[0]) * 3, srcColor + size_t(idx[0]) * 3 + 3, out);
      } else {
        double acc[3] = {0, 0, 0}, weights = 0;
        for (size_t k = 0; k < found; ++k) {
          const double weight = 1 / (dist[k] + 4.0);
          for (int c = 0; c < 3; ++c) acc[c] += srcColor[size_t(idx[k]) * 3 + c] * weight;
          weights += weight;
        }
        for (int c = 0; c < 3; ++c)
          out[c] = uint16_t(std::min(std::max(std::round(acc[c] / weights), 0.0), 65535.0));
      }
    }
  };
  // The smoothed frame's tree, for the backward searches. With a helper thread it is built, and
  // every moved point's backward search done (a moved candidate always needs it), beside the
  // forward pass: the two passes share nothing but read-only input. Alone, only the candidates
  // are searched, when met below. A search gives the same answer whenever it runs.
  std::optional<NeighbourTree> targetTree;
  auto targetPass = [&] {
    targetTree.emplace(target.positions.data(), nt);
    if (parallel::helpers() == 0) return;
    for (const uint32_t s : movedList) findNearestSmoothed(*targetTree, s);
  };
  parallel::runBoth(forwardPass, targetPass);

  // Backward: every candidate whose nearest smoothed point is a moved point of nearly the same
  // colour (each component within 40) votes for it, weighted 1 / (d + 4).
  std::vector<int32_t> movedSlot(nt, -1);
  for (size_t m = 0; m < movedList.size(); ++m) movedSlot[movedList[m]] = int32_t(m);
  struct Vote {
    double dist;
    uint16_t color[3];
  };
  // Votes as cast (candidate order), with the moved point each is for; grouped per moved point
  // below, keeping that order (no per-point lists: thousands of small allocations per frame).
  std::vector<Vote> cast;
  std::vector<uint32_t> castFor;
  // An unmoved candidate still has its own copy in the smoothed frame at distance 0, so its
  // nearest smoothed point can only be a moved one if a moved point landed exactly on it: only
  // those (and moved candidates) need the search.
  auto key = [](const int16_t* p) {
    return (uint64_t(uint16_t(p[0])) << 32) | (uint64_t(uint16_t(p[1])) << 16) | uint64_t(uint16_t(p[2]));
  };
  std::vector<uint64_t> movedAt(movedList.size());
  for (size_t m = 0; m < movedList.size(); ++m) movedAt[m] = key(target.positions.data() + size_t(movedList[m]) * 3);
  std::sort(movedAt.begin(), movedAt.end());
  // A point is the candidate of several moved points (the moved points cluster along patch
  // borders): whether it needs the search, and its nearest smoothed point, are found once.
  for (const uint32_t s : candidates) {
    if (nearestOf[s] == kNotLooked) {
      if (!moved[s] && !std::binary_search(movedAt.begin(), movedAt.end(), key(sourcePositions + size_t(s) * 3)))
        nearestOf[s] = kNoVote;
      else
        findNearestSmoothed(*targetTree, s);
    }
    if (nearestOf[s] == kNoVote) continue;
    const uint32_t nearest = nearestOf[s];
    const double d = distanceOf[s];
    const int32_t slot = movedSlot[nearest];
    if (slot < 0) continue;
    const uint16_t* cs = srcColor + size_t(s) * 3;
    const uint16_t* ct = tgtColor + size_t(nearest) * 3;
    if (std::abs(cs[0] - ct[0]) < 40 && std::abs(cs[1] - ct[1]) < 40 && std::abs(cs[2] - ct[2]) < 40)
    {
      cast.push_back(Vote{d, {cs[0], cs[1], cs[2]}});
      castFor.push_back(uint32_t(slot));
    }
  }
  // Counting sort by moved point, stable: each point's votes stay in the order they were cast,
  // which the sort below (not a stable one) starts from.
  std::vector<uint32_t> firstVote(movedList.size() + 1, 0);
  for (const uint32_t slot : castFor) ++firstVote[slot + 1];
  for (size_t m = 0; m < movedList.size(); ++m) firstVote[m + 1] += firstVote[m];
  std::vector<Vote> votes(cast.size());
  {
    std::vector<uint32_t> next(firstVote.begin(), firstVote.end() - 1);
    for (size_t v = 0; v < cast.size(); ++v) votes[next[castFor[v]]++] = cast[v];
  }

  std::vector<uint16_t> result(movedList.size() * 3);
  for (size_t m = 0; m < movedList.size(); ++m) {
    Vote* const list = votes.data() + firstVote[m];
    const size_t listSize = firstVote[m + 1] - firstVote[m];
    uint16_t* out = &result[m * 3];
    if (listSize == 0) {
      std::copy(&forward[m * 3], &forward[m * 3] + 3, out);
      continue;
    }
    std::sort(list, list + listSize, [](const Vote& a, const Vote& b) { return a.dist < b.dist; });
    double centroid[3];
    if (listSize == 1) {
      for (int c = 0; c < 3; ++c) centroid[c] = list[0].color[c];
    } else {
      double acc[3] = {0, 0, 0}, weights = 0;
      for (size_t k = 0; k < listSize; ++k) {
        const Vote& v = list[k];
        const double weight = 1 / (std::sqrt(v.dist) + 4.0);
        for (int c = 0; c < 3; ++c) acc[c] += v.color[c] * weight;
        weights += weight;
      }
      for (int c = 0; c < 3; ++c) centroid[c] = acc[c] / weights;
    }
    for (int c = 0; c < 3; ++c) out[c] = uint16_t(std::min(std::max(std::round(centroid[c]), 0.0), 65535.0));
  }
  for (size_t m = 0; m < movedList.size(); ++m)
    std::copy(&result[m * 3], &result[m * 3] + 3, target.colors16.data() + size_t(movedList[m]) * 3);
}

/// Nodes split ahead only above this size: the smaller ones (deep in the tree) are the likeliest
/// to be visited by no search.
constexpr size_t kSplitAheadMinPoints = 64;

}  // namespace

void transferColors(const PointCloudFrame& source, PointCloudFrame& target, const std::vector<uint8_t>& moved) {
  const size_t n = target.size();
  if (n == 0 || source.size() != n || moved.size() != n || source.colors16.size() != n * 3 || target.colors16.size() != n * 3)
    return;
  transferColorsFrom(source.positions.data(), source.colors16.data(), target, moved);
}

PointCloudFrame postProcess(const CodedSequence& seq, const DecodedAtlasFrame& frame, const PointCloudFrame& input,
                            PostProcessReport* report) {
  return postProcess(seq, frame, PointCloudFrame(input), report);
}

PointCloudFrame postProcess(const CodedSequence& seq, const DecodedAtlasFrame& frame, PointCloudFrame&& input,
                            PostProcessReport* report) {
  PointCloudFrame out = std::move(input);
  const bool hasSmoothingInfo = out.boundary.size() == out.size();
  PostProcessReport local;
  GridSmoothingParams params;
  std::vector<uint8_t> moved;
  if (gridSmoothingFor(seq, frame, params) && hasSmoothingInfo) {
    local.geometrySmoothed = true;
    // Colour transfer needs the positions before smoothing (kept only when there are colours
    // to transfer); the colours it reads are still the frame's own (it writes the moved points'
    // colours last), so they need no copy.
    const bool coloured = out.colors16.size() == out.positions.size();
    const std::vector<int16_t> unsmoothed = coloured ? out.positions : std::vector<int16_t>();
    // With a helper thread, the unsmoothed frame's k-d tree (colour transfer's forward tree) is
    // made and split ahead beside the smoothing, which runs on one thread meanwhile; both read
    // only what is final before they start. Which nodes get split before the searches depends on
    // timing, what the searches find does not (NeighbourTree::splitAhead).
    std::optional<NeighbourTree> sourceTree;
    if (coloured && parallel::helpers() > 0) {
      std::atomic<bool> smoothed{false};
      parallel::runBoth(
          [&] {
            struct Done {
              std::atomic<bool>& flag;
              ~Done() { flag = true; }  // (also when smoothing throws: the other side stops)
            } done{smoothed};
            local.movedPoints = smoothGeometryGrid(out, params, moved);
          },
          [&] {
            sourceTree.emplace(unsmoothed.data(), unsmoothed.size() / 3);
            sourceTree->splitAhead(smoothed, kSplitAheadMinPoints);
          });
    } else {
      local.movedPoints = smoothGeometryGrid(out, params, moved);
    }
    if (local.movedPoints && coloured)
      transferColorsFrom(unsmoothed.data(), out.colors16.data(), out, moved, sourceTree ? &*sourceTree : nullptr);
  }
  AttributeSmoothingParams attributeParams;
  std::vector<uint8_t> recoloured;
  if (attributeSmoothingFor(seq, frame, attributeParams) && hasSmoothingInfo) {
    local.attributesSmoothed = true;
    local.recolouredPoints = smoothAttributesGrid(out, attributeParams, moved, recoloured);
  }
  // Only moved and recoloured points changed colour: the others keep the RGB reconstruction
  // computed from the same 16-bit values.
  if (out.colors16.size() == out.positions.size() && (local.movedPoints || local.recolouredPoints))
    for (size_t i = 0; i < out.size(); ++i)
      if ((local.movedPoints && moved[i]) || (local.recolouredPoints && recoloured[i]))
        toRgb8(out, i, i + 1);
  if (frame.occupancySynthesis)
    for (const auto& [index, instance] : frame.occupancySynthesis->occupancySynthesis)
      local.occupancySynthesisSkipped |= !instance.cancel && instance.methodType != 0;
  if (report) *report = local;
  return out;
}

}  // namespace vpcc
