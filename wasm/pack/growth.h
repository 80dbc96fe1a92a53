// A scene packed to be watched while it grows (`--grow`): the stages it is published in, lowest
// quality first, and the log in its directory from which an interrupted run resumes. Every
// published manifest names only segment files that exist, and a segment file, once written, never
// changes, so a player holding any earlier manifest keeps playing what it names.
#pragma once

#include <array>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "report.h"
#include "scene_plan.h"
#include "sources.h"

namespace holoquic {

/// What a published manifest names: the first `segments` segments of every object at rungs
/// 0 … rungs − 1.
struct Stage {
  unsigned segments = 0, rungs = 0;
};

/// The stages of a growing scene: a short first pass (the first `firstSegments` segments at the
/// lowest rung, so something moves soon), every segment at the lowest rung, then one rung more
/// per stage. Encoding costs about the same at every rung (docs/benchmarks.md), so the first
/// pass is what decides how soon a newcomer sees the scene.
std::vector<Stage> growthStages(unsigned segments, unsigned rungs, unsigned firstSegments);

/// One segment of one object at one rung.
struct Cell {
  size_t object = 0;
  unsigned rung = 0, segment = 0;
};

/// What encoding a cell gave: everything the manifest and the report need, so a resumed run
/// neither re-encodes nor re-decodes it.
struct CellResult {
  size_t bytes = 0;
  double pointsPerFrame = 0;
  unsigned width = 0, height = 0;
  uint8_t levelIdc = 0;              // the V3C level the encoder declared in the segment (ptl_level_idc)
  std::array<double, 6> voxelBox{};  // min x y z, max x y z (exclusive) of the input frames
  Measured measured;                 // frames == 0 unless this is a measured (first) segment
};

/// The settings that decide a cell's bytes, as one line of text: a log written for other
/// settings is not resumed. Placement is left out (only the manifest depends on it).
std::string describePlan(const ScenePlan& plan, const std::vector<Source>& sources);

/// The resume log `packing.jsonl` in a growing scene's directory: the plan's description on the
/// first line, then one JSON line per finished cell, appended after its segment file is in place.
/// It exists exactly while the scene is unfinished; a scene directory with a manifest and no log
/// is complete.
class PackLog {
 public:
  static constexpr const char* kFileName = "packing.jsonl";

  /// Opens the log of `directory` for the plan described by `plan`: an earlier run's finished
  /// cells whose files are intact become `resumed()`; a log of other settings is discarded with
  /// the directory's content (the scene starts over). Throws std::runtime_error (exit 4, an output
  /// problem) when the directory holds a finished scene or other files — nothing is overwritten —
  /// or cannot be written.
  PackLog(const std::filesystem::path& directory, const std::string& plan, const std::vector<std::string>& objectIds, size_t rungs,
          unsigned segments);
  ~PackLog();
  PackLog(const PackLog&) = delete;
  PackLog& operator=(const PackLog&) = delete;

  const std::vector<std::pair<Cell, CellResult>>& resumed() const { return resumed_; }
  /// Whether an earlier run's log was found (and matched), for the console.
  bool resuming() const { return resuming_; }
  /// Appends a finished cell (callers serialise).
  void append(const Cell& cell, const CellResult& result);
  /// The scene is complete: the log goes.
  void finish();

 private:
  std::filesystem::path path_;
  std::FILE* file_ = nullptr;
  std::vector<std::pair<Cell, CellResult>> resumed_;
  bool resuming_ = false;
};

/// Ctrl-C (SIGINT) or SIGTERM while a growing scene is packed: the tool says the scene stays
/// playable and that the same command finishes it, then exits at once (status 130 or 143). Files
/// are only ever renamed into place, so stopping anywhere leaves a valid scene.
void stopCleanlyOnSignal(const std::string& out);

}  // namespace holoquic
