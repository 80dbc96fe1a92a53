// Staging, writing and publishing the content directory (see content_dir.h).
#include "content_dir.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <stdexcept>

extern char** environ;

namespace fs = std::filesystem;

namespace holoquic {

namespace {

constexpr const char* kPublisher = "holoquic-publish";

bool isBucketUrl(const std::string& out) { return out.rfind("s3://", 0) == 0; }

/// holoquic-publish beside this program, else the first on PATH; throws naming it when absent.
fs::path findPublisher() {
  std::error_code ec;
  const fs::path beside = fs::read_symlink("/proc/self/exe", ec).parent_path() / kPublisher;
  if (!ec && access(beside.c_str(), X_OK) == 0) return beside;
  const char* path = std::getenv("PATH");
  std::string dirs = path ? path : "";
  for (size_t start = 0; start <= dirs.size();) {
    const size_t end = std::min(dirs.find(':', start), dirs.size());
    const fs::path candidate = fs::path(dirs.substr(start, end - start)) / kPublisher;
    if (end > start && access(candidate.c_str(), X_OK) == 0) return candidate;
    start = end + 1;
  }
  throw std::runtime_error(std::string("--out s3://… needs ") + kPublisher +
                           " (the origin's publisher: server/target/release/holoquic-publish) beside holoquic-pack or on PATH");
}

/// The temporary directory a bucket-bound scene is staged in: `<tmp>/holoquic-pack-<pid>/<scene>`.
fs::path bucketStaging(const std::string& out) {
  return fs::temp_directory_path() / ("holoquic-pack-" + std::to_string(getpid())) / fs::path(out).filename();
}

/// Runs `publisher staging out` (no shell) and waits; throws unless it exits 0.
void runPublisher(const fs::path& publisher, const fs::path& staging, const std::string& out) {
  std::string program = publisher.string(), dir = staging.string(), url = out;
  char* argv[] = {program.data(), dir.data(), url.data(), nullptr};
  pid_t pid = 0;
  if (posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv, environ) != 0)
    throw std::runtime_error(program + ": cannot start");
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    throw std::runtime_error(std::string(kPublisher) + " could not publish to " + out + " (its message is above)");
}

}  // namespace

fs::path startStaging(const std::string& out) {
  if (isBucketUrl(out)) findPublisher();  // fail before minutes of encoding, not after
  const fs::path staging = isBucketUrl(out) ? bucketStaging(out) : fs::path(out + ".partial");
  std::error_code ec;
  fs::remove_all(staging, ec);
  if (!ec) fs::create_directories(staging, ec);
  if (ec) throw std::runtime_error(staging.string() + ": cannot create (" + ec.message() + ")");
  return staging;
}

void writeFile(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  // Beside the file (same file system, so the rename is atomic); a run stopped before the rename
  // leaves only this name, which the next write of the file replaces.
  const fs::path temporary = path.string() + ".tmp";
  std::ofstream file(temporary, std::ios::binary);
  file.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  file.close();
  if (ec || !file) throw std::runtime_error(path.string() + ": cannot write");
  fs::rename(temporary, path, ec);
  if (ec) throw std::runtime_error(path.string() + ": cannot write (" + ec.message() + ")");
}

void writeFile(const fs::path& path, const std::string& text) { writeFile(path, std::vector<uint8_t>(text.begin(), text.end())); }

void publish(const fs::path& staging, const std::string& out) {
  if (isBucketUrl(out)) {
    std::error_code ec;
    try {
      runPublisher(findPublisher(), staging, out);
    } catch (...) {
      fs::remove_all(staging.parent_path(), ec);
      throw;
    }
    fs::remove_all(staging.parent_path(), ec);
    return;
  }
  const fs::path old = out + ".old";
  fs::remove_all(old);
  if (fs::exists(out)) fs::rename(out, old);
  fs::rename(staging, out);
  fs::remove_all(old);
}

fs::path segmentFile(const std::string& objectId, unsigned rung, unsigned segment) {
  char name[32];
  std::snprintf(name, sizeof name, "seg-%05u.v3c", segment);
  return fs::path(objectId) / std::to_string(rung) / name;
}

}  // namespace holoquic
