#include "nn/token_memmap.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <vector>

#include "tensor/error.h"

namespace ropegrad::nn {

namespace {

// The value of `'key': value` in a .npy header dict, up to the next ',' or '}'
// (the shape tuple is read whole).
std::string header_value(const std::string& header, const std::string& key, const std::string& path) {
  const size_t at = header.find("'" + key + "'");
  RG_CHECK(at != std::string::npos, "TokenMemmap", "{}: the header has no '{}'", path, key);
  size_t pos = header.find(':', at);
  RG_CHECK(pos != std::string::npos, "TokenMemmap", "{}: no ':' after '{}'", path, key);
  ++pos;
  while (pos < header.size() && header[pos] == ' ') ++pos;
  size_t end = pos;
  if (pos < header.size() && header[pos] == '(') {
    end = header.find(')', pos);
    RG_CHECK(end != std::string::npos, "TokenMemmap", "{}: unclosed shape tuple", path);
    return header.substr(pos, end - pos + 1);
  }
  while (end < header.size() && header[end] != ',' && header[end] != '}') ++end;
  std::string v = header.substr(pos, end - pos);
  while (!v.empty() && v.back() == ' ') v.pop_back();
  return v;
}

}  // namespace

TokenMemmap::TokenMemmap(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  RG_CHECK(fd >= 0, "TokenMemmap", "cannot open {}", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    fail("TokenMemmap", "cannot stat {}", path);
  }
  const size_t file_bytes = static_cast<size_t>(st.st_size);
  if (file_bytes < 12) {
    ::close(fd);
    fail("TokenMemmap", "{}: {} bytes is too short for a .npy header", path, file_bytes);
  }
  map_ = ::mmap(nullptr, file_bytes, PROT_READ, MAP_PRIVATE, fd, 0);
  ::close(fd);
  RG_CHECK(map_ != MAP_FAILED, "TokenMemmap", "cannot map {}", path);
  map_bytes_ = file_bytes;
  const auto* bytes = static_cast<const unsigned char*>(map_);
  try {
    RG_CHECK(std::memcmp(bytes, "\x93NUMPY", 6) == 0, "TokenMemmap", "{}: not a .npy file (bad magic)", path);
    const int major = bytes[6];
    RG_CHECK(major >= 1 && major <= 3, "TokenMemmap", "{}: unsupported .npy version {}", path, major);
    size_t header_len = 0, header_start = 0;
    if (major == 1) {
      header_len = bytes[8] | (bytes[9] << 8);
      header_start = 10;
    } else {
      header_len = static_cast<size_t>(bytes[8]) | (static_cast<size_t>(bytes[9]) << 8) |
                   (static_cast<size_t>(bytes[10]) << 16) | (static_cast<size_t>(bytes[11]) << 24);
      header_start = 12;
    }
    RG_CHECK(header_len <= file_bytes - header_start, "TokenMemmap", "{}: header length {} runs past the end ({} bytes)",
             path, header_len, file_bytes);
    const std::string header(reinterpret_cast<const char*>(bytes + header_start), header_len);
    const std::string descr = header_value(header, "descr", path);
    if (descr == "'<u2'" || descr == "'|u2'") item_bytes_ = 2;
    else if (descr == "'<i4'") item_bytes_ = 4;
    else if (descr == "'<i8'") item_bytes_ = 8;
    else fail("TokenMemmap", "{}: dtype {} is not a token id type ('<u2', '<i4' or '<i8')", path, descr);
    RG_CHECK(header_value(header, "fortran_order", path) == "False", "TokenMemmap", "{}: Fortran order is not supported",
             path);
    const std::string shape = header_value(header, "shape", path);  // "(N,)"
    int64_t n = 0;
    size_t digits = 0;
    for (size_t i = 1; i < shape.size() && std::isdigit(static_cast<unsigned char>(shape[i])); ++i, ++digits) {
      RG_CHECK(n < (int64_t{1} << 50), "TokenMemmap", "{}: shape {} is too large", path, shape);
      n = n * 10 + (shape[i] - '0');
    }
    RG_CHECK(digits > 0 && (shape.substr(1 + digits) == ",)" || shape.substr(1 + digits) == ")"), "TokenMemmap",
             "{}: shape {} is not 1-D", path, shape);
    const size_t data_start = header_start + header_len;
    const size_t data_bytes = file_bytes - data_start;
    RG_CHECK(data_bytes == static_cast<size_t>(n) * item_bytes_, "TokenMemmap",
             "{}: the header claims {} ids ({} bytes) but the file holds {} data bytes", path, n, n * item_bytes_,
             data_bytes);
    data_ = bytes + data_start;
    count_ = n;
  } catch (...) {
    ::munmap(map_, map_bytes_);
    map_ = nullptr;
    throw;
  }
}

TokenMemmap::~TokenMemmap() {
  if (map_ != nullptr) ::munmap(map_, map_bytes_);
}

int64_t TokenMemmap::at(int64_t i) const {
  RG_CHECK(i >= 0 && i < count_, "TokenMemmap", "{}: index {} outside [0, {})", path_, i, count_);
  const unsigned char* p = data_ + static_cast<size_t>(i) * item_bytes_;
  if (item_bytes_ == 2) return static_cast<int64_t>(p[0] | (p[1] << 8));
  if (item_bytes_ == 4) {
    int32_t v;
    std::memcpy(&v, p, 4);
    return v;
  }
  int64_t v;
  std::memcpy(&v, p, 8);
  return v;
}

std::pair<Tensor, Tensor> TokenMemmap::get_batch(int64_t batch_size, int64_t context, Generator& gen) const {
  RG_CHECK(batch_size > 0 && context > 0, "get_batch", "batch size {} and context {} must be positive", batch_size,
           context);
  RG_CHECK(count_ > context, "get_batch", "{} holds {} ids, fewer than context + 1 = {}", path_, count_, context + 1);
  Tensor x = Tensor::empty({batch_size, context}, DType::Int64);  // (B, T)
  Tensor y = Tensor::empty({batch_size, context}, DType::Int64);  // (B, T)
  int64_t* xp = x.data_ptr<int64_t>();
  int64_t* yp = y.data_ptr<int64_t>();
  for (int64_t b = 0; b < batch_size; ++b) {
    const int64_t start = gen.integer(0, count_ - context);
    for (int64_t t = 0; t < context; ++t) {
      xp[b * context + t] = at(start + t);
      yp[b * context + t] = at(start + t + 1);
    }
  }
  return {x, y};
}

namespace {

// The .npy header of a 1-D array of `count` ids, padded with spaces to
// kTokenHeaderBytes in all (magic and length included), a multiple of 64 that
// any int64 count fits in: rewriting it at close() never moves the data.
constexpr size_t kTokenHeaderBytes = 128;

std::string token_header(bool small, int64_t count) {
  std::string dict = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({},), }}", small ? "<u2" : "<i4",
                                 count);
  dict.append(kTokenHeaderBytes - 10 - dict.size() - 1, ' ');
  dict += '\n';
  const uint16_t len = static_cast<uint16_t>(dict.size());
  std::string out("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(len & 0xFF);
  out += static_cast<char>(len >> 8);
  return out + dict;
}

void write_all(int fd, const unsigned char* data, size_t n, const std::string& path) {
  while (n > 0) {
    const ssize_t w = ::write(fd, data, n);
    RG_CHECK(w > 0 || errno == EINTR, "TokenIdWriter", "writing '{}' failed: {}", path, std::strerror(errno));
    if (w > 0) data += w, n -= static_cast<size_t>(w);
  }
}

}  // namespace

TokenIdWriter::TokenIdWriter(const std::string& path, int64_t vocab_size)
    : path_(path), tmp_path_(path + ".tmp"), vocab_size_(vocab_size), small_(vocab_size <= 65536) {
  RG_CHECK(vocab_size > 0 && vocab_size <= (int64_t{1} << 31), "TokenIdWriter",
           "vocab_size must be in [1, 2^31], got {}", vocab_size);
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  RG_CHECK(fd_ >= 0, "TokenIdWriter", "cannot write '{}': {}", tmp_path_, std::strerror(errno));
  const std::string header = token_header(small_, 0);  // the count is filled in by close()
  write_all(fd_, reinterpret_cast<const unsigned char*>(header.data()), header.size(), tmp_path_);
}

TokenIdWriter::~TokenIdWriter() {
  if (fd_ >= 0) {  // not closed: an error or an interruption; leave nothing behind
    ::close(fd_);
    ::unlink(tmp_path_.c_str());
  }
}

void TokenIdWriter::write(const std::vector<int32_t>& ids) {
  RG_CHECK(fd_ >= 0, "TokenIdWriter", "'{}' is already closed", path_);
  const int item = small_ ? 2 : 4;
  buffer_.resize(ids.size() * static_cast<size_t>(item));
  unsigned char* out = buffer_.data();
  for (size_t i = 0; i < ids.size(); ++i) {
    const int32_t v = ids[i];
    RG_CHECK(v >= 0 && v < vocab_size_, "TokenIdWriter", "{}: token id {} at position {} is outside [0, {})", path_, v,
             count_ + static_cast<int64_t>(i), vocab_size_);
    for (int b = 0; b < item; ++b) *out++ = static_cast<unsigned char>((static_cast<uint32_t>(v) >> (8 * b)) & 0xFF);
  }
  write_all(fd_, buffer_.data(), buffer_.size(), tmp_path_);
  count_ += static_cast<int64_t>(ids.size());
}

void TokenIdWriter::close() {
  RG_CHECK(fd_ >= 0, "TokenIdWriter", "'{}' is already closed", path_);
  const std::string header = token_header(small_, count_);
  RG_CHECK(::pwrite(fd_, header.data(), header.size(), 0) == static_cast<ssize_t>(header.size()), "TokenIdWriter",
           "writing the header of '{}' failed: {}", tmp_path_, std::strerror(errno));
  // The bytes must be on disk before the rename makes them visible as PATH.
  RG_CHECK(::fsync(fd_) == 0, "TokenIdWriter", "fsync of '{}' failed: {}", tmp_path_, std::strerror(errno));
  ::close(fd_);
  fd_ = -1;
  if (std::rename(tmp_path_.c_str(), path_.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(tmp_path_.c_str());
    throw Error(fmt::format("TokenIdWriter: cannot rename '{}' to '{}': {}", tmp_path_, path_, why));
  }
}

void save_token_ids(const std::string& path, const std::vector<int32_t>& ids) {
  int32_t largest = 0;
  for (int32_t v : ids) {
    RG_CHECK(v >= 0, "save_token_ids", "{}: negative token id {}", path, v);
    largest = std::max(largest, v);
  }
  TokenIdWriter writer(path, int64_t{largest} + 1);
  writer.write(ids);
  writer.close();
}

}  // namespace ropegrad::nn
