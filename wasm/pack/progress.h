// Encoding progress for whoever watches: per object and in total, with the time spent and
// estimates of the time left — to the end and, for a growing scene, to the next stage it
// publishes. On a terminal one line redrawn in place; otherwise (a log file, a pipe, CI) plain
// lines, a few per object, never a carriage return.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace holoquic {

class Progress {
 public:
  /// A point the line counts down to: `label` ("playable", "quality 2") is reached when the work
  /// done reaches `work` (jobs are done roughly in order, so the work before it is what is left).
  struct Milestone {
    std::string label;
    double work = 0;
  };

  /// `objects`: each object's id and how many jobs it has; `work`: what all jobs cost together,
  /// in the unit `finished` is told (1 per job when they cost alike); `milestones` in order.
  Progress(const std::vector<std::pair<std::string, size_t>>& objects, double work, std::vector<Milestone> milestones,
           std::FILE* out);
  /// One job of `object` costing `work` is done (any thread).
  void finished(size_t object, double work = 1);
  /// The next `count` milestones are reached: `message` printed on a line of its own.
  void reached(size_t count, const std::string& message);
  /// A line of its own (any thread), the redrawn line cleared first.
  void note(const std::string& message);
  /// Ends the redrawn line on a terminal.
  void close();

  /// "42 s", "3 min 05 s", "1 h 02 min".
  static std::string duration(double seconds);

 private:
  std::string line(size_t object) const;
  void noteLocked(const std::string& message);

  std::FILE* out_;
  bool terminal_;
  std::vector<std::string> ids_;
  std::vector<size_t> done_, total_;
  size_t allDone_ = 0, all_ = 0;
  double work_ = 0, workDone_ = 0;
  std::vector<Milestone> milestones_;
  size_t reached_ = 0;
  bool lineShown_ = false;
  std::chrono::steady_clock::time_point start_, lastLine_;
  size_t lastTenth_ = 0;
  std::mutex lock_;
};

}  // namespace holoquic
