// Depths for the pixels no point projected to. The decoder reconstructs every pixel of an
// occupied occupancy block (4×4 pixels at the default precision), so the empty pixels of a block
// that holds any point become points of their own: strays the quality measure charges as
// decoded points far from the source (issue 37 measured them as the larger half of CesiumMan's
// D1 error at precision 4). A stray costs nothing when it lands on a source point — decoded
// points at one position count once, and that source point is then matched exactly — so each
// empty pixel the decoder will reconstruct takes the depth of a source point on its own
// projection line when one lies near its neighbours' depth (usually a point of the patch across
// the seam, where the surface turns away), and otherwise its nearest filled pixel's depth. Its
// far-layer depth is its near depth, which the decoder drops as a duplicate.
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <vector>

#include "vpcc/radix_sort.h"
#include "stages.h"

namespace vpcc::encoding {
namespace {

/// The source points along each axis's projection lines: for normal axis a, the sorted keys
/// (tangent, bitangent, coordinate along a) of kPlanes' tangent and bitangent for that axis.
class ProjectionLines {
 public:
  ProjectionLines(const InputFrame& frame) {
    for (int axis = 0; axis < 3; ++axis) {
      const Plane6& P = kPlanes[axis];  // planes 0–2: one per normal axis (modes share the axes)
      std::vector<uint64_t>& keys = keys_[axis];
      keys.resize(frame.size());
      for (size_t i = 0; i < frame.size(); ++i) {
        const uint16_t* p = &frame.positions[i * 3];
        keys[i] = key(p[P.tangent], p[P.bitangent], p[P.normal]);
      }
      radixSort(keys);
    }
  }

  /// Calls fn(coordinate) for every source point on the line (tangent, bitangent) along `axis`.
  template <typename Fn>
  void forEach(int axis, uint32_t tangent, uint32_t bitangent, Fn fn) const {
    const std::vector<uint64_t>& keys = keys_[axis];
    const uint64_t first = key(tangent, bitangent, 0);
    for (auto it = std::lower_bound(keys.begin(), keys.end(), first); it != keys.end() && (*it >> 16) == (first >> 16); ++it)
      fn(int32_t(*it & 0xffff));
  }

 private:
  static uint64_t key(uint32_t tangent, uint32_t bitangent, uint32_t along) {
    return uint64_t(tangent) << 32 | uint64_t(bitangent) << 16 | along;
  }
  std::vector<uint64_t> keys_[3];
};

/// Whether occupancy block (bu, bv) of `precision` pixels a side holds a point of the patch.
bool blockOccupied(const EncPatch& p, uint32_t bu, uint32_t bv, uint32_t precision) {
  for (uint32_t v = bv * precision; v < std::min(p.height, (bv + 1) * precision); ++v)
    for (uint32_t u = bu * precision; u < std::min(p.width, (bu + 1) * precision); ++u)
      if (p.pixelOccupied(u, v)) return true;
  return false;
}

}  // namespace

void fillEmptyPixels(std::vector<EncPatch>& patches, const InputFrame& frame, const EncoderConfig& cfg) {
  for (EncPatch& p : patches) fillPatch(p);
  // A source point further than this from the neighbours' depth would be a sharp edge in the
  // geometry picture (costly, and the codec's error there moves the patch's own points).
  constexpr int32_t kMaxJump = 8;
  const bool lines = cfg.lod == 1;  // with level of detail a pixel stands for several lines
  const ProjectionLines source = lines ? ProjectionLines(frame) : ProjectionLines(InputFrame{});
  const int32_t maxCoord = int32_t((1u << cfg.geometryBits) - 1);
  const uint32_t prec = cfg.occupancyPrecision;
  for (EncPatch& p : patches) {
    const Plane6& P = kPlanes[p.plane];
    for (uint32_t v = 0; v < p.height; ++v)
      for (uint32_t u = 0; u < p.width; ++u) {
        const size_t i = size_t(v) * p.width + u;
        if (p.occupied[i]) continue;
        // (Only at full detail: with level of detail 2 it added a third more decoded points on
        // the synthetic sphere — not understood, left as it was.)
        if (lines) p.farDepth[i] = p.nearDepth[i];
        if (!lines || !blockOccupied(p, u / prec, v / prec, prec)) continue;
        const int32_t filled = p.nearDepth[i];
        int32_t best = -1, bestJump = kMaxJump + 1;
        source.forEach(P.normal, p.tangentMin + u, p.bitangentMin + v, [&](int32_t along) {
          const int32_t depth = (P.mode ? maxCoord - along : along) - p.minDepth;
          if (depth < 0 || depth > 255) return;
          const int32_t jump = std::abs(depth - filled);
          if (jump < bestJump) best = depth, bestJump = jump;
        });
        if (best >= 0) p.nearDepth[i] = p.farDepth[i] = int16_t(best);
      }
  }
}

}  // namespace vpcc::encoding
