// The scene manifest: a DASH MPD in the holoquic profile (docs/mpd.md), static — or dynamic
// while a scene packed with --grow is still growing.
#pragma once

#include <array>
#include <cstdint>
#include <ctime>
#include <string>
#include <vector>

namespace holoquic {

struct RepresentationInfo {
  unsigned quality = 0;
  std::vector<size_t> segmentBytes;  // per distinct segment file
  double pointsPerFrame = 0;
  unsigned width = 0, height = 0, geometryBits = 10;
  /// The highest V3C level (ptl_level_idc) its segments declare; 0: unknown, not written.
  uint8_t levelIdc = 0;
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

/// The most WebTransport endpoints a manifest lists (the player opens a session to each at once).
constexpr size_t kMaxWebTransportEndpoints = 16;

/// Why `url` cannot be a WebTransport endpoint of the manifest (an absolute https URL with a
/// host, printable, at most 2048 bytes) in a few words ("no host"), or "" when it can.
std::string webTransportEndpointProblem(const std::string& url);

/// A stage of a growing scene that is not its last (docs/mpd.md → "A growing scene"): its MPD is
/// dynamic, so that players read it again every `updateSeconds` for the next stage. DASH anchors
/// a dynamic presentation at `availabilityStart`, which stays the same in every stage: the time
/// the first stage was published, so every segment a stage names is already available by the
/// wall clock too.
struct Growing {
  std::string availabilityStart;  // xs:dateTime, UTC
  std::string publishTime;        // xs:dateTime, UTC: when this stage is published
  unsigned updateSeconds = 2;
};

/// `t` as an xs:dateTime in UTC to the second, e.g. "2026-11-26T20:43:09Z".
std::string utcDateTime(std::time_t t);

/// MPD@availabilityStartTime of a dynamic MPD's text (a growing scene's published stage), or ""
/// when it has none.
std::string availabilityStartOf(const std::string& mpdText);

/// The MPD text for a scene whose objects each have `segments` distinct segments, listing
/// `webtransportEndpoints` (checked URLs, in order of preference) after the Period as
/// supplemental descriptors (docs/mpd.md → "WebTransport endpoints"); dynamic when `growing`
/// is given, else static. The scene name and the URLs are escaped for XML (the name is a
/// directory name, anything a file system allows).
std::string writeMpd(const std::string& scene, const std::vector<ObjectInfo>& objects, unsigned segments,
                     const SceneTiming& timing = {}, const std::vector<std::string>& webtransportEndpoints = {},
                     const Growing* growing = nullptr);

}  // namespace holoquic
