// An output stream whose bytes go to a gzip file (zlib's gzopen/gzwrite), so that a trace of
// millions of slices is written compressed as it is generated, never held whole in memory.
#pragma once

#include <array>
#include <ostream>
#include <streambuf>
#include <string>

namespace stepsim::cli {

class GzipBuffer : public std::streambuf {
 public:
  /// Opens `path` for writing; is_open() says whether that worked.
  explicit GzipBuffer(const std::string& path);
  ~GzipBuffer() override;
  GzipBuffer(const GzipBuffer&) = delete;
  GzipBuffer& operator=(const GzipBuffer&) = delete;
  bool is_open() const { return file_ != nullptr; }
  /// Flushes and closes the file; false if any write or the close failed.
  bool close();

 protected:
  int_type overflow(int_type c) override;
  int sync() override;

 private:
  bool flush_buffer();
  void* file_ = nullptr;  // gzFile
  bool failed_ = false;
  std::array<char, 1 << 16> buffer_{};
};

/// `std::ostream` over a GzipBuffer.
class GzipOstream : public std::ostream {
 public:
  explicit GzipOstream(const std::string& path) : std::ostream(nullptr), buffer_(path) {
    rdbuf(&buffer_);
    if (!buffer_.is_open()) setstate(std::ios::failbit);
  }
  /// Flushes and closes; sets failbit when that failed.
  void close() {
    if (!buffer_.close()) setstate(std::ios::failbit);
  }

 private:
  GzipBuffer buffer_;
};

/// Whether `path` names a gzip file by its extension (".gz").
bool is_gzip_path(const std::string& path);

}  // namespace stepsim::cli
