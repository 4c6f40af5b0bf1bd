#include "sim/config/text_file.hpp"

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <system_error>

#include "sim/config/config_error.hpp"

namespace stepsim::config {

std::string read_text_file(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status status = fs::status(path, ec);
  auto fail = [&](const std::string& what) { throw ConfigError({path, 0, 0}, "", what); };
  if (status.type() == fs::file_type::not_found) fail("no such file");
  if (ec) fail("cannot read the file: " + ec.message());
  if (status.type() == fs::file_type::directory) fail("is a directory; expected a file");
  if (status.type() != fs::file_type::regular) fail("is not a regular file (a device, pipe or socket); expected a file");
  const std::uintmax_t size = fs::file_size(path, ec);
  if (!ec && size > kMaxInputFileBytes)
    fail("is " + std::to_string((size + (std::uintmax_t{1} << 20) - 1) >> 20) + " MiB; expected a file of at most " + std::to_string(kMaxInputFileBytes >> 20) +
         " MiB (no input stepsim reads is that large)");
  errno = 0;
  std::ifstream in(path, std::ios::binary);
  if (!in) fail(std::string("cannot read the file: ") + (errno != 0 ? std::strerror(errno) : "open failed"));
  std::ostringstream text;
  text << in.rdbuf();
  if (in.bad()) fail("cannot read the file: read error");
  return text.str();
}

}  // namespace stepsim::config
