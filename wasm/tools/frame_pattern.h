// Numbered file names such as frame_%04d.ply: checking a pattern and expanding it. Done by hand
// rather than with printf, so a pattern from the command line can never act as a format string.
#pragma once

#include <string>

namespace cli {

/// A pattern with exactly one frame number conversion (%d or %0Nd, N ≤ 9); "%%" is a literal %.
struct FramePattern {
  std::string before, after;
  unsigned width = 0;  // zero-padded digits; 0: as many as the number needs

  std::string path(unsigned long long index) const {
    std::string digits = std::to_string(index);
    if (digits.size() < width) digits.insert(0, width - digits.size(), '0');
    return before + digits + after;
  }
};

/// True when `text` holds a % at all (then it must be a valid pattern).
inline bool looksLikePattern(const std::string& text) { return text.find('%') != std::string::npos; }

/// Parses `text`; returns false (and says why in `error`) unless it has exactly one number field.
inline bool parseFramePattern(const std::string& text, FramePattern& out, std::string& error) {
  out = FramePattern{};
  bool seen = false;
  std::string* side = &out.before;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text[i] != '%') {
      *side += text[i];
      continue;
    }
    if (i + 1 < text.size() && text[i + 1] == '%') {
      *side += '%';
      ++i;
      continue;
    }
    size_t j = i + 1;
    unsigned width = 0;
    if (j < text.size() && text[j] == '0') {
      ++j;
      if (j < text.size() && text[j] >= '1' && text[j] <= '9') width = unsigned(text[j++] - '0');
    }
    if (j >= text.size() || text[j] != 'd') {
      error = "'" + text + "': only %d or %0Nd (N = 1 … 9) may stand for the frame number";
      return false;
    }
    if (seen) {
      error = "'" + text + "' has more than one frame number field";
      return false;
    }
    seen = true;
    out.width = width;
    side = &out.after;
    i = j;
  }
  if (!seen) {
    error = "'" + text + "' has no frame number field (%d or %0Nd)";
    return false;
  }
  return true;
}

}  // namespace cli
