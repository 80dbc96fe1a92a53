// Readers for the conformance logs TMC2's decoder writes (../shared/vpcc/*/NAME_dec_*_log.txt).
#pragma once

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <string>
#include <vector>

namespace tmc2 {

/// Path prefix (folder/NAME) of every TMC2 conformance case — a folder NAME/ holding NAME.bin and
/// TMC2's decoder logs — under SHARED_DIR/vpcc/ and wasm/tests/conformance/, in name order.
inline std::vector<std::string> cases(const std::string& sharedDir) {
  namespace fs = std::filesystem;
  std::vector<std::string> out;
  for (const fs::path& root : {fs::path(sharedDir) / "vpcc", fs::path(VPCC_CONFORMANCE_DIR)}) {
    if (!fs::is_directory(root)) continue;
    for (const auto& entry : fs::directory_iterator(root)) {
      const std::string name = entry.path().filename().string();
      if (fs::exists(entry.path() / (name + ".bin"))) out.push_back((entry.path() / name).string());
    }
  }
  std::sort(out.begin(), out.end(), [](const std::string& a, const std::string& b) {
    return fs::path(a).filename() < fs::path(b).filename();
  });
  if (out.empty()) std::printf("no conformance streams found: nothing to check\n");
  return out;
}

/// Values of `key = value` pairs on each line of a log that has `key`, in order.
inline std::vector<std::string> values(const std::string& path, const std::string& key) {
  std::ifstream f(path);
  std::vector<std::string> out;
  const std::regex re(key + R"(\s*=\s*([0-9a-f]+))");
  for (std::string line; std::getline(f, line);) {
    std::smatch m;
    if (std::regex_search(line, m, re)) out.push_back(m[1]);
  }
  return out;
}

/// Picture log: component name ("Occupancy", "Geometry", "Attribute", and "Geometry aux" /
/// "Attribute aux" for auxiliary videos) → per picture the MD5s of its three planes.
inline std::map<std::string, std::vector<std::vector<std::string>>> pictures(const std::string& path) {
  std::ifstream f(path);
  std::map<std::string, std::vector<std::vector<std::string>>> out;
  std::string component, base;
  const std::regex md5(R"(MD5checksumChan(\d) = ([0-9a-f]{32}))");
  for (std::string line; std::getline(f, line);) {
    if (line == "Occupancy" || line == "Geometry" || line == "Attribute") {
      component = base = line;
      continue;
    }
    // Each video's pictures follow a line naming its map and auxiliary flag.
    const size_t aux = line.find("AuxiliaryVideoFlag = ");
    if (aux != std::string::npos) {
      component = line.compare(aux + 21, 1, "1") == 0 ? base + " aux" : base;
      continue;
    }
    std::vector<std::string> planes;
    for (std::sregex_iterator it(line.begin(), line.end(), md5), end; it != end; ++it) planes.push_back((*it)[2]);
    if (planes.size() == 3) out[component].push_back(planes);
  }
  return out;
}

}  // namespace tmc2
