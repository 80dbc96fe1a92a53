// Progress lines: "figure-1 3/10 · total 12/40 segments (30 %) · 1 min 20 s so far · about 3 min
// 05 s left". The estimate assumes the remaining segments cost what the finished ones did.
#include "progress.h"

#include <unistd.h>

namespace holoquic {

Progress::Progress(const std::vector<std::pair<std::string, size_t>>& objects, std::FILE* out)
    : out_(out), terminal_(isatty(fileno(out)) != 0), start_(std::chrono::steady_clock::now()), lastLine_(start_) {
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
  if (allDone_ < all_) s += " · about " + duration(elapsed / double(allDone_) * double(all_ - allDone_)) + " left";
  return s;
}

void Progress::finished(size_t object) {
  std::lock_guard<std::mutex> guard(lock_);
  ++done_[object];
  ++allDone_;
  const auto now = std::chrono::steady_clock::now();
  if (terminal_) {
    // The line redrawn in place; padded so a shorter line covers a longer one.
    std::fprintf(out_, "\r%-110s", line(object).c_str());
    std::fflush(out_);
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

void Progress::close() {
  std::lock_guard<std::mutex> guard(lock_);
  if (terminal_) std::fprintf(out_, "\n");
}

}  // namespace holoquic
