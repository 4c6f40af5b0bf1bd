#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "sim/config/config_error.hpp"
#include "sim/config/text_file.hpp"

using namespace stepsim::config;

namespace {

std::string error_of(const std::string& path) {
  try {
    read_text_file(path);
  } catch (const ConfigError& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("a file is read whole; what is not a readable file says what it is") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / "stepsim_text_file_test";
  fs::create_directories(dir);
  const std::string file = (dir / "a.txt").string();
  std::ofstream(file, std::ios::binary) << "line 1\nline 2";
  CHECK(read_text_file(file) == "line 1\nline 2");
  CHECK(error_of((dir / "missing.yaml").string()) == (dir / "missing.yaml").string() + ": no such file");
  CHECK(error_of(dir.string()) == dir.string() + ": is a directory; expected a file");
  CHECK(error_of("/dev/null") == "/dev/null: is not a regular file (a device, pipe or socket); expected a file");
  CHECK(error_of(std::string(300, 'a')) == std::string(300, 'a') + ": cannot read the file: File name too long");
  // A sparse file larger than any input: refused from its size, never read.
  const std::string big = (dir / "big.bin").string();
  std::ofstream(big, std::ios::binary).close();
  fs::resize_file(big, kMaxInputFileBytes + 1);
  CHECK(error_of(big) == big + ": is 65 MiB; expected a file of at most 64 MiB (no input stepsim reads is that large)");
  fs::remove_all(dir);
}
