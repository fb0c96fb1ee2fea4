#include "io/token_memmap.h"

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

#include "io/npy.h"
#include "io/tmp_file.h"
#include "tensor/error.h"
#include "tensor/printable.h"

namespace ropegrad::nn {

TokenMemmap::TokenMemmap(const std::string& path) : path_(path) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  RG_CHECK(fd >= 0, "TokenMemmap", "cannot open {}", path);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    fail("TokenMemmap", "cannot stat {}", path);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    fail("TokenMemmap", "{} is {}, not a .npy file of token ids", path,
         S_ISDIR(st.st_mode) ? "a directory" : "not a regular file");
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
    const NpyHeader h = parse_npy_header(header, path, "TokenMemmap");
    if (h.descr == "<u2" || h.descr == "|u2") item_bytes_ = 2;
    else if (h.descr == "<i4") item_bytes_ = 4;
    else if (h.descr == "<i8") item_bytes_ = 8;
    else fail("TokenMemmap", "{}: dtype {} is not a token id type ('<u2', '<i4' or '<i8')", path, quote_bytes(h.descr));
    RG_CHECK(!h.fortran_order, "TokenMemmap", "{}: Fortran order is not supported", path);
    RG_CHECK(h.shape.size() == 1, "TokenMemmap", "{}: shape ({}) is not 1-D", path, fmt::join(h.shape, ", "));
    const int64_t n = h.shape[0];
    // In bytes, against what the file holds, before any offset is computed.
    const size_t data_start = header_start + header_len;
    const size_t data_bytes = file_bytes - data_start;
    int64_t claimed = 0;
    RG_CHECK(!__builtin_mul_overflow(n, static_cast<int64_t>(item_bytes_), &claimed), "TokenMemmap",
             "{}: the header claims {} ids, more bytes than int64 can count", path, n);
    RG_CHECK(static_cast<uint64_t>(claimed) == data_bytes, "TokenMemmap",
             "{}: the header claims {} ids ({} bytes) but the file holds {} data bytes", path, n, claimed, data_bytes);
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
    for (int64_t t = 0; t <= context; ++t) {
      const int64_t id = at(start + t);
      // An int32 or int64 file can hold what no token id is; uint16 cannot.
      RG_CHECK(id >= 0, "get_batch", "{}: token id {} at position {} is negative", path_, id, start + t);
      if (t < context) xp[b * context + t] = id;
      if (t > 0) yp[b * context + t - 1] = id;
    }
  }
  return {x, y};
}

void TokenMemmap::check_ids(int64_t vocab_size, const std::string& op) const {
  for (int64_t i = 0; i < count_; ++i) {
    const int64_t id = at(i);
    RG_CHECK(id >= 0 && id < vocab_size, op, "{}: token id {} at position {} is outside the tokenizer's [0, {})",
             path_, id, i, vocab_size);
  }
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


}  // namespace

TokenIdWriter::TokenIdWriter(const std::string& path, int64_t vocab_size)
    : path_(path), tmp_path_(unique_tmp_path(path)), vocab_size_(vocab_size), small_(vocab_size <= 65536) {
  RG_CHECK(vocab_size > 0 && vocab_size <= (int64_t{1} << 31), "TokenIdWriter",
           "vocab_size must be in [1, 2^31], got {}", vocab_size);
  fd_ = ::open(tmp_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  RG_CHECK(fd_ >= 0, "TokenIdWriter", "cannot write '{}': {}", tmp_path_, std::strerror(errno));
  const std::string header = token_header(small_, 0);  // the count is filled in by close()
  write_all(fd_, header.data(), header.size(), tmp_path_, "TokenIdWriter");
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
  write_all(fd_, buffer_.data(), buffer_.size(), tmp_path_, "TokenIdWriter");
  count_ += static_cast<int64_t>(ids.size());
}

void TokenIdWriter::close() {
  RG_CHECK(fd_ >= 0, "TokenIdWriter", "'{}' is already closed", path_);
  const std::string header = token_header(small_, count_);
  RG_CHECK(::pwrite(fd_, header.data(), header.size(), 0) == static_cast<ssize_t>(header.size()), "TokenIdWriter",
           "writing the header of '{}' failed: {}", tmp_path_, std::strerror(errno));
  const int fd = fd_;
  fd_ = -1;
  replace_with_tmp(fd, tmp_path_, path_, "TokenIdWriter");
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
