#include "mpd.h"

#include <algorithm>
#include <cstdio>
#include <numeric>
#include <sstream>

namespace holoquic {
namespace {

std::string num(double v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.7g", v);
  return buf;
}

template <size_t N>
std::string list(const std::array<double, N>& values) {
  std::string s;
  for (size_t i = 0; i < N; ++i) s += (i ? " " : "") + num(values[i]);
  return s;
}

std::string escaped(const std::string& text) {
  std::string out;
  for (const char c : text) {
    if (c == '&') out += "&amp;";
    else if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '"') out += "&quot;";
    else if (c == '\'') out += "&apos;";
    else out += c;
  }
  return out;
}

/// An ISO 8601 duration in seconds: PT10S, PT2.5S.
std::string isoSeconds(double seconds) { return "PT" + num(seconds) + "S"; }

}  // namespace

std::string webTransportEndpointProblem(const std::string& url) {
  const std::string scheme = "https://";
  if (url.size() > 2048) return "longer than 2048 bytes";
  if (url.compare(0, scheme.size(), scheme) != 0) return "not an https URL (WebTransport has no other scheme)";
  if (std::any_of(url.begin(), url.end(), [](unsigned char c) { return c <= ' ' || c == 0x7f; }))
    return "a blank or a control character in it";
  const size_t hostEnd = url.find_first_of("/?#", scheme.size());
  const std::string authority = url.substr(scheme.size(), hostEnd - scheme.size());
  if (authority.empty() || authority[0] == ':' || authority.find('@') != std::string::npos) return "no host";
  return "";
}

std::string utcDateTime(std::time_t t) {
  std::tm utc{};
  gmtime_r(&t, &utc);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &utc);
  return buf;
}

std::string availabilityStartOf(const std::string& mpdText) {
  const std::string key = "availabilityStartTime=\"";
  const size_t start = mpdText.find(key);
  if (start == std::string::npos) return "";
  const size_t end = mpdText.find('"', start + key.size());
  return end == std::string::npos ? "" : mpdText.substr(start + key.size(), end - start - key.size());
}

std::string writeMpd(const std::string& scene, const std::vector<ObjectInfo>& objects, unsigned segments, const SceneTiming& timing,
                     const std::vector<std::string>& webtransportEndpoints, const Growing* growing) {
  std::ostringstream x;
  x << "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
    << "<MPD xmlns=\"urn:mpeg:dash:schema:mpd:2011\" xmlns:hq=\"urn:holoquic:mpd:2026\"\n";
  if (growing)
    x << "     type=\"dynamic\" availabilityStartTime=\"" << growing->availabilityStart << "\" publishTime=\"" << growing->publishTime
      << "\" minimumUpdatePeriod=\"" << isoSeconds(growing->updateSeconds) << "\"\n"
      << "     profiles=\"urn:mpeg:dash:profile:isoff-live:2011\"\n";
  else
    x << "     type=\"static\" profiles=\"urn:mpeg:dash:profile:isoff-live:2011\"\n";
  x << "     mediaPresentationDuration=\"" << isoSeconds(segments * timing.segmentSeconds())
    << "\" minBufferTime=\"" << isoSeconds(timing.segmentSeconds()) << "\" hq:scene=\"" << escaped(scene)
    << "\" hq:up=\"y\">\n"
    << "  <Period id=\"0\" start=\"PT0S\">\n";
  for (size_t i = 0; i < objects.size(); ++i) {
    const ObjectInfo& o = objects[i];
    x << "    <AdaptationSet id=\"" << i << "\" hq:objectId=\"" << o.id
      << "\" contentType=\"volumetric\" mimeType=\"application/vnd.holoquic.v3c\" codecs=\"" << o.codecs
      << "\" segmentAlignment=\"true\"\n"
      << "                   hq:position=\"" << list(o.position) << "\" hq:rotation=\"" << list(o.rotation)
      << "\" hq:scale=\"" << num(o.scale) << "\"\n"
      << "                   hq:bbox=\"" << list(o.bbox) << "\" hq:loopSegments=\"" << segments << "\" hq:playMode=\""
      << o.playMode << "\">\n"
      << "      <BaseURL>" << o.id << "/</BaseURL>\n"
      << "      <SegmentTemplate timescale=\"" << timing.frameRate << "\" duration=\"" << timing.framesPerSegment
      << "\" startNumber=\"0\" media=\"$RepresentationID$/seg-$Number%05d$.v3c\"/>\n";
    for (const RepresentationInfo& r : o.representations) {
      const size_t peak = r.segmentBytes.empty() ? 0 : *std::max_element(r.segmentBytes.begin(), r.segmentBytes.end());
      const size_t total = std::accumulate(r.segmentBytes.begin(), r.segmentBytes.end(), size_t(0));
      const size_t avg = r.segmentBytes.empty() ? 0 : total / r.segmentBytes.size();
      x << "      <Representation id=\"" << r.quality << "\" hq:qualityRank=\"" << r.quality << "\" bandwidth=\""
        << size_t(double(peak * 8) / timing.segmentSeconds() + 0.5) << "\" hq:avgBandwidth=\""
        << size_t(double(avg * 8) / timing.segmentSeconds() + 0.5) << "\"\n"
        << "                      hq:pointsPerFrame=\"" << size_t(r.pointsPerFrame) << "\" hq:geometryBitDepth=\""
        << r.geometryBits << "\" width=\"" << r.width << "\" height=\"" << r.height << "\" frameRate=\"" << timing.frameRate << "\"";
      // What the segments' V3C parameter sets declare: a player refuses a Representation above
      // the level it decodes before fetching it, and holds each segment to it (docs/mpd.md).
      if (r.levelIdc != 0) x << " hq:v3cLevelIdc=\"" << unsigned(r.levelIdc) << "\"";
      x << "/>\n";
    }
    x << "    </AdaptationSet>\n";
  }
  x << "  </Period>\n";
  // After the Periods, where DASH puts MPD-level descriptors; a reader that does not know the
  // scheme skips a supplemental one.
  for (const std::string& url : webtransportEndpoints)
    x << "  <SupplementalProperty schemeIdUri=\"urn:holoquic:webtransport:2026\" value=\"" << escaped(url) << "\"/>\n";
  x << "</MPD>\n";
  return x.str();
}

}  // namespace holoquic
