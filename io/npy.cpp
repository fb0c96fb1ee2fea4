#include "io/npy.h"
#include "tensor/parse_number.h"
#include "io/read_file.h"

#include <cstdint>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <cctype>

#include "tensor/kernels.h"
#include "tensor/printable.h"

namespace ropegrad::nn {

namespace {

constexpr char kMagic[] = "\x93NUMPY";

// A reader for the header dict: a Python literal of strings, True/False and
// tuples of integers, nothing else (numpy reads it with ast.literal_eval).
class HeaderReader {
 public:
  HeaderReader(std::string_view text, const std::string& path, std::string_view op)
      : text_(text), path_(path), op_(op) {}

  NpyHeader read() {
    NpyHeader h;
    bool has_descr = false, has_order = false, has_shape = false;
    skip_space();
    expect('{');
    while (true) {
      skip_space();
      if (peek() == '}') break;
      const size_t key_at = pos_;
      const std::string key = read_string();
      skip_space();
      expect(':');
      skip_space();
      if (key == "descr") {
        if (has_descr) error(key_at, "'descr' appears twice");
        if (peek() != '\'' && peek() != '"') error(pos_, "'descr' must be a quoted string");
        h.descr = read_string();
        has_descr = true;
      } else if (key == "fortran_order") {
        if (has_order) error(key_at, "'fortran_order' appears twice");
        const size_t at = pos_;
        const std::string word = read_word();
        if (word != "True" && word != "False")
          error(at, fmt::format("'fortran_order' must be True or False, not {}", quote_bytes(word)));
        h.fortran_order = word == "True";
        has_order = true;
      } else if (key == "shape") {
        if (has_shape) error(key_at, "'shape' appears twice");
        h.shape = read_shape();
        has_shape = true;
      } else {
        error(key_at, fmt::format("unexpected key {} (a .npy header has 'descr', 'fortran_order' and 'shape')",
                                  quote_bytes(key)));
      }
      skip_space();
      if (peek() == ',') {
        ++pos_;
        continue;
      }
      if (peek() != '}') error(pos_, "expected ',' or '}' after a value");
    }
    ++pos_;  // the '}'
    skip_space();
    if (pos_ != text_.size()) error(pos_, "unexpected text after the closing '}'");
    if (!has_descr || !has_order || !has_shape)
      error(pos_, fmt::format("the header has no '{}' key", !has_descr ? "descr" : !has_order ? "fortran_order" : "shape"));
    return h;
  }

 private:
  [[noreturn]] void error(size_t at, const std::string& what) const {
    fail(op_, "'{}': malformed .npy header at column {}: {}; the header is {}", path_, at + 1, what,
         quote_bytes(text_, 200));
  }
  char peek() const { return pos_ < text_.size() ? text_[pos_] : '\0'; }
  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r'))
      ++pos_;
  }
  void expect(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c)
      error(pos_, pos_ >= text_.size() ? fmt::format("the header ends where '{}' was expected", c)
                                       : fmt::format("expected '{}', found {}", c, quote_bytes(text_.substr(pos_, 1))));
    ++pos_;
  }
  // A quoted string without escapes (numpy's keys and dtypes have none).
  std::string read_string() {
    const char q = peek();
    if (q != '\'' && q != '"') error(pos_, "expected a quoted key");
    const size_t close = text_.find(q, pos_ + 1);
    if (close == std::string_view::npos) error(pos_, "unterminated string");
    std::string s(text_.substr(pos_ + 1, close - pos_ - 1));
    if (s.find('\\') != std::string::npos || s.find('\n') != std::string::npos)
      error(pos_, fmt::format("unsupported string {}", quote_bytes(s)));
    pos_ = close + 1;
    return s;
  }
  // An identifier (True, False, or something numpy would not accept).
  std::string read_word() {
    const size_t start = pos_;
    while (pos_ < text_.size() && (std::isalnum(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_')) ++pos_;
    if (pos_ == start) error(pos_, "expected True or False");
    return std::string(text_.substr(start, pos_ - start));
  }
  // An integer literal as Python writes one: an optional '-', then 0 or
  // digits without a leading zero; within int64.
  int64_t read_int() {
    const size_t start = pos_;
    const bool negative = peek() == '-';
    if (negative) ++pos_;
    const size_t digits = pos_;
    while (pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_]))) ++pos_;
    if (pos_ == digits) error(start, "expected an integer dimension");
    const std::optional<int64_t> parsed = parse_int64(text_.substr(digits, pos_ - digits));  // the one number parser
    if (!parsed) error(start, "a dimension does not fit in int64");
    const int64_t v = *parsed;
    if (pos_ - digits > 1 && text_[digits] == '0') error(start, "a dimension has a leading zero");
    if (pos_ < text_.size() && (std::isalpha(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '_' ||
                                text_[pos_] == '.'))
      error(start, "a dimension is not an integer");
    if (negative) error(start, fmt::format("negative dimension -{}", v));
    return v;
  }
  // (), (N,), (N, M), (N, M,): a tuple; (N) is an integer, not a shape.
  Shape read_shape() {
    Shape shape;
    expect('(');
    skip_space();
    if (peek() == ')') {
      ++pos_;
      return shape;
    }
    bool trailing_comma = false;
    while (true) {
      shape.push_back(read_int());
      skip_space();
      trailing_comma = false;
      if (peek() == ',') {
        ++pos_;
        trailing_comma = true;
        skip_space();
        if (peek() == ')') break;
        continue;
      }
      if (peek() == ')') break;
      error(pos_, "expected ',' or ')' in the shape");
    }
    if (shape.size() == 1 && !trailing_comma) error(pos_, "the shape (N) is an integer, not a tuple: write (N,)");
    ++pos_;  // the ')'
    return shape;
  }

  std::string_view text_;
  const std::string& path_;
  std::string_view op_;
  size_t pos_ = 0;
};

}  // namespace

NpyHeader parse_npy_header(std::string_view dict, const std::string& path, std::string_view op) {
  return HeaderReader(dict, path, op).read();
}

Tensor load_npy(const std::string& path) {
  const std::string bytes = io::read_file(path, "load_npy", "a .npy file");
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

  const NpyHeader parsed = parse_npy_header(header, path, "load_npy");
  const std::string& descr = parsed.descr;
  RG_CHECK(!parsed.fortran_order, "load_npy",
           "'{}': Fortran-ordered arrays are not supported (save with np.ascontiguousarray)", path);
  const Shape& shape = parsed.shape;
  // As the header writes it: (2, 3), (5,) or ().
  const std::string shape_text =
      shape.size() == 1 ? fmt::format("({},)", shape[0]) : fmt::format("({})", fmt::join(shape, ", "));

  DType dtype;
  size_t stored_size;
  if (descr == "<f4") dtype = DType::Float32, stored_size = 4;
  else if (descr == "<f8") dtype = DType::Float64, stored_size = 8;
  else if (descr == "<i8") dtype = DType::Int64, stored_size = 8;
  else if (descr == "<i4") dtype = DType::Int64, stored_size = 4;
  else if (descr == "<u2") dtype = DType::Int64, stored_size = 2;  // token ids (tokenize encode)
  else if (descr == "|b1") dtype = DType::Bool, stored_size = 1;
  else fail("load_npy", "'{}': unsupported dtype {} (expected <f4, <f8, <i8, <i4, <u2 or |b1)", path, quote_bytes(descr));

  const size_t data_start = header_start + header_len;
  // Multiply with overflow checks: a corrupt shape must not wrap to a small size.
  // Zero dims too: (0, 2^62, 4) holds nothing, but its strides would overflow.
  // And in bytes, not only elements: (0, 2^61) of float64 has 2^61 elements
  // of span, but the byte stride the kernels compute (2^61 * 8) overflows int64.
  const int64_t memory_item = static_cast<int64_t>(element_size(dtype));
  int64_t count = 1, span = 1, span_bytes = 0;
  for (int64_t n : shape) {
    RG_CHECK(!__builtin_mul_overflow(count, n, &count) && !__builtin_mul_overflow(span, std::max<int64_t>(n, 1), &span),
             "load_npy", "'{}': shape {} has more elements than int64 can count", path, shape_text);
  }
  int64_t needed = 0;
  RG_CHECK(!__builtin_mul_overflow(count, static_cast<int64_t>(stored_size), &needed) &&
               !__builtin_mul_overflow(span, std::max(memory_item, static_cast<int64_t>(stored_size)), &span_bytes),
           "load_npy", "'{}': shape {} of {} needs more bytes than int64 can count", path, shape_text, descr);
  RG_CHECK(bytes.size() - data_start == static_cast<size_t>(needed), "load_npy",
           "'{}': data has {} bytes, shape {} of {} needs {} (truncated or corrupt)", path,
           bytes.size() - data_start, shape_text, descr, needed);
  Tensor out = Tensor::empty(shape, dtype);
  const char* data = bytes.data() + data_start;
  if (descr == "<i4") {
    int64_t* o = out.data_ptr<int64_t>();
    for (int64_t i = 0; i < count; ++i) {
      int32_t v;
      std::memcpy(&v, data + 4 * i, 4);
      o[i] = v;
    }
  } else if (descr == "<u2") {
    int64_t* o = out.data_ptr<int64_t>();
    for (int64_t i = 0; i < count; ++i) o[i] = static_cast<uint8_t>(data[2 * i]) | (static_cast<uint8_t>(data[2 * i + 1]) << 8);
  } else {
    std::memcpy(out.raw_data(), data, static_cast<size_t>(needed));  // x86-64 is little-endian, like the file
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
