// Replays every file of the given directories through the fuzzing harness without libFuzzer:
// the regression corpus (every input that ever failed) and the seed corpus, as a plain test.
// Exits non-zero when an input throws anything but a ParseError; crashes end the process.
//
//   vpcc-fuzz-replay DIR...
#include <algorithm>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <vector>

#include "decode_input.h"

int main(int argc, char** argv) {
  size_t replayed = 0, failed = 0;
  for (int a = 1; a < argc; ++a) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(argv[a]))
      if (entry.is_regular_file() && entry.path().filename().string()[0] != '.') files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    for (const auto& path : files) {
      std::ifstream in(path, std::ios::binary);
      const std::vector<uint8_t> bytes((std::istreambuf_iterator<char>(in)), {});
      try {
        vpcc::fuzz::decodeInput(bytes.data(), bytes.size());
      } catch (const std::exception& e) {
        std::fprintf(stderr, "%s: %s\n", path.c_str(), e.what());
        ++failed;
      }
      ++replayed;
    }
  }
  std::printf("%zu inputs replayed, %zu failed\n", replayed, failed);
  return failed ? 1 : 0;
}
