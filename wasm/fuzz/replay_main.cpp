// Replays every file of the given directories through one fuzz target (targets.h) without
// libFuzzer: the regression inputs (every input that ever failed) and the committed corpus, as
// a plain test. Exits non-zero when an input throws anything but a ParseError; crashes end the
// process. A directory that does not exist is skipped (a target may have no regressions yet).
//
//   vpcc-fuzz-replay TARGET DIR...
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "targets.h"

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: vpcc-fuzz-replay TARGET DIR...\n");
    return 2;
  }
  const vpcc::fuzz::Target target = vpcc::fuzz::targetNamed(argv[1]);
  if (!target) {
    std::fprintf(stderr, "no fuzz target %s in this build\n", argv[1]);
    return 2;
  }
  size_t replayed = 0, failed = 0;
  for (int a = 2; a < argc; ++a) {
    if (!std::filesystem::is_directory(argv[a])) continue;
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(argv[a]))
      if (entry.is_regular_file() && entry.path().filename().string()[0] != '.') files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
      std::ifstream in(path, std::ios::binary);
      const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
      try {
        target(bytes.data(), bytes.size());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", path.c_str(), e.what());
        ++failed;
      }
      ++replayed;
    }
  }
  std::printf("%s: %zu inputs replayed, %zu failed\n", argv[1], replayed, failed);
  return failed ? 1 : 0;
}
