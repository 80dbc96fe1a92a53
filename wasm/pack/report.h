// The quality report: per object and rung the rate, points per frame, bits per point and the
// PSNRs measured on the first segment, printed as a table and written as report.json.
#pragma once

#include <string>
#include <vector>

#include "mpd.h"
#include "scene_plan.h"

namespace holoquic {

/// Sums of per-frame quality measurements of one object at one rung.
struct Measured {
  double d1 = 0, d2 = 0, y = 0, u = 0, v = 0;
  size_t frames = 0;
};

/// Prints the table to stdout and writes `path` (report.json); `ladders` are the rungs each
/// object was encoded with (its quantisers, and the target rate a rung was fitted to).
void writeReport(const std::string& path, const std::string& scene, const std::vector<ObjectInfo>& objects,
                 const std::vector<std::vector<Rung>>& ladders, const std::vector<std::vector<Measured>>& measured,
                 const SceneTiming& timing);

}  // namespace holoquic
