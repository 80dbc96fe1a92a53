// Patch packing: where each patch of a frame goes in the atlas, in 16×16 blocks. Patches are
// matched with the previous frame's patches of the same surface and keep their places where
// they fit, so the videos predict them from the previous picture and the atlas can code them
// as INTER or SKIP patches; the rest go first-fit.
#include <algorithm>
#include <cstdint>
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

}  // namespace

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

}  // namespace vpcc::encoding
