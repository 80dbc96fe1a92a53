// The content directory's life: by default everything is written into `<out>.partial` and renamed
// into place when complete, so an origin never sees half a scene; on failure nothing is left.
// `--out s3://BUCKET/PREFIX` stages in a temporary directory instead and hands the finished scene
// to `holoquic-publish` (the origin's, found beside this program or on PATH), which uploads the
// segments first and the manifest last. A growing scene (growth.h) is written in place, in a local
// folder. Every local file is written under a temporary name and renamed, so no reader ever sees
// a half-written one.
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

namespace holoquic {

/// `<out>.partial`, emptied (for a bucket URL a fresh temporary directory, after checking that
/// holoquic-publish is there); throws std::runtime_error when it cannot be made.
std::filesystem::path startStaging(const std::string& out);

/// Writes `bytes` to `path` (its folder made) through a temporary file renamed over it; throws
/// std::runtime_error naming the file.
void writeFile(const std::filesystem::path& path, const std::vector<uint8_t>& bytes);
void writeFile(const std::filesystem::path& path, const std::string& text);

/// Replaces `out` with the finished staging directory: `out` is the old scene or the new one.
/// For a bucket URL runs holoquic-publish on it and removes it; throws when that fails.
void publish(const std::filesystem::path& staging, const std::string& out);

/// Where a segment lives in a scene directory: `<object>/<rung>/seg-NNNNN.v3c` (docs/mpd.md).
std::filesystem::path segmentFile(const std::string& objectId, unsigned rung, unsigned segment);

}  // namespace holoquic
