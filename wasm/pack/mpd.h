// The scene manifest: a static DASH MPD in the holoquic profile (docs/mpd.md).
#pragma once

#include <array>
#include <string>
#include <vector>

namespace holoquic {

struct RepresentationInfo {
  unsigned quality = 0;
  std::vector<size_t> segmentBytes;  // per distinct segment file
  double pointsPerFrame = 0;
  unsigned width = 0, height = 0, geometryBits = 10;
};

struct ObjectInfo {
  std::string id;
  std::string codecs = "v3c1.avc";
  std::array<double, 3> position{};
  std::array<double, 4> rotation{0, 0, 0, 1};  // x y z w
  double scale = 1;
  std::array<double, 6> bbox{};  // scene metres
  std::string playMode = "pingpong";
  std::vector<RepresentationInfo> representations;
};

/// Frame rate and segment length, the same for every object of a scene.
struct SceneTiming {
  unsigned frameRate = 30;
  unsigned framesPerSegment = 30;
  double segmentSeconds() const { return double(framesPerSegment) / frameRate; }
};

/// The MPD text for a scene whose objects each have `segments` distinct segments. The scene name
/// is escaped for XML (it is a directory name, anything a file system allows).
std::string writeMpd(const std::string& scene, const std::vector<ObjectInfo>& objects, unsigned segments,
                     const SceneTiming& timing = {});

}  // namespace holoquic
