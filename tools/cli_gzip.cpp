#include "tools/cli_gzip.hpp"

#include <zlib.h>

namespace stepsim::cli {

GzipBuffer::GzipBuffer(const std::string& path) : file_(gzopen(path.c_str(), "wb6")) {
  setp(buffer_.data(), buffer_.data() + buffer_.size());
}

GzipBuffer::~GzipBuffer() { close(); }

bool GzipBuffer::flush_buffer() {
  const auto n = static_cast<unsigned>(pptr() - pbase());
  if (n > 0 && (file_ == nullptr || gzwrite(static_cast<gzFile>(file_), pbase(), n) != static_cast<int>(n))) failed_ = true;
  setp(buffer_.data(), buffer_.data() + buffer_.size());
  return !failed_;
}

GzipBuffer::int_type GzipBuffer::overflow(int_type c) {
  if (!flush_buffer()) return traits_type::eof();
  if (!traits_type::eq_int_type(c, traits_type::eof())) {
    *pptr() = traits_type::to_char_type(c);
    pbump(1);
  }
  return traits_type::not_eof(c);
}

int GzipBuffer::sync() { return flush_buffer() ? 0 : -1; }

bool GzipBuffer::close() {
  if (file_ == nullptr) return !failed_;
  flush_buffer();
  if (gzclose(static_cast<gzFile>(file_)) != Z_OK) failed_ = true;
  file_ = nullptr;
  return !failed_;
}

bool is_gzip_path(const std::string& path) { return path.size() > 3 && path.compare(path.size() - 3, 3, ".gz") == 0; }

}  // namespace stepsim::cli
