// Encoding progress for whoever watches: per object and in total, with the time spent and an
// estimate of the time left. On a terminal one line redrawn in place; otherwise (a log file, a
// pipe, CI) plain lines, a few per object, never a carriage return.
#pragma once

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <vector>

namespace holoquic {

class Progress {
 public:
  /// `objects`: each object's id and how many jobs (segments) it has.
  Progress(const std::vector<std::pair<std::string, size_t>>& objects, std::FILE* out);
  /// One job of `object` is done (any thread).
  void finished(size_t object);
  /// Ends the redrawn line on a terminal.
  void close();

  /// "42 s", "3 min 05 s", "1 h 02 min".
  static std::string duration(double seconds);

 private:
  std::string line(size_t object) const;

  std::FILE* out_;
  bool terminal_;
  std::vector<std::string> ids_;
  std::vector<size_t> done_, total_;
  size_t allDone_ = 0, all_ = 0;
  std::chrono::steady_clock::time_point start_, lastLine_;
  size_t lastTenth_ = 0;
  std::mutex lock_;
};

}  // namespace holoquic
