#include "vpcc/reconstruct.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <numeric>
#include <optional>
#include <utility>

#include "vpcc/bit_reader.h"
#include "vpcc/color.h"
#include "vpcc/md5.h"
#include "vpcc/postprocess.h"
#include "common/parallel.h"
#include "neighbour_tree.h"

namespace vpcc {
namespace {

/// Whether an occupied pixel is a boundary pixel for geometry smoothing: within two pixels of
/// the tile border, or with an unoccupied pixel in its 5×5 neighbourhood. `occupied` holds 0 or 1
/// per pixel, so a row of five is all occupied exactly when its five bytes, read as one word,
/// equal 0x0101010101 (one unaligned load per row instead of five compares).
bool isBoundaryPixel(const std::vector<uint8_t>& occupied, uint32_t width, uint32_t height, uint32_t x, uint32_t y) {
  if (x < 2 || y < 2 || x + 2 >= width || y + 2 >= height) return true;
  constexpr uint64_t kFiveOnes = 0x0101010101ull;
  const uint8_t* at = occupied.data() + size_t(y - 2) * width + (x - 2);
  for (int row = 0; row < 5; ++row, at += width) {
    uint32_t low;
    uint8_t high;
    std::memcpy(&low, at, 4);
    high = at[4];
    if ((uint64_t(low) | uint64_t(high) << 32) != kFiveOnes) return true;
  }
  return false;
}

/// Position of a point on a 45° plane back in the axis-aligned frame (Annex H, extended projection).
void unrotate45(uint8_t axis, unsigned bitDepth3d, int32_t p[3]) {
  const double s = double((1u << (bitDepth3d - 1)) - 1);
  double x = p[0], y = p[1], z = p[2];
  if (axis == 1) {
    const double nx = (x - z + s) / 2.0, nz = (x + z - s) / 2.0;
    x = nx;
    z = nz;
  } else if (axis == 2) {
    const double nz = (z - y + s) / 2.0, ny = (z + y - s) / 2.0;
    z = nz;
    y = ny;
  } else if (axis == 3) {
    const double ny = (y - x + s) / 2.0, nx = (y + x - s) / 2.0;
    y = ny;
    x = nx;
  }
  p[0] = int32_t(x);
  p[1] = int32_t(y);
  p[2] = int32_t(z);
}

/// A reconstructed point's colour comes from an attribute map at its pixel, or, for the points
/// point local reconstruction and pixel deinterleaving add between coded depths (which no
/// attribute pixel carries), from the nearest points that have one.
constexpr uint8_t kColourByTransfer = 0xff;
/// A raw or EOM point whose colour sits in the auxiliary attribute video (at its x, y there).
constexpr uint8_t kColourFromAuxiliary = 0xfe;

enum class PointKind : uint8_t { Projected, Eom, Raw };

struct Point {
  int32_t pos[3];
  uint16_t x, y;  // atlas pixel of its colour and occupancy
  uint8_t map;    // attribute map the colour comes from, or kColourByTransfer
  PointKind kind;
  uint8_t boundary;
  uint32_t patch;  // index of the patch in its tile (EOM and raw points: the tile's patch count)
};

/// What reconstruction of one frame needs from the parameter sets, resolved once.
struct FrameTools {
  uint32_t mapCount = 1, blockSize = 16, precision = 1, threshold = 0;
  bool absoluteD1 = true, removeDuplicates = false, sizeQuantizer = false, precedenceOrder = false;
  unsigned bitDepth3d = 10;
  bool eomOccupancy = false;  // the ASPS enables EOM: any non-zero occupancy sample is occupied
  bool eom = false;           // occupancy samples are EOM codes: depths between the two maps
  bool raw = false;           // raw patches' points are reconstructed
  unsigned eomFixBits = 1;
  bool interleaved = false;  // single map, near and far depths on alternate pixels
  bool plr = false;          // single map, far depths from per-block modes
  const std::vector<PlrMode>* plrModes = nullptr;
  int32_t surfaceThickness = 4;
  const Picture* geometry[4] = {nullptr, nullptr, nullptr, nullptr};
  /// Raw points in the auxiliary videos (null: in the main videos).
  const Picture* auxiliaryGeometry = nullptr;
  /// EOM points' colours in the auxiliary attribute video (of this width) rather than in the
  /// main attribute videos.
  bool eomInAuxiliaryVideo = false;
  uint32_t auxiliaryAttributeWidth = 0;
};

/// Reconstruction of one atlas tile, in the reference decoder's order (which colour transfer
/// and smoothing depend on: their neighbour searches break ties by point order): the projected
/// points patch by patch, then the EOM points, then the raw points.
class TileReconstruction {
 public:
  TileReconstruction(const FrameTools& tools, const DecodedTile& tile, const Picture& occupancyPicture,
                     std::vector<Point>& points)
      : t_(tools), tile_(tile), points_(points), geometry0_(tools.geometry[0]->planes[0]) {
    // The maps' samples, read per point (as raw pointers: the points' stores could otherwise
    // alias the path to them, which the compiler would then reload for every point).
    depthWidth_ = geometry0_.width;
    for (uint32_t m = 0; m < t_.mapCount; ++m) depth_[m] = t_.geometry[m]->planes[0].samples.data();
    buildOccupancy(occupancyPicture.planes[0]);
    buildBlockToPatch();
  }

  /// `boundaries`: mark each projected point's boundary flag as it is made (EOM tiles mark
  /// theirs later, in markBoundaries: their EOM points change the occupancy first).
  void projectPatches(bool boundaries) {
    const size_t count = tile_.patches.size();
    eomPointsOfPatch_.resize(t_.eom ? count : 0);
    boundaries_ = boundaries;
    inlineBoundaries_ = boundaries && !t_.eom;
    for (size_t n = 0; n < count; ++n) {
      const size_t pi = t_.precedenceOrder ? count - 1 - n : n;
      if (t_.eom)
        projectPatch<Tool::Eom>(pi);
      else if (t_.interleaved)
        projectPatch<Tool::Interleaved>(pi);
      else if (t_.plr)
        projectPatch<Tool::Plr>(pi);
      else
        projectPatch<Tool::Maps>(pi);
    }
  }

  /// EOM points follow the projected points, member patch by member patch; their colours sit
  /// block by block (packing blocks in raster order) from the EOM patch's corner, in the main
  /// attribute videos across the tile, or in the auxiliary attribute video across its width.
  void appendEomPoints() {
    const uint32_t bs = t_.blockSize, blockPixels = bs * bs;
    const size_t count = tile_.patches.size();
    // The reference decoder reads EOM colours from the auxiliary video with a pixel-in-block
    // counter it never resets between the tile's EOM patches, while each patch's block count
    // starts again at 0 (the two agree when every patch's points fill whole blocks).
    uint32_t auxiliaryPixelInBlock = 0;
    for (const EomPatch& ep : tile_.eomPatches) {
      uint32_t placed = 0;
      for (uint32_t member : ep.memberPatches) {
        const size_t patch = t_.precedenceOrder ? count - 1 - member : member;
        if (member >= count) throw ParseError("EOM patch refers to a missing patch");
        for (Point pt : eomPointsOfPatch_[patch]) {
          pt.patch = uint32_t(count);
          if (t_.eomInAuxiliaryVideo) {
            placeInAuxiliaryVideo(ep, placed, auxiliaryPixelInBlock, pt);
            auxiliaryPixelInBlock = (auxiliaryPixelInBlock + 1) % blockPixels;
          } else {
            const auto [u, v] = eomTilePixel(placed, ep.u0, ep.v0);
            pt.x = uint16_t(tile_.x + u);
            pt.y = uint16_t(tile_.y + v);
            pt.map = mainVideoColour(pt.x, pt.y);
            // The reference decoder marks the colour pixels occupied; boundary flags see them so.
            occupied_[size_t(v) * tile_.width + u] = 1;
          }
          points_.push_back(pt);
          ++placed;
        }
      }
      // The reference decoder pairs the auxiliary video's colours with the EOM points in order,
      // as many per EOM patch as it signals: other counts would shift every later colour.
      if (t_.eomInAuxiliaryVideo && placed != ep.points)
        throw ParseError("EOM patch signals " + std::to_string(ep.points) + " points, its codes give " +
                         std::to_string(placed));
    }
  }

  /// Raw points: the patch's pixels in raster order hold all x, then all y, then all z
  /// (geometry map 0, or the auxiliary geometry video), offset by the patch's 3D position; point
  /// k's colour is at pixel k (of attribute map 0, or of the auxiliary attribute video).
  void appendRawPoints() {
    const uint32_t bs = t_.blockSize;
    const Plane& geometry = t_.auxiliaryGeometry ? t_.auxiliaryGeometry->planes[0] : geometry0_;
    for (const RawPatch& rp : tile_.rawPatches) {
      const uint64_t u0 = uint64_t(rp.u0) * bs, v0 = uint64_t(rp.v0) * bs;
      const uint64_t width = uint64_t(rp.sizeU0) * bs, height = uint64_t(rp.sizeV0) * bs;
      // In the auxiliary video the patch is placed from the tile's corner too (the reference
      // decoder's reading; there is one tile, checked by the caller).
      const uint64_t right = tile_.x + u0 + width, bottom = tile_.y + v0 + height;
      if (t_.auxiliaryGeometry ? (right > geometry.width || bottom > geometry.height)
                               : (u0 + width > tile_.width || v0 + height > tile_.height))
        throw ParseError("raw patch outside its picture");
      const uint64_t n = rp.points;
      if (3 * n > width * height) throw ParseError("raw patch smaller than its points' coordinates");
      auto pixel = [&](uint64_t k, uint32_t& x, uint32_t& y) {
        x = uint32_t(tile_.x + u0 + k % width);
        y = uint32_t(tile_.y + v0 + k / width);
      };
      auto coordinate = [&](uint64_t k) {
        uint32_t x, y;
        pixel(k, x, y);
        return int64_t(geometry.at(x, y));
      };
      for (uint64_t k = 0; k < n; ++k) {
        Point& pt = points_.emplace_back();
        pt.pos[0] = clampCoordinate(coordinate(k) + rp.u1);
        pt.pos[1] = clampCoordinate(coordinate(n + k) + rp.v1);
        pt.pos[2] = clampCoordinate(coordinate(2 * n + k) + rp.d1);
        uint32_t x, y;
        pixel(k, x, y);
        pt.x = uint16_t(x);
        pt.y = uint16_t(y);
        pt.map = t_.auxiliaryGeometry ? kColourFromAuxiliary : mainVideoColour(x, y);
        pt.kind = PointKind::Raw;
        pt.boundary = 0;
        pt.patch = uint32_t(tile_.patches.size());
      }
    }
  }

  /// Boundary flags for geometry and attribute smoothing, after EOM points changed the
  /// occupancy (raw points are never boundary points; EOM points coloured from the auxiliary
  /// video got theirs when placed).
  void markBoundaries(size_t first) {
    for (size_t i = first; i < points_.size(); ++i) {
      Point& pt = points_[i];
      if (pt.kind == PointKind::Raw || pt.map == kColourFromAuxiliary) continue;
      pt.boundary = occupiedBoundary(pt.x - tile_.x, pt.y - tile_.y);
    }
  }

 private:
  // Occupancy at full resolution (nearest up-sampling). The lossy threshold decides occupancy,
  // except with EOM, where any non-zero sample is occupied and its value is the pixel's EOM code.
  // The source column of every tile column is computed once, not divided per pixel.
  void buildOccupancy(const Plane& plane) {
    const uint32_t precision = t_.precision;
    if ((tile_.x + tile_.width - 1) / precision >= plane.width || (tile_.y + tile_.height - 1) / precision >= plane.height)
      throw ParseError("occupancy picture smaller than the atlas tile");
    std::vector<uint32_t> sourceColumn(tile_.width);
    for (uint32_t x = 0; x < tile_.width; ++x) sourceColumn[x] = (tile_.x + x) / precision;
    occupied_.resize(size_t(tile_.width) * tile_.height);
    if (t_.eom) eomCode_.resize(occupied_.size());
    size_t occupiedCount = 0;
    const uint32_t threshold = t_.eomOccupancy ? 0 : t_.threshold;
    for (uint32_t y = 0; y < tile_.height; ++y) {
      const uint16_t* source = plane.samples.data() + size_t((tile_.y + y) / precision) * plane.width;
      uint8_t* row = occupied_.data() + size_t(y) * tile_.width;
      for (uint32_t x = 0; x < tile_.width; ++x) {
        row[x] = source[sourceColumn[x]] > threshold;
        occupiedCount += row[x];
      }
      if (t_.eom)
        for (uint32_t x = 0; x < tile_.width; ++x) eomCode_[size_t(y) * tile_.width + x] = source[sourceColumn[x]];
    }
    points_.reserve(points_.size() + occupiedCount * t_.mapCount);
  }

  // Block-to-patch map: a block belongs to the last patch (in coding order) covering an
  // occupied pixel of it.
  void buildBlockToPatch() {
    const uint32_t bs = t_.blockSize;
    blocksWide_ = tile_.width / bs;
    blockToPatch_.assign(size_t(blocksWide_) * (tile_.height / bs), 0);
    for (size_t pi = 0; pi < tile_.patches.size(); ++pi) {
      const Patch& p = tile_.patches[pi];
      for (uint32_t vb = 0; vb < p.sizeV0; ++vb)
        for (uint32_t ub = 0; ub < p.sizeU0; ++ub) {
          uint32_t xb, yb;
          patchToCanvas(p, 1, ub, vb, xb, yb);
          bool any = false;
          for (uint32_t dy = 0; dy < bs && !any; ++dy)
            for (uint32_t dx = 0; dx < bs && !any; ++dx)
              any = occupied_[size_t(yb * bs + dy) * tile_.width + xb * bs + dx] != 0;
          if (any) blockToPatch_[size_t(yb) * blocksWide_ + xb] = uint32_t(pi + 1);
        }
    }
  }

  /// The EOM patch's point number `placed`, whose colour is pixel `colourPixelInBlock` of block
  /// placed / (block size)² (packing blocks in raster order across the auxiliary attribute
  /// video) from the EOM patch's corner there. The reference decoder also puts the point on the
  /// tile, at pixel `placed` laid out the same way but from the tile's corner across the tile,
  /// whatever the EOM patch's position, without marking it occupied; smoothing's boundary flag
  /// comes from that pixel, so it is taken there.
  void placeInAuxiliaryVideo(const EomPatch& ep, uint32_t placed, uint32_t colourPixelInBlock, Point& pt) const {
    const uint32_t bs = t_.blockSize, block = placed / (bs * bs);
    if (t_.auxiliaryAttributeWidth > 0) {  // 0: the stream has no attribute
      const uint32_t auxiliaryBlocksWide = t_.auxiliaryAttributeWidth / bs;
      if (auxiliaryBlocksWide == 0) throw ParseError("auxiliary attribute video narrower than a packing block");
      const uint64_t x = uint64_t(ep.u0) * bs + uint64_t(block % auxiliaryBlocksWide) * bs + colourPixelInBlock % bs;
      const uint64_t y = uint64_t(ep.v0) * bs + uint64_t(block / auxiliaryBlocksWide) * bs + colourPixelInBlock / bs;
      if (x > UINT16_MAX || y > UINT16_MAX) throw ParseError("EOM points run past the auxiliary video");
      pt.x = uint16_t(x);
      pt.y = uint16_t(y);
    }
    pt.map = kColourFromAuxiliary;
    if (!boundaries_) return;
    const auto [u, v] = eomTilePixel(placed, 0, 0);
    pt.boundary = occupiedBoundary(u, v);
  }

  /// Tile pixel of EOM point number `placed` laid out block by block (packing blocks in raster
  /// order across the tile) from packing block (cornerU, cornerV).
  std::pair<uint32_t, uint32_t> eomTilePixel(uint32_t placed, uint32_t cornerU, uint32_t cornerV) const {
    if (blocksWide_ == 0) throw ParseError("EOM points in an atlas tile narrower than a packing block");
    const uint32_t bs = t_.blockSize, block = placed / (bs * bs), within = placed % (bs * bs);
    const uint64_t u = uint64_t(block % blocksWide_) * bs + within % bs + uint64_t(cornerU) * bs;
    const uint64_t v = uint64_t(block / blocksWide_) * bs + within / bs + uint64_t(cornerV) * bs;
    if (u >= tile_.width || v >= tile_.height) throw ParseError("EOM points run past the atlas tile");
    return {uint32_t(u), uint32_t(v)};
  }

  /// Smoothing's boundary flag of tile pixel (u, v): occupied, with an unoccupied neighbour.
  bool occupiedBoundary(uint32_t u, uint32_t v) const {
    return occupied_[size_t(v) * tile_.width + u] && isBoundaryPixel(occupied_, tile_.width, tile_.height, u, v);
  }

  /// Where an EOM or raw point at atlas pixel (x, y) of the main videos gets its colour: there,
  /// except that with pixel interleaving the reference decoder reads such a point's colour only
  /// at an even pixel (x + y even) and transfers the others' like interpolated points'.
  uint8_t mainVideoColour(uint32_t x, uint32_t y) const {
    return t_.interleaved && (x + y) % 2 == 1 ? kColourByTransfer : 0;
  }

  static int32_t clampCoordinate(int64_t v) {
    return int32_t(std::min<int64_t>(std::max<int64_t>(v, INT32_MIN), INT32_MAX));
  }

  /// Normal coordinate of a depth sample (the far plane counts down from d1, never below 0).
  static int64_t normalOf(const Patch& p, int64_t depth) {
    return p.projectionMode == 0 ? depth + p.d1 : std::max<int64_t>(p.d1 - depth, 0);
  }

  /// How a pixel's depths become points (one per tile, chosen once).
  enum class Tool { Maps, Eom, Interleaved, Plr };

  /// A patch's pixel (u, v) lies at tile pixel (x0 + xu·u + xv·v, y0 + yu·u + yv·v): each
  /// orientation is a rotation or mirror, so patchToCanvas is affine and its steps are read off it.
  struct CanvasMap {
    int64_t x0, y0, xu, xv, yu, yv;
    explicit CanvasMap(const Patch& p, uint32_t bs) {
      uint32_t ox, oy, ux, uy, vx, vy;
      patchToCanvas(p, bs, 0, 0, ox, oy);
      patchToCanvas(p, bs, 1, 0, ux, uy);
      patchToCanvas(p, bs, 0, 1, vx, vy);
      x0 = ox;
      y0 = oy;
      xu = int64_t(ux) - ox;
      yu = int64_t(uy) - oy;
      xv = int64_t(vx) - ox;
      yv = int64_t(vy) - oy;
    }
  };

  template <Tool tool>
  void projectPatch(size_t pi) {
    const Patch& p = tile_.patches[pi];
    const uint32_t bs = t_.blockSize;
    const CanvasMap canvas(p, bs);
    const uint8_t* occupied = occupied_.data();
    const uint32_t tileWidth = tile_.width;
    for (uint32_t vb = 0; vb < p.sizeV0; ++vb)
      for (uint32_t ub = 0; ub < p.sizeU0; ++ub) {
        uint32_t xb, yb;
        patchToCanvas(p, 1, ub, vb, xb, yb);
        if (blockToPatch_[size_t(yb) * blocksWide_ + xb] != pi + 1) continue;
        const PlrMode* plrMode = tool == Tool::Plr ? &plrModeOf(p, ub, vb) : nullptr;
        for (uint32_t dv = 0; dv < bs; ++dv) {
          const uint32_t v = vb * bs + dv;
          const int32_t bitangent = int32_t(int64_t(v) * p.lodY + p.v1);
          for (uint32_t du = 0; du < bs; ++du) {
            const uint32_t u = ub * bs + du;
            if (t_.sizeQuantizer && (u >= p.sizeXPixels || v >= p.sizeYPixels)) continue;
            const uint32_t x = uint32_t(canvas.x0 + canvas.xu * u + canvas.xv * v);
            const uint32_t y = uint32_t(canvas.y0 + canvas.yu * u + canvas.yv * v);
            if (!occupied[size_t(y) * tileWidth + x]) continue;
            const Pixel px{p,
                           pi,
                           tile_.x + x,
                           tile_.y + y,
                           x,
                           y,
                           int32_t(int64_t(u) * p.lodX + p.u1),
                           bitangent,
                           uint8_t(inlineBoundaries_ && isBoundaryPixel(occupied_, tileWidth, tile_.height, x, y))};
            if constexpr (tool == Tool::Eom)
              projectEom(px);
            else if constexpr (tool == Tool::Interleaved)
              projectInterleaved(px);
            else if constexpr (tool == Tool::Plr)
              projectPlr(px, *plrMode);
            else
              projectMaps(px);
          }
        }
      }
  }

  struct Pixel {
    const Patch& patch;
    size_t patchIndex;
    uint32_t ax, ay;  // in the atlas
    uint32_t x, y;    // in the tile
    int32_t tangent, bitangent;
    uint8_t boundary;  // when marked inline
  };

  // Each point is written once, in place: copying a just-written Point (a 16-byte load after
  // 4-byte stores) stalled on store forwarding in this, the hottest loop.
  [[gnu::always_inline]] Point& emit(const Pixel& px, int64_t normal, uint8_t map) {
    Point& pt = points_.emplace_back();
    place(px, normal, pt);
    pt.x = uint16_t(px.ax);
    pt.y = uint16_t(px.ay);
    pt.map = map;
    pt.kind = PointKind::Projected;
    pt.boundary = px.boundary;
    pt.patch = uint32_t(px.patchIndex);
    return pt;
  }

  [[gnu::always_inline]] void place(const Pixel& px, int64_t normal, Point& pt) const {
    const Patch& p = px.patch;
    pt.pos[p.tangentAxis] = px.tangent;
    pt.pos[p.bitangentAxis] = px.bitangent;
    pt.pos[p.normalAxis] = int32_t(normal);  // out-of-range positions are refused at output
    if (p.axisOfAdditionalPlane) unrotate45(p.axisOfAdditionalPlane, t_.bitDepth3d, pt.pos);
  }

  int64_t depthSample(uint32_t map, const Pixel& px) const {
    return depth_[map][size_t(px.ay) * depthWidth_ + px.ax];
  }

  /// One or two maps: map 0's depth, and map 1's (absolute, or a delta on map 0's).
  void projectMaps(const Pixel& px) {
    const Patch& p = px.patch;
    const int64_t normal0 = normalOf(p, depthSample(0, px));
    emit(px, normal0, 0);
    if (t_.mapCount > 1) {
      // Map 1 shares the tangent and bitangent, so it duplicates map 0's point exactly when the
      // depths (before any 45° unrotation) agree.
      const int64_t depth1 = depthSample(1, px);
      const int64_t normal1 = t_.absoluteD1 ? normalOf(p, depth1) : normal0 + (p.projectionMode == 0 ? depth1 : -depth1);
      if (!(t_.removeDuplicates && normal1 == normal0)) emit(px, normal1, 1);
    }
  }

  /// EOM: the occupancy code's set bits i mark points at depth d0 ± (i + 1). With two maps, the
  /// code comes from the maps' depth difference and the occupancy sample, and its highest bit is
  /// map 1's point; the other bits are EOM points, coloured from the EOM patch.
  void projectEom(const Pixel& px) {
    const Patch& p = px.patch;
    const int64_t normal0 = normalOf(p, depthSample(0, px));
    emit(px, normal0, 0);
    const uint16_t occupancy = eomCode_[size_t(px.y) * tile_.width + px.x];
    uint16_t code = 0;
    unsigned farBit = 0;
    if (t_.mapCount > 1) {
      const int16_t difference = int16_t(t_.absoluteD1 ? depthSample(1, px) - depthSample(0, px) : depthSample(1, px));
      if (difference == 1) {
        code = 1;
        farBit = 1;
      } else if (difference > 1) {
        const unsigned bits = unsigned(difference - 1);
        if (bits >= 16) throw ParseError("EOM depth difference beyond 16 bits");
        code = uint16_t(uint16_t((1u << bits) - occupancy) | (1u << bits));
        farBit = bits;
      }
    } else {
      code = uint16_t((1u << t_.eomFixBits) - occupancy);
    }
    if (code == 0) {
      if (!t_.removeDuplicates) emit(px, normal0, t_.mapCount > 1 ? 1 : kColourByTransfer);
      return;
    }
    for (unsigned i = 0; i < 10; ++i)
      if (code & (1u << i)) farBit = i;
    for (unsigned i = 0; i < 10; ++i) {
      if (!(code & (1u << i))) continue;
      const int64_t normal = p.projectionMode == 0 ? normal0 + (i + 1) : normal0 - (i + 1);
      if ((code == 1 || i == farBit) && t_.mapCount > 1) {
        emit(px, normal, 1);
      } else {
        Point pt{};
        place(px, normal, pt);
        pt.map = 0;
        pt.kind = PointKind::Eom;
        eomPointsOfPatch_[px.patchIndex].push_back(pt);
      }
    }
  }

  /// Pixel deinterleaving: the single map holds near depths on pixels with x + y even and far
  /// depths on the others; each pixel's missing depth is interpolated from its 4-neighbours of
  /// the same patch (clamped to the surface thickness), and the depths between are filled.
  void projectInterleaved(const Pixel& px) {
    const Patch& p = px.patch;
    const double depth = double(normalOf(p, depthSample(0, px)));
    emit(px, int64_t(depth), 0);
    double sum = 0, lowest = depth, highest = depth;
    int count = 0;
    auto neighbour = [&](int dx, int dy) {
      const int64_t x = int64_t(px.x) + dx, y = int64_t(px.y) + dy;
      if (x < 0 || y < 0 || x >= tile_.width || y >= tile_.height) return;
      if (!occupied_[size_t(y) * tile_.width + size_t(x)]) return;
      if (blockToPatch_[size_t(y / t_.blockSize) * blocksWide_ + size_t(x / t_.blockSize)] != px.patchIndex + 1) return;
      const double sample = geometry0_.at(uint32_t(px.ax + dx), uint32_t(px.ay + dy));
      // Neighbours' depths are not clamped at 0 on the far plane (the reference decoder's rule).
      const double d = p.projectionMode == 0 ? sample + double(p.d1) : double(p.d1) - sample;
      sum += d;
      ++count;
      lowest = std::min(lowest, d);
      highest = std::max(highest, d);
    };
    neighbour(-1, 0);
    neighbour(1, 0);
    neighbour(0, -1);
    neighbour(0, 1);
    if (count == 0) return;
    const double thickness = t_.surfaceThickness;
    double near, far;
    if ((px.ax + px.ay) % 2 == 1) {
      far = depth;
      near = p.projectionMode == 0 ? std::round(std::min(std::max(lowest, far - thickness), far))
                                   : std::round(std::max(std::min(highest, far + thickness), far));
      addBetween(px, depth, near, near, far);
    } else {
      near = depth;
      const double mean = sum / count;
      far = p.projectionMode == 0 ? std::round(std::max(std::min(mean, near + thickness), near))
                                  : std::round(std::min(std::max(mean, near - thickness), near));
      addBetween(px, depth, far, near, far);
    }
  }

  /// PLR: a far point at the block mode's depth offset — the largest rise (up to 4) among the
  /// depths in a window around the pixel, less one, at least the mode's minimum — and with
  /// filling the depths between.
  void projectPlr(const Pixel& px, const PlrMode& mode) {
    const Patch& p = px.patch;
    const int64_t normal0 = normalOf(p, depthSample(0, px));
    emit(px, normal0, 0);
    int delta = mode.interpolate ? largestRise(px, mode.neighbourMinus1 + 1) : 0;
    delta = p.projectionMode == 0 ? std::max(delta, int(mode.minimumDepth)) : std::min(delta, -int(mode.minimumDepth));
    if (delta == 0) return;
    const double d0 = double(normal0), d1 = d0 + delta;
    emitAdded(px, d0, d1);
    if (mode.filling) fillBetween(px, d0, d0, d1);
  }

  // The depth offset PLR interpolates: over the (2n + 1)² window (its right and bottom edges may
  // sit one past the picture; the reference reads such samples from the flat sample array, the
  // next row, and we read 0 past its end), the largest change within the threshold of 4
  // toward the far side, moved one step back toward the near depth.
  int largestRise(const Pixel& px, int n) const {
    const Plane& g = geometry0_;
    const Patch& p = px.patch;
    auto sampleAt = [&](int64_t x, int64_t y) -> int64_t {
      const size_t index = size_t(y) * g.width + size_t(x);
      return index < g.samples.size() ? g.samples[index] : 0;
    };
    const double origin = double(normalOf(p, depthSample(0, px)));
    const int64_t x0 = std::max<int64_t>(0, int64_t(px.ax) - n), x1 = std::min<int64_t>(int64_t(px.ax) + n, g.width);
    const int64_t y0 = std::max<int64_t>(0, int64_t(px.ay) - n), y1 = std::min<int64_t>(int64_t(px.ay) + n, g.height);
    constexpr int kThreshold = 4;
    int best = 0;
    for (int64_t x = x0; x <= x1; ++x)
      for (int64_t y = y0; y <= y1; ++y) {
        const int delta = int(double(normalOf(p, sampleAt(x, y))) - origin);
        if (p.projectionMode == 0 ? (delta <= kThreshold && delta > best) : (delta >= -kThreshold && delta < best)) best = delta;
      }
    return best == 0 ? 0 : (p.projectionMode == 0 ? best - 1 : best + 1);
  }

  /// The added point at depth `added` (coloured by transfer), unless it duplicates the pixel's
  /// first point and duplicates are removed.
  void emitAdded(const Pixel& px, double first, double added) {
    if (t_.removeDuplicates && added == first) return;
    emit(px, int64_t(added), kColourByTransfer);
  }

  /// Points strictly between depths a and b (coloured by transfer). The depths are whole
  /// numbers; a fill longer than the coordinate range only comes from a damaged stream (a
  /// surface thickness beyond it) and is refused rather than made.
  void fillBetween(const Pixel& px, double first, double a, double b) {
    const int64_t low = int64_t(std::min(a, b)), high = int64_t(std::max(a, b));
    if (high - low > (int64_t{1} << t_.bitDepth3d)) throw ParseError("depth fill beyond the coordinate range");
    for (int64_t d = low + 1; d < high; ++d)
      if (!(t_.removeDuplicates && double(d) == first)) emit(px, d, kColourByTransfer);
  }

  void addBetween(const Pixel& px, double first, double added, double near, double far) {
    emitAdded(px, first, added);
    fillBetween(px, first, near, far);
  }

  const PlrMode& plrModeOf(const Patch& p, uint32_t ub, uint32_t vb) const {
    const PlrData& plr = p.plr;
    uint32_t mode = 0;
    if (plr.levelFlag) {
      mode = plr.presentFlag ? plr.modeMinus1 + 1 : 0;
    } else {
      const size_t index = size_t(vb) * plr.widthBlocks + ub;
      if (index >= plr.blockPresent.size()) throw ParseError("PLR block modes do not cover the patch");
      mode = plr.blockPresent[index] ? plr.blockModeMinus1[index] + 1 : 0;
    }
    // Mode 0 (none signalled) and mode m + 1 index the ASPS's list as they are.
    if (mode >= t_.plrModes->size()) throw ParseError("PLR mode " + std::to_string(mode) + " not in the ASPS");
    return (*t_.plrModes)[mode];
  }

  const FrameTools& t_;
  const DecodedTile& tile_;
  std::vector<Point>& points_;
  const Plane& geometry0_;
  const uint16_t* depth_[4] = {nullptr, nullptr, nullptr, nullptr};
  uint32_t depthWidth_ = 0;
  std::vector<uint8_t> occupied_;     // 0 or 1 per tile pixel
  std::vector<uint16_t> eomCode_;     // EOM only: the occupancy sample per tile pixel
  std::vector<uint32_t> blockToPatch_;  // patch index + 1 per packing block, 0: none
  uint32_t blocksWide_ = 0;
  std::vector<std::vector<Point>> eomPointsOfPatch_;
  bool boundaries_ = false;        // boundary flags are wanted
  bool inlineBoundaries_ = false;  // ... and marked as the projected points are made
};

/// The colour at (x, y) of a 4:4:4 attribute picture, which the reference decoder takes as
/// GBR-coded RGB: planes G, B, R.
void gbrPixelAsRgb(const Picture& picture, uint32_t x, uint32_t y, uint16_t rgb[3]) {
  rgb[0] = picture.planes[2].at(x, y);
  rgb[1] = picture.planes[0].at(x, y);
  rgb[2] = picture.planes[1].at(x, y);
}

/// Colours of the tile's points in [first, end) that no attribute pixel carries: the mean of
/// the colours of the 5 nearest points coloured from the main attribute videos, weighted by
/// 1 / squared distance² (the nearest one's colour when it coincides with the point or is the
/// only one), as the reference decoder does.
void colourByNeighbours(const std::vector<Point>& points, size_t first, size_t end, const int16_t* positions,
                        uint16_t* colours16) {
  // Most streams have no such points (no PLR, no pixel deinterleaving): look before gathering.
  bool anyTarget = false;
  for (size_t i = first; i < end && !anyTarget; ++i) anyTarget = points[i].map == kColourByTransfer;
  if (!anyTarget) return;
  std::vector<uint32_t> sources, targets;
  // Raw points coloured from the auxiliary video are no sources (the reference colours them
  // after this transfer).
  for (size_t i = first; i < end; ++i) {
    if (points[i].map == kColourByTransfer) targets.push_back(uint32_t(i));
    else if (points[i].map != kColourFromAuxiliary) sources.push_back(uint32_t(i));
  }
  if (targets.empty() || sources.empty()) return;
  std::vector<int16_t> sourcePositions(sources.size() * 3);
  for (size_t s = 0; s < sources.size(); ++s)
    std::memcpy(&sourcePositions[s * 3], positions + size_t(sources[s]) * 3, 3 * sizeof(int16_t));
  NeighbourTree tree(sourcePositions.data(), sources.size());
  constexpr size_t kNeighbours = 5;
  uint32_t found[kNeighbours];
  double dists[kNeighbours];
  for (uint32_t target : targets) {
    const size_t n = tree.search(positions + size_t(target) * 3, kNeighbours, found, dists);
    uint16_t* colour = colours16 + size_t(target) * 3;
    if (n > 1 && dists[0] > 0.0001) {
      double sum = 0, mix[3] = {0, 0, 0};
      for (size_t k = 0; k < n; ++k) {
        const double w = 1.0 / (dists[k] * dists[k]);
        const uint16_t* c = colours16 + size_t(sources[found[k]]) * 3;
        for (int ch = 0; ch < 3; ++ch) mix[ch] += double(c[ch]) * w;
        sum += w;
      }
      for (int ch = 0; ch < 3; ++ch) colour[ch] = uint16_t(mix[ch] / sum);
    } else {
      std::memcpy(colour, colours16 + size_t(sources[found[0]]) * 3, 3 * sizeof(uint16_t));
    }
  }
}

}  // namespace

DecodedVideo decodeVideo(const CodedSequence& seq, VideoDecoder& decoder) {
  DecodedVideo out;
  const VpsAtlas& atlas = seq.vps.atlases.at(0);
  const VideoCodec codec = codecFor(seq.vps.ptl.codecGroup);
  out.mapsInterleaved = !atlas.multipleMapStreams;
  for (const auto& v : seq.videos) {
    if (v.header.atlasId != atlas.atlasId) continue;
    if (v.header.auxiliaryVideo) {
      if (v.header.type == V3cUnitType::GVD) {
        out.auxiliaryGeometry = decoder.decode(v.data, codec, atlas.geometry.bitDepthMinus1 + 1);
      } else if (v.header.type == V3cUnitType::AVD && v.header.attributeIndex == 0 && v.header.attributePartition == 0) {
        if (atlas.attributes.empty()) throw ParseError("attribute video without attribute information");
        out.auxiliaryAttribute = decoder.decode(v.data, codec, atlas.attributes[0].bitDepthMinus1 + 1);
      }
      continue;
    }
    switch (v.header.type) {
      case V3cUnitType::OVD:
        out.occupancy = decoder.decode(v.data, codec, atlas.occupancy.bitDepthMinus1 + 1);
        break;
      case V3cUnitType::GVD:
        if (v.header.mapIndex > 3) throw ParseError("geometry map index > 3");
        out.geometry[v.header.mapIndex] = decoder.decode(v.data, codec, atlas.geometry.bitDepthMinus1 + 1);
        break;
      case V3cUnitType::AVD:
        if (v.header.attributeIndex != 0 || v.header.attributePartition != 0) break;
        if (v.header.mapIndex > 3) throw ParseError("attribute map index > 3");
        if (atlas.attributes.empty()) throw ParseError("attribute video without attribute information");
        out.attribute[v.header.mapIndex] = decoder.decode(v.data, codec, atlas.attributes[0].bitDepthMinus1 + 1);
        break;
      default:
        break;
    }
  }
  return out;
}

PointCloudFrame reconstructFrame(const CodedSequence& seq, const DecodedAtlasFrame& frame, const DecodedVideo& video,
                                 bool recordPixels) {
  const VpsAtlas& vpsAtlas = seq.vps.atlases.at(0);
  const Asps& asps = *frame.asps;
  const uint32_t mapCount = asps.mapCountMinus1 + 1u;
  if (mapCount > 4) throw ParseError("more than 4 maps are not supported");  // picture slots per map
  const uint32_t f = frame.afoc;
  if (f >= video.occupancy.size()) throw ParseError("occupancy picture missing for frame " + std::to_string(f));
  const Picture& occupancyPicture = video.occupancy[f];
  auto geometryPicture = [&](uint32_t map) -> const Picture& {
    const auto& list = video.mapsInterleaved ? video.geometry[0] : video.geometry[map];
    const size_t index = video.mapsInterleaved ? size_t(f) * mapCount + map : f;
    if (index >= list.size()) throw ParseError("geometry picture missing for frame " + std::to_string(f));
    return list[index];
  };
  const Picture* attributePictures[4] = {nullptr, nullptr, nullptr, nullptr};
  const bool hasAttribute = !vpsAtlas.attributes.empty();
  if (hasAttribute) {
    for (uint32_t m = 0; m < mapCount; ++m) {
      const auto& list = video.mapsInterleaved ? video.attribute[0] : video.attribute[m];
      const size_t index = video.mapsInterleaved ? size_t(f) * mapCount + m : f;
      if (index >= list.size()) throw ParseError("attribute picture missing for frame " + std::to_string(f));
      attributePictures[m] = &list[index];
    }
  }
  const uint32_t atlasWidth = vpsAtlas.frameWidth, atlasHeight = vpsAtlas.frameHeight;
  if (occupancyPicture.width == 0 || atlasWidth % occupancyPicture.width != 0)
    throw ParseError("occupancy resolution does not divide the atlas");

  // The Rec1 and Rec2 tools (duplicate removal, PLR, pixel deinterleaving, EOM and raw points)
  // apply under those profiles only: a Rec0 decoder, TMC2's among them, reconstructs the maps'
  // points alone, whatever the ASPS enables.
  const bool rec1Tools = seq.vps.ptl.reconstruction >= 1;
  FrameTools tools;
  tools.mapCount = mapCount;
  tools.blockSize = 1u << asps.log2PatchPackingBlockSize;
  tools.precision = atlasWidth / occupancyPicture.width;
  tools.threshold = vpsAtlas.occupancy.lossyThreshold;
  tools.absoluteD1 = vpsAtlas.mapCountMinus1 == 0 || vpsAtlas.mapAbsoluteCoding.at(1);
  tools.removeDuplicates = asps.removeDuplicatePoints && rec1Tools;
  tools.sizeQuantizer = asps.patchSizeQuantizerPresent;
  tools.precedenceOrder = asps.patchPrecedenceOrder;
  tools.bitDepth3d = vpsAtlas.geometry.coordinatesBitDepthMinus1 + 1u;
  tools.eomOccupancy = asps.eomPatchEnabled;
  tools.eom = asps.eomPatchEnabled && rec1Tools;
  tools.eomFixBits = asps.eomFixBitCountMinus1 + 1u;
  tools.interleaved = asps.pixelDeinterleaving && rec1Tools;
  tools.plr = asps.plrEnabled && rec1Tools;
  tools.raw = asps.rawPatchEnabled && rec1Tools;
  if (tools.plr) {
    if (asps.plr.empty() || asps.plr[0].modes.empty()) throw ParseError("point local reconstruction without modes");
    tools.plrModes = &asps.plr[0].modes;
  }
  tools.surfaceThickness = int32_t(asps.surfaceThicknessMinus1 + 1u);
  // With the auxiliary video enabled, raw points' coordinates and colours and EOM points'
  // colours are in the auxiliary videos. The reference decoder decides this for the atlas from
  // the ASPS (and VPS), not from each patch's flag, and so does this decoder.
  const Picture* auxiliaryAttribute = nullptr;
  if (tools.raw && asps.auxiliaryVideoEnabled) {
    if (f >= video.auxiliaryGeometry.size()) throw ParseError("auxiliary geometry picture missing for frame " + std::to_string(f));
    tools.auxiliaryGeometry = &video.auxiliaryGeometry[f];
  }
  tools.eomInAuxiliaryVideo = tools.eom && asps.auxiliaryVideoEnabled;
  if ((tools.auxiliaryGeometry || tools.eomInAuxiliaryVideo) && hasAttribute) {
    if (f >= video.auxiliaryAttribute.size())
      throw ParseError("auxiliary attribute picture missing for frame " + std::to_string(f));
    auxiliaryAttribute = &video.auxiliaryAttribute[f];
    tools.auxiliaryAttributeWidth = auxiliaryAttribute->width;
  }
  for (uint32_t m = 0; m < mapCount; ++m) {
    const Picture& g = geometryPicture(m);
    tools.geometry[m] = &g;
    if (g.width != atlasWidth || g.height != atlasHeight) throw ParseError("geometry picture size differs from the atlas");
    if (attributePictures[m] && (attributePictures[m]->width != atlasWidth || attributePictures[m]->height != atlasHeight))
      throw ParseError("attribute picture size differs from the atlas");
  }

  // Geometry (SEI 66) and attribute (SEI 67) smoothing need boundary flags and patch indices.
  GridSmoothingParams geometrySmoothing;
  AttributeSmoothingParams attributeSmoothing;
  const bool wantSmoothingInfo =
      gridSmoothingFor(seq, frame, geometrySmoothing) || attributeSmoothingFor(seq, frame, attributeSmoothing);

  std::vector<Point> points;
  std::vector<size_t> tileStarts;
  PointCloudFrame out;
  for (const DecodedTile& tile : frame.tiles) {
    if (tile.width == 0 || tile.height == 0) continue;  // no pixels, so no patches either
    const bool usesAuxiliaryVideo = (tools.auxiliaryGeometry && !tile.rawPatches.empty()) ||
                                    (tools.eomInAuxiliaryVideo && !tile.eomPatches.empty());
    if (usesAuxiliaryVideo && frame.tiles.size() > 1)
      throw ParseError("raw or EOM points in the auxiliary video of a tiled atlas are not supported yet");
    tileStarts.push_back(points.size());
    TileReconstruction reconstruction(tools, tile, occupancyPicture, points);
    reconstruction.projectPatches(wantSmoothingInfo);
    out.projectedPoints += uint32_t(points.size() - tileStarts.back());
    if (tools.eom) {
      reconstruction.appendEomPoints();
      out.eomPoints += tile.eomPoints;
    }
    if (tools.raw) {
      reconstruction.appendRawPoints();
      out.rawPoints += tile.rawPoints;
    }
    if (wantSmoothingInfo && tools.eom) reconstruction.markBoundaries(tileStarts.back());
  }
  out.occupancyPrecision = tools.precision;
  out.bitDepth3d = tools.bitDepth3d;

  // One pass over the points fills every per-point output (the point list is the frame's
  // largest array; each extra pass re-reads it from memory).
  const size_t n = points.size();
  out.positions.resize(n * 3);
  out.colors.assign(n * 3, 127);
  if (wantSmoothingInfo) {
    out.boundary.resize(n);
    out.patchIndex.resize(n);
  }
  if (recordPixels) {
    out.pixel.resize(n);
    out.map.resize(n);
  }
  // Colour of each point from the attribute map of its geometry map, through the reference
  // decoder's 4:2:0 → 4:4:4 → 16-bit Y'CbCr → 8-bit RGB chain (vpcc/color.h); points that no
  // attribute pixel carries take their tile's nearest coloured points' colours (below).
  std::vector<AttributeSampler> samplers;
  std::optional<AttributeSampler> auxiliarySampler;
  if (hasAttribute) {
    samplers.reserve(mapCount);
    for (uint32_t m = 0; m < mapCount; ++m) samplers.emplace_back(*attributePictures[m]);
    out.colors16.resize(n * 3);
    // A 4:4:4 attribute video is GBR-coded RGB to the reference decoder (it converts no colour).
    out.rgbColours = attributePictures[0]->chroma444;
    if (auxiliaryAttribute && !auxiliaryAttribute->chroma444) auxiliarySampler.emplace(*auxiliaryAttribute);
  }
  // With helper threads the points split into ranges: each point writes only its own outputs,
  // and the samplers' chroma tiles are up-sampled first (on the threads too), so sampling reads.
  if (hasAttribute && parallel::helpers() > 0) {
    for (const Point& pt : points) {
      if (pt.map < mapCount && !out.rgbColours)
        samplers[pt.map].mark(pt.x, pt.y);
      else if (pt.map == kColourFromAuxiliary && auxiliarySampler)
        auxiliarySampler->mark(pt.x, pt.y);
    }
    for (AttributeSampler& sampler : samplers) sampler.upsampleMarked();
    if (auxiliarySampler) auxiliarySampler->upsampleMarked();
  }
  parallel::forRanges(n, 16384, [&](size_t begin, size_t end) {
    for (size_t i = begin; i < end; ++i) {
      const Point& pt = points[i];
      for (int c = 0; c < 3; ++c) {
        if (pt.pos[c] < INT16_MIN || pt.pos[c] > INT16_MAX) throw ParseError("reconstructed position out of range");
        out.positions[i * 3 + c] = int16_t(pt.pos[c]);
      }
      if (wantSmoothingInfo) {
        out.boundary[i] = pt.boundary;
        out.patchIndex[i] = pt.patch;
      }
      if (recordPixels) {
        out.pixel[i] = uint32_t(pt.y) * atlasWidth + pt.x;
        out.map[i] = pt.map;
      }
      if (!hasAttribute) continue;
      uint16_t* colour = &out.colors16[i * 3];
      if (pt.map < mapCount && out.rgbColours) {
        gbrPixelAsRgb(*attributePictures[pt.map], pt.x, pt.y, colour);
      } else if (pt.map < mapCount) {
        samplers[pt.map].sample(pt.x, pt.y, colour);
      } else if (pt.map == kColourFromAuxiliary) {
        if (pt.x >= auxiliaryAttribute->width || pt.y >= auxiliaryAttribute->height)
          throw ParseError("raw or EOM point outside the auxiliary attribute picture");
        // The auxiliary video is read by its own format: 4:4:4 as GBR-coded RGB like the main
        // videos, 4:2:0 through the Y'CbCr chain.
        if (auxiliaryAttribute->chroma444)
          gbrPixelAsRgb(*auxiliaryAttribute, pt.x, pt.y, colour);
        else
          auxiliarySampler->sample(pt.x, pt.y, colour);
        // The reference decoder keeps these colours as 8-bit values (the low byte of its 16-bit
        // samples) in its 16-bit colour array, and converts them like every other colour
        // (4:2:0 ones as 16-bit Y'CbCr). Conformance is to its output, so the same happens here.
        for (int c = 0; c < 3; ++c) colour[c] &= 0xff;
      }
    }
  });
  if (hasAttribute) {
    tileStarts.push_back(points.size());
    for (size_t t = 0; t + 1 < tileStarts.size(); ++t)
      colourByNeighbours(points, tileStarts[t], tileStarts[t + 1], out.positions.data(), out.colors16.data());
    parallel::forRanges(n, 16384, [&](size_t begin, size_t end) { toRgb8(out, begin, end); });
  }
  return out;
}

void toRgb8(PointCloudFrame& frame, size_t first, size_t end) {
  if (!frame.rgbColours) {
    yuv16ToRgb8(frame.colors16.data() + first * 3, frame.colors.data() + first * 3, end - first);
    return;
  }
  for (size_t i = first * 3; i < end * 3; ++i) frame.colors[i] = uint8_t(frame.colors16[i]);
}

std::string frameMd5(const PointCloudFrame& frame) {
  const size_t n = frame.size();
  std::vector<uint32_t> order(n);
  std::iota(order.begin(), order.end(), 0u);
  const int16_t* pos = frame.positions.data();
  std::sort(order.begin(), order.end(), [pos](uint32_t a, uint32_t b) {
    return std::lexicographical_compare(pos + a * 3, pos + a * 3 + 3, pos + b * 3, pos + b * 3 + 3);
  });
  std::vector<int16_t> positions;
  std::vector<uint8_t> colors;
  positions.reserve(n * 3);
  colors.reserve(n * 3);
  for (size_t i = 0; i < n;) {
    size_t j = i;
    uint32_t sum[3] = {0, 0, 0};
    while (j < n && std::equal(pos + order[i] * 3, pos + order[i] * 3 + 3, pos + order[j] * 3)) {
      for (int c = 0; c < 3; ++c) sum[c] += frame.colors[order[j] * 3 + c];
      ++j;
    }
    const uint32_t count = uint32_t(j - i);
    for (int c = 0; c < 3; ++c) {
      positions.push_back(pos[order[i] * 3 + c]);
      colors.push_back(uint8_t(sum[c] / count));
    }
    i = j;
  }
  Md5 md5;
  std::vector<uint8_t> bytes;
  bytes.reserve(positions.size() * 2);
  for (int16_t v : positions) {
    bytes.push_back(uint8_t(uint16_t(v) & 0xff));
    bytes.push_back(uint8_t(uint16_t(v) >> 8));
  }
  md5.update(bytes.data(), bytes.size());
  md5.update(colors.data(), colors.size());
  return md5.hex();
}

}  // namespace vpcc
