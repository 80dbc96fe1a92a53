// Fuzz target of post-processing (targets.h): a frame made directly from the input bytes, so
// the smoothing passes see any point layout without a segment having to produce it.
//
// Input layout: 8 header bytes, then 13 bytes per point.
//   0: grid size − 2 (geometry smoothing)      1: geometry threshold
//   2–4: attribute thresholds (change, variation, difference)
//   5: bits 0–2 geometry bit depth − 6 (6…13), bits 3–5 occupancy precision − 1 (1…8: the
//      attribute smoothing cell size; any divisor of the atlas width occurs), bit 6 RGB colours
//      (a 4:4:4 attribute video), bit 7 no geometry smoothing
//   6: bit 0 positions taken raw (any int16, negative included) instead of within the bit depth,
//      bit 1 occupancy precision 16 << (bits 3–4 of byte 5) instead (16…128)
//   7: unused
//   per point: x, y, z (2 bytes each), Y, Cb, Cr (2 bytes each), 1 byte: bits 0–1 boundary
//   flag, bits 2–7 patch index
//
// Fuzzing limit, in this harness only: geometry smoothing runs when its grid has at most 65³
// cells (9-bit geometry with TMC2's 8-voxel cells, or 10-bit with 16-voxel ones), or more than
// the decoder's cap kMaxGeometrySmoothingGridCells (2^25), which it refuses before allocating;
// grids in between are skipped. The smoothing code is the same for every grid size, but its
// per-cell bitmap and counts are walked whole: under libFuzzer's comparison tracing a grid of
// 27 M cells took 3.5 s per execution, and one of 129³ (10-bit, 8-voxel cells) still half of
// every execution.
#include <algorithm>
#include <stdexcept>
#include <vector>

#include "targets.h"
#include "vpcc/bit_reader.h"
#include "vpcc/postprocess.h"

namespace vpcc::fuzz {
namespace {

constexpr size_t kHeaderBytes = 8, kPointBytes = 13, kMaxPoints = 2500;
constexpr uint64_t kMaxFuzzedSmoothingGridCells = 65ull * 65ull * 65ull;

/// Cells of the grid smoothGeometryGrid sets up for `frame`, as postprocess.cpp sizes it.
uint64_t smoothingGridCells(const PointCloudFrame& frame, uint32_t gridSize) {
  if (frame.positions.empty()) return 0;
  const int16_t largest = *std::max_element(frame.positions.begin(), frame.positions.end());
  const int64_t cellsPerAxis = (int64_t(largest) + gridSize - 1) / gridSize;
  if (cellsPerAxis <= 0) return 0;
  const uint64_t side = uint64_t(cellsPerAxis) + 1;
  return side * side * side;
}

uint16_t word(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }

void postprocessFrame(const uint8_t* data, size_t size) {
  if (size < kHeaderBytes) return;
  GridSmoothingParams geometry;
  geometry.gridSize = data[0] + 2u;
  geometry.threshold = data[1];
  AttributeSmoothingParams attribute;
  attribute.threshold = data[2];
  attribute.thresholdVariation = data[3];
  attribute.thresholdDifference = data[4];
  const uint8_t flags = data[5];
  PointCloudFrame frame;
  frame.bitDepth3d = 6 + (flags & 7);
  // Powers of two up to 128 besides 1…8: a stream may declare a coarse occupancy map.
  frame.occupancyPrecision = (data[6] & 2) ? 16u << ((flags >> 3) & 3) : ((flags >> 3) & 7) + 1u;
  const bool rawPositions = data[6] & 1;
  frame.rgbColours = flags & 0x40;
  const bool smoothGeometry = !(flags & 0x80);
  const uint16_t mask = uint16_t((1u << frame.bitDepth3d) - 1);
  const size_t points = std::min((size - kHeaderBytes) / kPointBytes, kMaxPoints);
  for (size_t i = 0; i < points; ++i) {
    const uint8_t* p = data + kHeaderBytes + i * kPointBytes;
    for (int d = 0; d < 3; ++d) {
      const uint16_t v = word(p + 2 * d);
      frame.positions.push_back(rawPositions ? int16_t(v) : int16_t(v & mask));
      frame.colors16.push_back(word(p + 6 + 2 * d));
    }
    frame.boundary.push_back(p[12] & 3);
    frame.patchIndex.push_back(p[12] >> 2);
  }
  frame.colors.assign(frame.positions.size(), 0);
  // As postProcess runs them: geometry smoothing, colour transfer from the unsmoothed frame to
  // the moved points, attribute smoothing of the points left in place, RGB of what changed.
  std::vector<uint8_t> moved, recoloured;
  const uint64_t gridCells = smoothingGridCells(frame, geometry.gridSize);
  if (smoothGeometry && (gridCells <= kMaxFuzzedSmoothingGridCells || gridCells > kMaxGeometrySmoothingGridCells)) {
    const PointCloudFrame unsmoothed = frame;
    if (smoothGeometryGrid(frame, geometry, moved)) transferColors(unsmoothed, frame, moved);
  }
  smoothAttributesGrid(frame, attribute, moved, recoloured);
  toRgb8(frame, 0, frame.size());
  if (frame.positions.size() != frame.colors.size()) throw std::logic_error("positions and colours differ in length");
}

}  // namespace

void postprocessInput(const uint8_t* data, size_t size) {
  try {
    postprocessFrame(data, size);
  } catch (const ParseError&) {
  }
}

}  // namespace vpcc::fuzz
