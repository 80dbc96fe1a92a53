// Meeting a rung's target bit rate: the geometry and attribute quantisers, moved together along
// the rung's fixed offset, are bisected until one segment's measured rate is as close to the
// target as a whole QP step allows (docs/packaging.md, "Target bit rates").
#pragma once

#include <functional>
#include <vector>

#include "scene_plan.h"
#include "sources.h"

namespace holoquic {

/// What fitting a rung found: the rung with its quantisers set, the rate measured with them, the
/// encodes it took and whether the target lies within the reachable range (otherwise the QP
/// pair at the nearer end of the range).
struct RateFit {
  Rung rung;
  double mbps = 0;
  unsigned trials = 0;
  bool reached = true;
};

/// The most trial encodes one fit makes: a bisection over at most 52 geometry QPs (6 steps)
/// and one more to compare the two QPs either side of the target.
constexpr unsigned kMaxRateTrials = 7;

/// Chooses geometryQp (and attributeQp = geometryQp + rung.attributeQpOffset, both in 0 … 51)
/// for `rung.targetMbps`. `measureMbps` encodes with a candidate rung and returns its rate; the
/// rate is assumed to fall as the quantisers grow (it does, up to encoder noise, which can
/// only cost the choice one QP step). Picks the QP whose rate is nearest the target in ratio.
RateFit fitRungToRate(const Rung& rung, const std::function<double(const Rung&)>& measureMbps);

/// Each object's ladder: plan.ladder with every target-rate rung fitted on the object's first
/// segment (the quantisers then hold for all its segments, so its quality does not jump from
/// one segment to the next). Prints one line per fitted rung; encodes on plan.threads threads.
std::vector<std::vector<Rung>> fitLadders(const ScenePlan& plan, const std::vector<Source>& sources);

}  // namespace holoquic
