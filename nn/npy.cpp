#include "nn/npy.h"

#include <cstdint>

#include <cstring>
#include <fstream>
#include <iterator>
#include <cctype>

#include "tensor/kernels.h"

namespace ropegrad::nn {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  RG_CHECK(in.good(), "load_npy", "cannot open '{}'", path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

// The value of 'key' in the header dict, as raw text: a quoted string
// ('<f4'), True/False, or a tuple ((2, 3)).
std::string header_field(const std::string& header, const std::string& key, const std::string& path) {
  const std::string quoted = "'" + key + "'";
  const size_t at = header.find(quoted);
  RG_CHECK(at != std::string::npos, "load_npy", "'{}': header has no '{}' field: {}", path, key, header);
  size_t pos = header.find_first_not_of(" \t", at + quoted.size());
  RG_CHECK(pos != std::string::npos && header[pos] == ':', "load_npy", "'{}': malformed header near '{}': {}", path,
           key, header);
  pos = header.find_first_not_of(" \t", pos + 1);
  RG_CHECK(pos != std::string::npos, "load_npy", "'{}': header ends after '{}'", path, key);
  size_t end = std::string::npos;
  if (header[pos] == '\'') end = header.find('\'', pos + 1);
  else if (header[pos] == '(') end = header.find(')', pos + 1);
  else if (header.compare(pos, 4, "True") == 0) end = pos + 3;
  else if (header.compare(pos, 5, "False") == 0) end = pos + 4;
  RG_CHECK(end != std::string::npos, "load_npy", "'{}': cannot read the value of '{}': {}", path, key, header);
  return header.substr(pos, end - pos + 1);
}

}  // namespace

Tensor load_npy(const std::string& path) {
  const std::string bytes = read_file(path);
  RG_CHECK(bytes.size() >= 10 && bytes.compare(0, 6, kMagic, 6) == 0, "load_npy",
           "'{}' is not a .npy file (bad magic)", path);
  const int major = static_cast<unsigned char>(bytes[6]);
  RG_CHECK(major >= 1 && major <= 3, "load_npy", "'{}': unsupported .npy version {}", path, major);
  size_t header_len = 0, header_start = 0;
  if (major == 1) {
    header_len = static_cast<unsigned char>(bytes[8]) | (static_cast<unsigned char>(bytes[9]) << 8);
    header_start = 10;
  } else {
    RG_CHECK(bytes.size() >= 12, "load_npy", "'{}' is truncated in its header", path);
    for (int i = 3; i >= 0; --i) header_len = (header_len << 8) | static_cast<unsigned char>(bytes[8 + i]);
    header_start = 12;
  }
  RG_CHECK(header_start + header_len <= bytes.size(), "load_npy", "'{}' is truncated in its header", path);
  const std::string header = bytes.substr(header_start, header_len);

  std::string descr = header_field(header, "descr", path);
  descr = descr.substr(1, descr.size() - 2);
  RG_CHECK(header_field(header, "fortran_order", path) == "False", "load_npy",
           "'{}': Fortran-ordered arrays are not supported (save with np.ascontiguousarray)", path);
  Shape shape;
  const std::string shape_text = header_field(header, "shape", path);
  // The tuple's integers: "(2, 3)", "(5,)" or "()".
  for (size_t i = 0; i < shape_text.size();) {
    if (!(std::isdigit(static_cast<unsigned char>(shape_text[i])) || shape_text[i] == '-')) {
      ++i;
      continue;
    }
    size_t used = 0;
    int64_t n = 0;
    try {
      n = std::stoll(shape_text.substr(i), &used);
    } catch (const std::exception&) {
      fail("load_npy", "'{}': bad dimension in shape {}", path, shape_text);
    }
    i += std::max<size_t>(used, 1);
    RG_CHECK(n >= 0, "load_npy", "'{}': negative dimension in shape {}", path, shape_text);
    shape.push_back(n);
  }

  DType dtype;
  size_t stored_size;
  if (descr == "<f4") dtype = DType::Float32, stored_size = 4;
  else if (descr == "<f8") dtype = DType::Float64, stored_size = 8;
  else if (descr == "<i8") dtype = DType::Int64, stored_size = 8;
  else if (descr == "<i4") dtype = DType::Int64, stored_size = 4;
  else if (descr == "<u2") dtype = DType::Int64, stored_size = 2;  // token ids (tokenize encode)
  else if (descr == "|b1") dtype = DType::Bool, stored_size = 1;
  else fail("load_npy", "'{}': unsupported dtype '{}' (expected <f4, <f8, <i8, <i4, <u2 or |b1)", path, descr);

  const size_t data_start = header_start + header_len;
  // Multiply with overflow checks: a corrupt shape must not wrap to a small size.
  // Zero dims too: (0, 2^62, 4) holds nothing, but its strides would overflow.
  size_t count = 1, span = 1;
  for (int64_t n : shape) {
    RG_CHECK(!__builtin_mul_overflow(count, static_cast<size_t>(n), &count) &&
                 !__builtin_mul_overflow(span, static_cast<size_t>(std::max<int64_t>(n, 1)), &span) &&
                 span <= static_cast<size_t>(INT64_MAX),
             "load_npy", "'{}': shape {} has more elements than memory can hold", path, shape_text);
  }
  size_t needed = 0;
  RG_CHECK(!__builtin_mul_overflow(count, stored_size, &needed), "load_npy",
           "'{}': shape {} needs more bytes than memory can hold", path, shape_text);
  RG_CHECK(bytes.size() - data_start == needed, "load_npy",
           "'{}': data has {} bytes, shape {} of {} needs {} (truncated or corrupt)", path,
           bytes.size() - data_start, shape_str(shape), descr, needed);
  Tensor out = Tensor::empty(shape, dtype);
  const char* data = bytes.data() + data_start;
  if (descr == "<i4") {
    int64_t* o = out.data_ptr<int64_t>();
    for (size_t i = 0; i < count; ++i) {
      int32_t v;
      std::memcpy(&v, data + 4 * i, 4);
      o[i] = v;
    }
  } else if (descr == "<u2") {
    int64_t* o = out.data_ptr<int64_t>();
    for (size_t i = 0; i < count; ++i) o[i] = static_cast<uint8_t>(data[2 * i]) | (static_cast<uint8_t>(data[2 * i + 1]) << 8);
  } else {
    std::memcpy(out.raw_data(), data, count * stored_size);  // x86-64 is little-endian, like the file
  }
  return out;
}

void save_npy(const std::string& path, const Tensor& t) {
  const char* descr = nullptr;
  switch (t.dtype()) {
    case DType::Float32: descr = "<f4"; break;
    case DType::Float64: descr = "<f8"; break;
    case DType::Int64: descr = "<i8"; break;
    case DType::Bool: descr = "|b1"; break;
  }
  std::string shape = t.dim() == 1 ? fmt::format("({},)", t.shape()[0]) : fmt::format("({})", fmt::join(t.shape(), ", "));
  std::string header = fmt::format("{{'descr': '{}', 'fortran_order': False, 'shape': {}, }}", descr, shape);
  // Pad so that magic + version + length + header ends on a 64-byte boundary, newline last.
  const size_t total = 10 + header.size() + 1;
  header.append((64 - total % 64) % 64, ' ');
  header += '\n';
  const Tensor data = kernels::contiguous(t);
  std::ofstream out(path, std::ios::binary);
  RG_CHECK(out.good(), "save_npy", "cannot open '{}' for writing", path);
  out.write(kMagic, 6);
  const char version[2] = {1, 0};
  out.write(version, 2);
  const uint16_t len = static_cast<uint16_t>(header.size());
  const char len_bytes[2] = {static_cast<char>(len & 0xff), static_cast<char>(len >> 8)};
  out.write(len_bytes, 2);
  out.write(header.data(), static_cast<std::streamsize>(header.size()));
  out.write(reinterpret_cast<const char*>(data.raw_data()),
            static_cast<std::streamsize>(data.numel() * static_cast<int64_t>(element_size(t.dtype()))));
  RG_CHECK(out.good(), "save_npy", "writing '{}' failed", path);
}

}  // namespace ropegrad::nn
