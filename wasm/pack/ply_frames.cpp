// PLY frame lists: a folder's .ply files sorted by name, or the files a numbered pattern names,
// counted up from the first number that exists (0 or 1) until one is missing.
#include "ply_frames.h"

#include <algorithm>
#include <filesystem>

#include "cli.h"
#include "frame_pattern.h"

namespace fs = std::filesystem;

namespace holoquic {

std::vector<std::string> listPlyFrames(const std::string& source) {
  std::vector<std::string> files;
  if (cli::looksLikePattern(source)) {
    cli::FramePattern pattern;
    std::string error;
    if (!cli::parseFramePattern(source, pattern, error)) throw cli::UsageError("PLY pattern " + error);
    std::error_code ec;
    const unsigned first = fs::is_regular_file(pattern.path(0), ec) ? 0 : 1;
    for (unsigned long long n = first; fs::is_regular_file(pattern.path(n), ec); ++n) files.push_back(pattern.path(n));
    if (files.empty())
      throw cli::InputError(source + ": no frames (neither " + pattern.path(0) + " nor " + pattern.path(1) + " exists)");
    return files;
  }
  std::error_code ec;
  if (!fs::is_directory(source, ec))
    throw cli::InputError(source + (fs::exists(source, ec) ? ": not a folder (a PLY source is a folder or a pattern like frame_%04d.ply)"
                                                           : ": no such folder"));
  for (const auto& entry : fs::directory_iterator(source, ec))
    if (entry.path().extension() == ".ply") files.push_back(entry.path().string());
  if (ec) throw cli::InputError(source + ": " + ec.message());
  std::sort(files.begin(), files.end());
  if (files.empty()) throw cli::InputError(source + ": no .ply files");
  return files;
}

}  // namespace holoquic
