// Asking the file system about a name a user wrote, without exceptions: a 300-byte model name is
// "File name too long" to stat(), which std::filesystem::exists(path) throws as an internal
// error; to a reader it is just a name that names no file.
#pragma once

#include <filesystem>
#include <system_error>

namespace stepsim::config {

/// Whether `path` names something that exists; false where the system cannot say (name too
/// long, permission denied on a directory on the way).
inline bool path_exists(const std::filesystem::path& path) {
  std::error_code ec;
  return std::filesystem::exists(path, ec);
}

}  // namespace stepsim::config
