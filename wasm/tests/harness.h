// A tiny test harness shared by the CTest executables (they also build under Emscripten, where
// GoogleTest is not available).
#pragma once

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <iterator>
#include <string>
#include <vector>

namespace harness {

inline int& failures() {
  static int count = 0;
  return count;
}

inline std::vector<std::pair<std::string, std::function<void()>>>& registry() {
  static std::vector<std::pair<std::string, std::function<void()>>> tests;
  return tests;
}

struct Register {
  Register(const char* name, std::function<void()> fn) { registry().emplace_back(name, std::move(fn)); }
};

inline std::vector<uint8_t> readFile(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) {
    std::fprintf(stderr, "cannot read %s\n", path.c_str());
    std::exit(2);
  }
  return std::vector<uint8_t>((std::istreambuf_iterator<char>(f)), {});
}

inline std::string& sharedDir() {
  static std::string dir;
  return dir;
}

/// Exit status CTest reads as "skipped" (the tests' SKIP_RETURN_CODE): not everything could run.
constexpr int kSkipExitCode = 77;

inline int& skips() {
  static int count = 0;
  return count;
}

/// Marks the running test case as not run for want of its data; the caller returns at once.
/// A skip is not a pass: the executable then exits with kSkipExitCode unless something failed.
inline void skip(const char* why) {
  std::printf("  skipped: %s\n", why);
  ++skips();
}

inline int run(int argc, char** argv) {
  if (argc > 1) sharedDir() = argv[1];
  for (auto& [name, fn] : registry()) {
    const int failuresBefore = failures(), skipsBefore = skips();
    try {
      fn();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "  unexpected exception: %s\n", e.what());
      ++failures();
    }
    const char* verdict = failures() != failuresBefore ? "FAIL" : skips() != skipsBefore ? "skip" : "ok  ";
    std::printf("%s %s\n", verdict, name.c_str());
  }
  if (failures() != 0) return 1;
  return skips() == 0 ? 0 : kSkipExitCode;
}

}  // namespace harness

#define TEST(name) \
  static void name(); \
  static harness::Register register_##name(#name, name); \
  static void name()

#define CHECK(cond)                                                             \
  do {                                                                          \
    if (!(cond)) {                                                              \
      std::fprintf(stderr, "  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
      ++harness::failures();                                                    \
    }                                                                           \
  } while (0)

#define CHECK_EQ(a, b)                                                                      \
  do {                                                                                      \
    const auto va = (a);                                                                    \
    const auto vb = (b);                                                                    \
    if (!(va == vb)) {                                                                      \
      std::fprintf(stderr, "  %s:%d: %s == %s failed\n", __FILE__, __LINE__, #a, #b);        \
      ++harness::failures();                                                                \
    }                                                                                       \
  } while (0)

#define CHECK_THROWS(expr, type)                                                             \
  do {                                                                                       \
    bool thrown = false;                                                                     \
    try {                                                                                    \
      (void)(expr);                                                                          \
    } catch (const type&) {                                                                  \
      thrown = true;                                                                         \
    }                                                                                        \
    if (!thrown) {                                                                           \
      std::fprintf(stderr, "  %s:%d: %s did not throw %s\n", __FILE__, __LINE__, #expr, #type); \
      ++harness::failures();                                                                 \
    }                                                                                        \
  } while (0)

#define TEST_MAIN \
  int main(int argc, char** argv) { return harness::run(argc, argv); }
