// Patch packing: where each patch of a frame goes in the atlas, in 16×16 blocks. Patches are
// matched with the previous frame's patches of the same surface and keep their places and their
// depth origin where they fit, so the videos predict them from the previous picture and the
// atlas can code them as INTER or SKIP patches; the rest go near their old place or first-fit.
// All-intra packing lets patch rectangles overlap where their blocks are empty.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <stdexcept>
#include <vector>

#include "stages.h"

namespace vpcc::encoding {
namespace {

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

/// Codes `p`'s depths from its reference's depth origin when they still fit the 8-bit geometry
/// video above it: a surface that moved a little along the projection axis then keeps its
/// depth values from frame to frame instead of all shifting with the patch's nearest point,
/// which the geometry video's P pictures predict better (Fox, one GOP: geometry −1.3 % bytes).
void keepDepthOrigin(EncPatch& p, const EncPatch& reference) {
  const int32_t shift = p.minDepth - reference.minDepth;
  if (shift <= 0) return;  // the surface came nearer: its depths would go below the origin
  int32_t deepest = 0;
  for (size_t i = 0; i < p.nearDepth.size(); ++i) deepest = std::max<int32_t>({deepest, p.nearDepth[i], p.farDepth[i]});
  if (deepest + shift > 255) return;
  for (size_t i = 0; i < p.nearDepth.size(); ++i) {
    if (p.nearDepth[i] >= 0) p.nearDepth[i] = int16_t(p.nearDepth[i] + shift);
    if (p.farDepth[i] >= 0) p.farDepth[i] = int16_t(p.farDepth[i] + shift);
  }
  p.minDepth = reference.minDepth;
}

/// Which 16×16 blocks of a patch hold an occupied pixel, row by row in patch blocks: the
/// decoder gives such a block of the atlas to the patch, the others it may give to another.
std::vector<uint8_t> occupiedBlocks(const EncPatch& p) {
  const uint32_t bw = p.width / kBlock, bh = p.height / kBlock;
  std::vector<uint8_t> blocks(size_t(bw) * bh, 0);
  for (uint32_t v = 0; v < p.height; ++v)
    for (uint32_t u = 0; u < p.width; ++u)
      if (p.pixelOccupied(u, v)) blocks[size_t(v / kBlock) * bw + u / kBlock] = 1;
  return blocks;
}

/// The atlas's 16×16 blocks as packing fills them, one row after another as patches need them.
/// Two rules of filling. Plain: patch rectangles never overlap. Tight (`interleave`): rectangles
/// may overlap where blocks are empty, as the decoder allows — it gives a block to the last patch
/// in coding order whose rectangle covers it, if the block holds any occupied pixel — so a patch
/// may lie over another's empty blocks unless that would take an occupied block from an earlier
/// patch or give one of its own occupied blocks to a later patch whose rectangle covers it.
class BlockGrid {
 public:
  BlockGrid(uint32_t widthBlocks, bool interleave) : width_(widthBlocks), interleave_(interleave) {}
  uint32_t width() const { return width_; }
  uint32_t usedRows() const { return rows_; }
  /// Whether patch `index` (its coding order), whose occupied blocks are `occupied` (patch
  /// blocks, `bw` wide), fits at (x, y) with its w × h rectangle (swapped when `swap`).
  bool fits(uint32_t x, uint32_t y, uint32_t w, uint32_t h, bool swap, uint32_t bw, const std::vector<uint8_t>& occupied,
            int32_t index) const {
    if (x + w > width_) return false;
    for (uint32_t j = 0; j < h && y + j < rows_; ++j)
      for (uint32_t i = 0; i < w; ++i) {
        const size_t cell = size_t(y + j) * width_ + x + i;
        if (!interleave_) {
          if (lastCover_[cell] >= 0) return false;
          continue;
        }
        const bool mine = occupied[swap ? size_t(i) * bw + j : size_t(j) * bw + i];
        if (owner_[cell] >= 0 && (mine || owner_[cell] < index)) return false;
        if (mine && lastCover_[cell] > index) return false;
      }
    return true;
  }
  void take(uint32_t x, uint32_t y, uint32_t w, uint32_t h, bool swap, uint32_t bw, const std::vector<uint8_t>& occupied,
            int32_t index) {
    if (y + h > rows_) {
      rows_ = y + h;
      owner_.resize(size_t(rows_) * width_, -1);
      lastCover_.resize(size_t(rows_) * width_, -1);
    }
    for (uint32_t j = 0; j < h; ++j)
      for (uint32_t i = 0; i < w; ++i) {
        const size_t cell = size_t(y + j) * width_ + x + i;
        lastCover_[cell] = std::max(lastCover_[cell], index);
        if (interleave_ && occupied[swap ? size_t(i) * bw + j : size_t(j) * bw + i]) owner_[cell] = index;
      }
  }

 private:
  uint32_t width_, rows_ = 0;
  bool interleave_;
  std::vector<int32_t> owner_;      // coding index of the patch whose occupied block this is, or −1
  std::vector<int32_t> lastCover_;  // highest coding index whose rectangle covers the block, or −1
};

/// One patch as packing sees it: its coding index, size in blocks and occupied blocks.
struct PackedShape {
  int32_t index;
  uint32_t bw, bh;
  std::vector<uint8_t> occupied;
  bool fits(const BlockGrid& grid, uint32_t x, uint32_t y, bool swap) const {
    return grid.fits(x, y, swap ? bh : bw, swap ? bw : bh, swap, bw, occupied, index);
  }
};

/// Places `p` (as `shape`) at block (x, y), swapped (width and height exchanged) or not.
void place(EncPatch& p, const PackedShape& shape, BlockGrid& grid, uint32_t x, uint32_t y, bool swap) {
  grid.take(x, y, swap ? shape.bh : shape.bw, swap ? shape.bw : shape.bh, swap, shape.bw, shape.occupied, shape.index);
  p.placement.u0 = x;
  p.placement.v0 = y;
  p.placement.sizeU0 = shape.bw;
  p.placement.sizeV0 = shape.bh;
  p.placement.orientation = uint8_t(swap ? kSwap : kDefault);
}

/// First free place in raster order, in the preferred orientation first.
void placeFirstFit(EncPatch& p, const PackedShape& shape, BlockGrid& grid, bool preferSwap) {
  for (uint32_t y = 0;; ++y)
    for (uint32_t x = 0; x < grid.width(); ++x)
      for (const bool swap : {preferSwap, !preferSwap})
        if (shape.fits(grid, x, y, swap)) return place(p, shape, grid, x, y, swap);
}

/// A free place within `radius` blocks of (x, y), nearest ring first, inside the rows already
/// used (a matched patch that grew: nearby, the video still finds most of it by motion search).
bool placeNear(EncPatch& p, const PackedShape& shape, BlockGrid& grid, uint32_t x, uint32_t y, bool swap, int radius) {
  const uint32_t h = swap ? shape.bw : shape.bh;
  for (int r = 1; r <= radius; ++r)
    for (int dy = -r; dy <= r; ++dy)
      for (int dx = -r; dx <= r; ++dx) {
        if (std::max(std::abs(dx), std::abs(dy)) != r) continue;
        const int64_t nx = int64_t(x) + dx, ny = int64_t(y) + dy;
        if (nx < 0 || ny < 0 || ny + h > grid.usedRows()) continue;
        if (shape.fits(grid, uint32_t(nx), uint32_t(ny), swap)) {
          place(p, shape, grid, uint32_t(nx), uint32_t(ny), swap);
          return true;
        }
      }
  return false;
}

/// One packing of a frame (see packPatches); returns the rows used. With `placesFirst`, every
/// matched patch takes its reference's place before any patch goes elsewhere, and those that no
/// longer fit there go near it; without, a matched patch that does not fit goes first-fit at
/// once (and may take a place a later matched patch needed). `interleave`: BlockGrid's tight rule.
uint32_t packOnce(std::vector<EncPatch>& patches, const std::vector<size_t>& order, const std::vector<EncPatch>* previous,
                  uint32_t widthBlocks, bool placesFirst, bool interleave) {
  constexpr int kNearRadius = 2;  // blocks; 2 gained a little more than 8 on Fox
  BlockGrid grid(widthBlocks, interleave);
  // Occupied blocks matter only to the tight rule (the plain one reads rectangles alone): not
  // scanned for the one-GOP packings, which run up to twice a frame.
  std::vector<PackedShape> shapes(patches.size());
  for (size_t i = 0; i < patches.size(); ++i)
    shapes[i] = {int32_t(i), patches[i].width / kBlock, patches[i].height / kBlock,
                 interleave ? occupiedBlocks(patches[i]) : std::vector<uint8_t>{}};
  std::vector<size_t> later;
  for (size_t index : order) {
    EncPatch& p = patches[index];
    const PackedShape& shape = shapes[index];
    if (std::min(shape.bw, shape.bh) > widthBlocks) throw std::invalid_argument("patch wider than the atlas");
    // A matched patch keeps its reference's orientation where it can (an INTER patch must).
    bool preferSwap = false;
    if (previous && p.reference >= 0) {
      const Patch& before = (*previous)[size_t(p.reference)].placement;
      preferSwap = before.orientation == kSwap;
      if (shape.fits(grid, before.u0, before.v0, preferSwap)) {
        place(p, shape, grid, before.u0, before.v0, preferSwap);
        continue;
      }
      if (placesFirst) {
        later.push_back(index);
        continue;
      }
    }
    placeFirstFit(p, shape, grid, preferSwap);
  }
  for (size_t index : later) {
    EncPatch& p = patches[index];
    const Patch& before = (*previous)[size_t(p.reference)].placement;
    const bool swap = before.orientation == kSwap;
    if (!placeNear(p, shapes[index], grid, before.u0, before.v0, swap, kNearRadius))
      placeFirstFit(p, shapes[index], grid, swap);
  }
  return grid.usedRows();
}

}  // namespace

/// Records each patch's reference (matchPatches), keeps its depth origin where it can when the
/// geometry video predicts across frames (keepDepthOrigin), and puts the frame's patches in
/// prediction order:
/// the matched ones first, in the order of the patches they match, then the new ones in generation
/// order. INTER patches then code their reference as a step of one from the last (one bit), and a
/// frame that repeats its predecessor keeps its patch order, which SKIP patches need (they copy the
/// previous frame's patch of the same index). Intra-only coding uses the same order, so both codings
/// decode to the same points.
void orderForPrediction(std::vector<EncPatch>& patches, const std::vector<EncPatch>& previous, bool videoAcrossFrames) {
  const std::vector<int> match = matchPatches(previous, patches);
  for (size_t i = 0; i < patches.size(); ++i) {
    patches[i].reference = match[i];
    if (match[i] >= 0 && videoAcrossFrames) keepDepthOrigin(patches[i], previous[size_t(match[i])]);
  }
  std::stable_sort(patches.begin(), patches.end(), [](const EncPatch& a, const EncPatch& b) {
    if ((a.reference >= 0) != (b.reference >= 0)) return a.reference >= 0;
    return a.reference < b.reference;
  });
}

/// Packing of one frame in 16×16 blocks. A patch with a reference in the previous frame keeps
/// that patch's place and orientation where it fits, so the same surface stays at the same atlas
/// position and the videos predict it from the previous picture; the patches that grew out of
/// their place go near it after every matched patch has claimed its own (Fox, one GOP: 64 → 90 %
/// of the matched patches in place); new patches go first-fit in raster order, largest first,
/// default or swapped orientation. Keeping places fragments the atlas: when that packing needs
/// more rows than both `rowsSoFar` (the sequence's height until now) and the plain first-fit of
/// what does not fit, the plain one is taken instead. When the videos do not predict across
/// frames (all-intra), places only pay in the atlas and the plain packing is always taken:
/// keeping them cost CesiumMan +2 % D1 BD-rate there. All-intra packs tight as well (BlockGrid:
/// rectangles over other patches' empty blocks, as TMC2's packer does): CesiumMan's atlas 768 →
/// 544 rows, and every video codes fewer empty rows (docs/benchmarks.md, step 12: BD-rate
/// CesiumMan D1 −10 %, Y −7 %). One GOP keeps rectangles apart (tight there was measured on two
/// points only, docs/benchmarks.md step 12: matched patches keep their places there). Returns the used height in blocks.
uint32_t packPatches(std::vector<EncPatch>& patches, const std::vector<EncPatch>* previous, uint32_t widthBlocks,
                     uint32_t rowsSoFar, bool videoAcrossFrames) {
  std::vector<size_t> order(patches.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto bigness = [&](size_t i) { return std::max(patches[i].width, patches[i].height) * 4096 + patches[i].width * patches[i].height; };
  auto matched = [&](size_t i) { return previous && patches[i].reference >= 0; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (matched(a) != matched(b)) return matched(a);  // matched patches claim their places first
    return bigness(a) > bigness(b);
  });
  if (!videoAcrossFrames) return packOnce(patches, order, previous, widthBlocks, false, true);
  const uint32_t kept = packOnce(patches, order, previous, widthBlocks, true, false);
  if (!previous || kept <= rowsSoFar) return kept;
  std::vector<Patch> keptPlacements(patches.size());
  for (size_t i = 0; i < patches.size(); ++i) keptPlacements[i] = patches[i].placement;
  const uint32_t plain = packOnce(patches, order, previous, widthBlocks, false, false);
  if (kept <= std::max(rowsSoFar, plain)) {
    for (size_t i = 0; i < patches.size(); ++i) patches[i].placement = keptPlacements[i];
    return kept;
  }
  return plain;
}

}  // namespace vpcc::encoding
