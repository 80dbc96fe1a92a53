// Progress lines: "figure-1 3/10 · total 12/40 segments (30 %) · 1 min 20 s so far · playable in
// about 40 s · about 3 min 05 s left". The estimates assume the remaining work goes at the rate
// the finished work went.
#include "progress.h"

#include <unistd.h>

namespace holoquic {

Progress::Progress(const std::vector<std::pair<std::string, size_t>>& objects, double work, std::vector<Milestone> milestones,
                   std::FILE* out)
    : out_(out),
      terminal_(isatty(fileno(out)) != 0),
      work_(work),
      milestones_(std::move(milestones)),
      start_(std::chrono::steady_clock::now()),
      lastLine_(start_) {
  for (const auto& [id, jobs] : objects) {
    ids_.push_back(id);
    total_.push_back(jobs);
    done_.push_back(0);
    all_ += jobs;
  }
}

std::string Progress::duration(double seconds) {
  char text[48];
  const long s = long(seconds + 0.5);
  if (s < 60) std::snprintf(text, sizeof text, "%ld s", s);
  else if (s < 3600) std::snprintf(text, sizeof text, "%ld min %02ld s", s / 60, s % 60);
  else std::snprintf(text, sizeof text, "%ld h %02ld min", s / 3600, s / 60 % 60);
  return text;
}

std::string Progress::line(size_t object) const {
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  char text[256];
  std::snprintf(text, sizeof text, "%s %zu/%zu%s · total %zu/%zu segments (%zu %%) · %s so far", ids_[object].c_str(), done_[object],
                total_[object], done_[object] == total_[object] ? " done" : "", allDone_, all_, all_ ? 100 * allDone_ / all_ : 100,
                duration(elapsed).c_str());
  std::string s = text;
  if (allDone_ == all_ || workDone_ <= 0) return s;
  const double secondsPerWork = elapsed / workDone_;
  if (reached_ < milestones_.size() && milestones_[reached_].work < work_)
    s += " · " + milestones_[reached_].label + " in about " +
         duration(secondsPerWork * std::max(0.0, milestones_[reached_].work - workDone_));
  return s + " · about " + duration(secondsPerWork * std::max(0.0, work_ - workDone_)) + " left";
}

void Progress::finished(size_t object, double work) {
  std::lock_guard<std::mutex> guard(lock_);
  ++done_[object];
  ++allDone_;
  workDone_ += work;
  const auto now = std::chrono::steady_clock::now();
  if (terminal_) {
    // The line redrawn in place; padded so a shorter line covers a longer one.
    std::fprintf(out_, "\r%-120s", line(object).c_str());
    std::fflush(out_);
    lineShown_ = true;
    return;
  }
  // Plain lines: when an object is done, at each tenth of the total, and at least every 30 s.
  const size_t tenth = all_ ? 10 * allDone_ / all_ : 10;
  if (done_[object] == total_[object] || tenth != lastTenth_ || now - lastLine_ >= std::chrono::seconds(30)) {
    std::fprintf(out_, "progress: %s\n", line(object).c_str());
    std::fflush(out_);
    lastTenth_ = tenth;
    lastLine_ = now;
  }
}

void Progress::noteLocked(const std::string& message) {
  if (lineShown_) std::fprintf(out_, "\r%-120s\r", "");
  std::fprintf(out_, "%s\n", message.c_str());
  std::fflush(out_);
  lineShown_ = false;
}

void Progress::reached(size_t count, const std::string& message) {
  std::lock_guard<std::mutex> guard(lock_);
  reached_ += count;
  noteLocked(message);
}

void Progress::note(const std::string& message) {
  std::lock_guard<std::mutex> guard(lock_);
  noteLocked(message);
}

void Progress::close() {
  std::lock_guard<std::mutex> guard(lock_);
  if (terminal_ && lineShown_) std::fprintf(out_, "\n");
  lineShown_ = false;
}

}  // namespace holoquic
