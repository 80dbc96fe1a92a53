// What holoquic-pack is asked to make, whether the command line's flags or a scene file said it:
// the objects and their sources and placement, the timing, the quality ladder and the codec.
// Everything after parsing (sources, encoding, the MPD) reads only this.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <vector>

namespace holoquic {

/// One rung of the quality ladder: level of detail, map count and the two quantisers, given or
/// chosen per object for a target bit rate (rate_target.h).
struct Rung {
  unsigned lod = 1, maps = 1;
  int geometryQp = 28, attributeQp = 34;
  /// 0: the quantisers above as given. Otherwise the rate (Mbit/s) the packer fits each object's
  /// quantisers to, measured on its first segment, with attributeQp = geometryQp + offset.
  double targetMbps = 0;
  int attributeQpOffset = 8;
};

/// The built-in ladder, lowest quality first, derived from measured curves (AVC, docs/benchmarks.md
/// "The quality ladder re-derived"; scripts/rd/ladder_sweep.sh, ladder_hull.py): the lowest rung
/// kept from the hand-set ladder (what a player falls back to on a poor link), the four above on
/// the rate-quality hull of a grid of candidates, each about 1.5–2.2× the rate of the one below —
/// about an 8–11× span (a demo figure 0.45 → 3.7 Mbit/s, CesiumMan at 9 bits 0.86 → 10 Mbit/s):
/// a quarter of the points at coarse quantisers at the bottom, two maps at fine ones at the top.
inline std::vector<Rung> defaultLadder() {
  return {{2, 1, 36, 46}, {2, 1, 28, 38}, {1, 1, 28, 38}, {1, 2, 20, 30}, {1, 2, 14, 24}};
}

enum class SourceKind { Demo, Ply, Gltf };

struct ObjectPlan {
  std::string id;  // [a-z0-9-]+: directory and MPD id
  SourceKind kind = SourceKind::Ply;
  /// PLY: a folder (its .ply files in name order) or a numbered pattern (frame_%04d.ply);
  /// glTF: the model file. Unused for the demo figure.
  std::string path;
  int animation = 0;      // glTF: which animation
  unsigned demoSeed = 0;  // demo: which figure (clothes, tempo, phase)
  bool dense = false;     // demo: 10 bits at 2.1 mm instead of 9 bits at 5.5 mm
  /// PLY: float coordinates in any unit scaled onto the grid (aspect kept, longest side
  /// spanning it); `unitMetres` is what one input unit measures, so the MPD shows real size.
  bool fit = false;
  double unitMetres = 1;
  unsigned bits = 10;         // voxel grid depth
  double metresPerVoxel = 0;  // 0: derived from the source (see docs/packaging.md)
  /// Placement. Position: where the bottom centre of the object's bounding box stands, scene
  /// metres; rotation: unit quaternion x y z w; size: factor on the real size. Without a position
  /// objects stand on a circle (docs/packaging.md).
  std::optional<std::array<double, 3>> position;
  std::optional<std::array<double, 4>> rotation;
  double size = 1;
};

struct ScenePlan {
  std::string mode;  // demo, ply, gltf, sample or scene
  std::string out;   // content directory; its last component is the scene name
  unsigned frameRate = 30;
  double segmentSeconds = 1;
  /// Scene length in seconds, a whole number of segments; 0: from the sources (PLY frames,
  /// the longest glTF animation, 10 s for the demo).
  double seconds = 0;
  std::string codec = "avc";
  bool inter = true, smoothing = false;
  unsigned threads = 1;
  /// Publish a playable scene early and grow it in place, resuming an unfinished one (growth.h).
  bool grow = false;
  std::vector<Rung> ladder = defaultLadder();
  std::vector<ObjectPlan> objects;
  /// WebTransport session URLs the manifest lists (docs/mpd.md), in order of preference.
  std::vector<std::string> webtransportEndpoints;

  unsigned framesPerSegment() const { return unsigned(frameRate * segmentSeconds + 0.5); }
};

}  // namespace holoquic
