// Command-line conventions shared by holoquic-pack, vpcc-encode and vpcc-decode: the documented
// exit codes, the two kinds of refusal that map onto them, and strict number parsing whose
// errors name the option (std::stoi would accept "12abc" and abort on "abc").
#pragma once

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <stdexcept>
#include <string>

namespace cli {

/// Exit codes, the same for every tool (docs/packaging.md, each tool's --help).
enum ExitCode : int {
  kOk = 0,
  kUsage = 2,   // unknown mode or option, a missing or malformed value, a value out of range
  kInput = 3,   // an input file or folder is missing, unreadable or unusable
  kOutput = 4,  // encoding failed or the output could not be written
};

/// The command line (or a scene file standing for it) is wrong: exit kUsage.
struct UsageError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// An input named on the command line cannot be used: exit kInput.
struct InputError : std::runtime_error {
  using std::runtime_error::runtime_error;
};

/// The value after the option at `argv[i]`, advancing `i` past it; a UsageError naming the
/// option when the command line ends first. One definition for every tool's parser.
inline std::string valueAfter(int argc, char** argv, int& i) {
  if (i + 1 >= argc) throw UsageError(std::string(argv[i]) + " needs a value");
  return argv[++i];
}

/// `text` as a whole decimal integer in [min, max]; `option` names it in the error.
inline long long integer(const std::string& option, const std::string& text, long long min, long long max) {
  errno = 0;
  char* end = nullptr;
  const long long v = text.empty() ? 0 : std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || text.find_first_of(" \t") != std::string::npos)
    throw UsageError(option + ": '" + text + "' is not a whole number");
  if (errno == ERANGE || v < min || v > max)
    throw UsageError(option + ": " + text + " is out of range (" + std::to_string(min) + " … " + std::to_string(max) + ")");
  return v;
}

/// `text` as a finite decimal number in (min, max] when `minExclusive`, else [min, max].
inline double number(const std::string& option, const std::string& text, double min, double max, bool minExclusive = false) {
  errno = 0;
  char* end = nullptr;
  const double v = text.empty() ? 0 : std::strtod(text.c_str(), &end);
  if (text.empty() || *end != '\0' || !std::isfinite(v) || text.find_first_of(" \t") != std::string::npos)
    throw UsageError(option + ": '" + text + "' is not a number");
  if (v < min || v > max || (minExclusive && v == min)) {
    char range[96];
    std::snprintf(range, sizeof range, "%s%g … %g", minExclusive ? "above " : "", min, max);
    throw UsageError(option + ": " + text + " is out of range (" + range + ")");
  }
  return v;
}

/// One of `choices` (listed as "a|b|c"), else a UsageError naming the option.
inline std::string choice(const std::string& option, const std::string& text, const std::string& choices) {
  size_t start = 0;
  for (;;) {
    const size_t bar = choices.find('|', start);
    if (choices.compare(start, bar == std::string::npos ? std::string::npos : bar - start, text) == 0 && !text.empty()) return text;
    if (bar == std::string::npos) break;
    start = bar + 1;
  }
  throw UsageError(option + ": '" + text + "' is not one of " + choices);
}

}  // namespace cli
