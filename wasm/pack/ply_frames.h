// Where an object's PLY frames are: a folder (its .ply files in name order) or a numbered
// pattern such as captures/frame_%04d.ply (numbers from 0 or 1, consecutive).
#pragma once

#include <string>
#include <vector>

namespace holoquic {

/// The frame files of `source`; throws cli::InputError naming the source when there are none,
/// or cli::UsageError for a malformed pattern.
std::vector<std::string> listPlyFrames(const std::string& source);

}  // namespace holoquic
