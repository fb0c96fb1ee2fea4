#include "nn/token_memmap.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
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

void save_token_ids(const std::string& path, const std::vector<int32_t>& ids) {
  const bool small = std::all_of(ids.begin(), ids.end(), [](int32_t v) { return v >= 0 && v < 65536; });
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': ({},), }}",
                                   small ? "<u2" : "<i4", ids.size());
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  std::ofstream out(path, std::ios::binary);
  RG_CHECK(out.good(), "save_token_ids", "cannot write {}", path);
  out.write("\x93NUMPY\x01\x00", 8);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const unsigned char len_bytes[2] = {static_cast<unsigned char>(len & 0xFF), static_cast<unsigned char>(len >> 8)};
  out.write(reinterpret_cast<const char*>(len_bytes), 2);
  out << header;
  for (int32_t v : ids) {
    if (small) {
      const unsigned char b[2] = {static_cast<unsigned char>(v & 0xFF), static_cast<unsigned char>((v >> 8) & 0xFF)};
      out.write(reinterpret_cast<const char*>(b), 2);
    } else {
      out.write(reinterpret_cast<const char*>(&v), 4);  // little-endian x86-64
    }
  }
  RG_CHECK(out.good(), "save_token_ids", "writing {} failed", path);
}

}  // namespace ropegrad::nn
