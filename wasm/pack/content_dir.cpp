// Staging, writing and publishing the content directory (see content_dir.h).
#include "content_dir.h"

#include <fstream>
#include <stdexcept>

namespace fs = std::filesystem;

namespace holoquic {

fs::path startStaging(const std::string& out) {
  const fs::path staging = out + ".partial";
  std::error_code ec;
  fs::remove_all(staging, ec);
  if (!ec) fs::create_directories(staging, ec);
  if (ec) throw std::runtime_error(staging.string() + ": cannot create (" + ec.message() + ")");
  return staging;
}

void writeFile(const fs::path& path, const std::vector<uint8_t>& bytes) {
  std::error_code ec;
  fs::create_directories(path.parent_path(), ec);
  std::ofstream file(path, std::ios::binary);
  file.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
  file.close();
  if (ec || !file) throw std::runtime_error(path.string() + ": cannot write");
}

void publish(const fs::path& staging, const std::string& out) {
  const fs::path old = out + ".old";
  fs::remove_all(old);
  if (fs::exists(out)) fs::rename(out, old);
  fs::rename(staging, out);
  fs::remove_all(old);
}

}  // namespace holoquic
