#include "io/safetensors.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <set>
#include <string_view>
#include <tuple>
#include <vector>

#include "tensor/kernels.h"
#include "tensor/printable.h"

namespace ropegrad::nn {

namespace {

constexpr const char* kLoad = "load_safetensors";
constexpr const char* kSave = "save_safetensors";
constexpr const char* kMetadataKey = "__metadata__";
// The reference implementation refuses headers above 100 MB; so do we, which
// also bounds what a corrupt length field can make us allocate.
constexpr uint64_t kMaxHeaderBytes = 100'000'000;
// Deeper nesting is never valid here; the limit keeps "[[[[..." off the stack.
constexpr int kMaxJsonDepth = 64;

// ---- UTF-8 -------------------------------------------------------------------------

// Offset of the first byte that breaks UTF-8 (overlong forms, surrogates and
// code points above U+10FFFF included), or npos when `s` is valid.
size_t invalid_utf8_at(std::string_view s) {
  size_t i = 0;
  while (i < s.size()) {
    const auto c = static_cast<unsigned char>(s[i]);
    if (c < 0x80) {
      ++i;
      continue;
    }
    size_t len = 0;
    uint32_t cp = 0, min = 0;
    if ((c & 0xE0) == 0xC0) len = 2, cp = c & 0x1F, min = 0x80;
    else if ((c & 0xF0) == 0xE0) len = 3, cp = c & 0x0F, min = 0x800;
    else if ((c & 0xF8) == 0xF0) len = 4, cp = c & 0x07, min = 0x10000;
    else return i;
    if (i + len > s.size()) return i;
    for (size_t k = 1; k < len; ++k) {
      const auto cc = static_cast<unsigned char>(s[i + k]);
      if ((cc & 0xC0) != 0x80) return i;
      cp = (cp << 6) | (cc & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return i;
    i += len;
  }
  return std::string_view::npos;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

// ---- a small, strict JSON reader ------------------------------------------------------
// Only what a safetensors header holds: objects, arrays, strings and integers
// (no floats, true/false/null). Duplicate object keys are an error.

struct Json {
  enum class Kind { Object, Array, String, Integer };
  Kind kind = Kind::Integer;
  int64_t integer = 0;
  std::string str;
  std::vector<std::string> keys;  // Object: keys in file order (parallel to items)
  std::vector<Json> items;        // Object: values; Array: elements
};

class JsonParser {
 public:
  JsonParser(std::string_view text, const std::string& path) : text_(text), path_(path) {}

  Json parse_document() {
    skip_whitespace();
    Json value = parse_value(0);
    skip_whitespace();
    if (pos_ != text_.size()) error(fmt::format("unexpected {} after the top-level value", describe()));
    return value;
  }

 private:
  [[noreturn]] void error(const std::string& what) const {
    fail(kLoad, "'{}': invalid JSON header at byte {}: {}", path_, pos_, what);
  }

  // The character at pos_, for error messages.
  std::string describe() const {
    if (pos_ >= text_.size()) return "end of header";
    const auto c = static_cast<unsigned char>(text_[pos_]);
    if (c >= 0x20 && c < 0x7F) return fmt::format("'{}'", static_cast<char>(c));
    return fmt::format("byte 0x{:02x}", c);
  }

  void skip_whitespace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\n' || text_[pos_] == '\r' || text_[pos_] == '\t')) {
      ++pos_;
    }
  }

  void expect(char c) {
    if (pos_ >= text_.size() || text_[pos_] != c) {
      error(fmt::format("expected '{}', found {}", c, describe()));
    }
    ++pos_;
  }

  Json parse_value(int depth) {
    if (depth > kMaxJsonDepth) error(fmt::format("nested deeper than {} levels", kMaxJsonDepth));
    if (pos_ >= text_.size()) error("unexpected end of header");
    const char c = text_[pos_];
    if (c == '{') return parse_object(depth);
    if (c == '[') return parse_array(depth);
    if (c == '"') {
      Json v;
      v.kind = Json::Kind::String;
      v.str = parse_string();
      return v;
    }
    if (c == '-' || (c >= '0' && c <= '9')) return parse_integer();
    error(fmt::format("unexpected {} (a header holds only objects, arrays, strings and integers)",
                      describe()));
  }

  Json parse_object(int depth) {
    Json v;
    v.kind = Json::Kind::Object;
    std::set<std::string> seen;
    expect('{');
    skip_whitespace();
    if (pos_ < text_.size() && text_[pos_] == '}') {
      ++pos_;
      return v;
    }
    while (true) {
      skip_whitespace();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        error(fmt::format("expected a key string, found {}", describe()));
      }
      std::string key = parse_string();
      if (!seen.insert(key).second) error(fmt::format("duplicate key '{}'", key));
      skip_whitespace();
      expect(':');
      skip_whitespace();
      v.items.push_back(parse_value(depth + 1));
      v.keys.push_back(std::move(key));
      skip_whitespace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == '}') {
        ++pos_;
        return v;
      }
      error(fmt::format("expected ',' or '}}' in an object, found {}", describe()));
    }
  }

  Json parse_array(int depth) {
    Json v;
    v.kind = Json::Kind::Array;
    expect('[');
    skip_whitespace();
    if (pos_ < text_.size() && text_[pos_] == ']') {
      ++pos_;
      return v;
    }
    while (true) {
      skip_whitespace();
      v.items.push_back(parse_value(depth + 1));
      skip_whitespace();
      if (pos_ < text_.size() && text_[pos_] == ',') {
        ++pos_;
        continue;
      }
      if (pos_ < text_.size() && text_[pos_] == ']') {
        ++pos_;
        return v;
      }
      error(fmt::format("expected ',' or ']' in an array, found {}", describe()));
    }
  }

  uint32_t parse_hex4() {
    if (text_.size() - pos_ < 4) error("truncated \\u escape");
    uint32_t cp = 0;
    for (int k = 0; k < 4; ++k) {
      const char h = text_[pos_];
      uint32_t d;
      if (h >= '0' && h <= '9') d = h - '0';
      else if (h >= 'a' && h <= 'f') d = h - 'a' + 10;
      else if (h >= 'A' && h <= 'F') d = h - 'A' + 10;
      else error(fmt::format("bad hex digit {} in a \\u escape", describe()));
      cp = (cp << 4) | d;
      ++pos_;
    }
    return cp;
  }

  std::string parse_string() {
    const size_t start = pos_;
    expect('"');
    std::string out;
    while (true) {
      if (pos_ >= text_.size()) {
        pos_ = start;
        error("unterminated string");
      }
      const auto c = static_cast<unsigned char>(text_[pos_]);
      if (c == '"') {
        ++pos_;
        break;
      }
      if (c < 0x20) error(fmt::format("raw control character 0x{:02x} in a string (must be escaped)", c));
      if (c != '\\') {
        out += static_cast<char>(c);
        ++pos_;
        continue;
      }
      ++pos_;  // the backslash
      if (pos_ >= text_.size()) error("unterminated escape");
      const char e = text_[pos_++];
      switch (e) {
        case '"': out += '"'; break;
        case '\\': out += '\\'; break;
        case '/': out += '/'; break;
        case 'b': out += '\b'; break;
        case 'f': out += '\f'; break;
        case 'n': out += '\n'; break;
        case 'r': out += '\r'; break;
        case 't': out += '\t'; break;
        case 'u': {
          uint32_t cp = parse_hex4();
          if (cp >= 0xDC00 && cp <= 0xDFFF) error("lone low surrogate in a \\u escape");
          if (cp >= 0xD800 && cp <= 0xDBFF) {
            if (text_.size() - pos_ < 2 || text_[pos_] != '\\' || text_[pos_ + 1] != 'u') {
              error("high surrogate in a \\u escape is not followed by a low surrogate");
            }
            pos_ += 2;
            const uint32_t low = parse_hex4();
            if (low < 0xDC00 || low > 0xDFFF) {
              error("high surrogate in a \\u escape is not followed by a low surrogate");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          append_utf8(out, cp);
          break;
        }
        default:
          --pos_;
          error(fmt::format("unknown escape '\\{}'", e));
      }
    }
    if (const size_t bad = invalid_utf8_at(out); bad != std::string_view::npos) {
      pos_ = start;
      error(fmt::format("string is not valid UTF-8 (at its byte {})", bad));
    }
    return out;
  }

  Json parse_integer() {
    Json v;
    v.kind = Json::Kind::Integer;
    const bool negative = text_[pos_] == '-';
    if (negative) ++pos_;
    if (pos_ >= text_.size() || text_[pos_] < '0' || text_[pos_] > '9') {
      error(fmt::format("expected a digit, found {}", describe()));
    }
    if (text_[pos_] == '0' && pos_ + 1 < text_.size() && text_[pos_ + 1] >= '0' && text_[pos_ + 1] <= '9') {
      error("integer with a leading zero");
    }
    uint64_t magnitude = 0;
    constexpr auto kMax = static_cast<uint64_t>(std::numeric_limits<int64_t>::max());
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const auto d = static_cast<uint64_t>(text_[pos_] - '0');
      if (magnitude > (kMax - d) / 10) error("integer out of the int64 range");
      magnitude = magnitude * 10 + d;
      ++pos_;
    }
    if (pos_ < text_.size() && (text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E')) {
      error("only integers are allowed here (found a fraction or exponent)");
    }
    v.integer = negative ? -static_cast<int64_t>(magnitude) : static_cast<int64_t>(magnitude);
    return v;
  }

  std::string_view text_;
  const std::string& path_;
  size_t pos_ = 0;
};

// ---- header <-> tensors ----------------------------------------------------------------

struct DTypeName {
  DType dtype;
  const char* name;
};
constexpr DTypeName kDTypes[] = {
    {DType::Float32, "F32"}, {DType::Float64, "F64"}, {DType::Int64, "I64"}, {DType::Bool, "BOOL"}};

const char* safetensors_dtype(DType dtype) {
  for (const auto& d : kDTypes) {
    if (d.dtype == dtype) return d.name;
  }
  return "?";
}

struct Entry {
  std::string name;
  DType dtype;
  Shape shape;
  uint64_t begin = 0, end = 0;  // relative to the data section
};

// Non-negative integer element of a JSON array, or an Error naming `what`.
uint64_t non_negative(const Json& v, const std::string& path, const std::string& name, const char* what) {
  RG_CHECK(v.kind == Json::Kind::Integer, kLoad, "'{}': tensor '{}': {} must hold integers", path, name,
           what);
  RG_CHECK(v.integer >= 0, kLoad, "'{}': tensor '{}': {} holds the negative value {}", path, name, what,
           v.integer);
  return static_cast<uint64_t>(v.integer);
}

Entry parse_entry(const std::string& name, const Json& v, const std::string& path) {
  RG_CHECK(v.kind == Json::Kind::Object, kLoad,
           "'{}': tensor '{}' must be an object with dtype, shape and data_offsets", path, name);
  Entry e;
  e.name = name;
  const Json *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
  for (size_t i = 0; i < v.keys.size(); ++i) {
    if (v.keys[i] == "dtype") dtype = &v.items[i];
    else if (v.keys[i] == "shape") shape = &v.items[i];
    else if (v.keys[i] == "data_offsets") offsets = &v.items[i];
    else fail(kLoad, "'{}': tensor '{}' has an unknown field '{}'", path, name, v.keys[i]);
  }
  RG_CHECK(dtype != nullptr && shape != nullptr && offsets != nullptr, kLoad,
           "'{}': tensor '{}' lacks '{}'", path, name,
           dtype == nullptr ? "dtype" : shape == nullptr ? "shape" : "data_offsets");

  RG_CHECK(dtype->kind == Json::Kind::String, kLoad, "'{}': tensor '{}': dtype must be a string", path, name);
  const DTypeName* found = nullptr;
  for (const auto& d : kDTypes) {
    if (dtype->str == d.name) found = &d;
  }
  RG_CHECK(found != nullptr, kLoad,
           "'{}': tensor '{}' has unsupported dtype '{}' (ropegrad reads F32, F64, I64 and BOOL)", path, name,
           dtype->str);
  e.dtype = found->dtype;

  RG_CHECK(shape->kind == Json::Kind::Array, kLoad, "'{}': tensor '{}': shape must be an array", path, name);
  // Element count and byte size, refusing overflow: a corrupt shape must not wrap around.
  // The product of the non-zero sizes must fit too, or numel() of an empty
  // shape such as [2^62, 4, 0] would overflow on the way to 0.
  uint64_t bytes = element_size(e.dtype);
  bool overflow = false, empty = false;
  for (const Json& d : shape->items) {
    const uint64_t n = non_negative(d, path, name, "shape");
    e.shape.push_back(static_cast<int64_t>(n));
    if (n == 0) empty = true;
    else if (bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / n) overflow = true;
    else bytes *= n;
  }
  RG_CHECK(!overflow, kLoad, "'{}': tensor '{}' has an impossibly large shape {}", path, name,
           shape_str(e.shape));
  if (empty) bytes = 0;

  RG_CHECK(offsets->kind == Json::Kind::Array && offsets->items.size() == 2, kLoad,
           "'{}': tensor '{}': data_offsets must be an array [begin, end]", path, name);
  e.begin = non_negative(offsets->items[0], path, name, "data_offsets");
  e.end = non_negative(offsets->items[1], path, name, "data_offsets");
  RG_CHECK(e.begin <= e.end, kLoad, "'{}': tensor '{}' has data_offsets [{}, {}] with begin after end", path,
           name, e.begin, e.end);
  RG_CHECK(e.end - e.begin == bytes, kLoad,
           "'{}': tensor '{}' of shape {} and dtype {} needs {} bytes, but data_offsets [{}, {}] span {}",
           path, name, shape_str(e.shape), found->name, bytes, e.begin, e.end, e.end - e.begin);
  return e;
}

void append_json_string(std::string& out, std::string_view s) { out += json_string(s); }

// ---- files --------------------------------------------------------------------------------

void write_all(int fd, const void* data, size_t size, const std::string& tmp) {
  const auto* p = static_cast<const char*>(data);
  while (size > 0) {
    const ssize_t n = ::write(fd, p, size);
    if (n < 0 && errno == EINTR) continue;
    RG_CHECK(n > 0, kSave, "writing '{}' failed: {}", tmp, std::strerror(errno));
    p += n;
    size -= static_cast<size_t>(n);
  }
}

// Closes the descriptor and removes the temporary file unless `keep` is set.
struct TmpFile {
  std::string path;
  int fd = -1;
  bool keep = false;
  ~TmpFile() {
    if (fd >= 0) ::close(fd);
    if (!keep) {
      std::error_code ec;
      std::filesystem::remove(path, ec);
    }
  }
};

}  // namespace

// Stored per tensor in the metadata as "crc32.<name>": "<8 hex digits>", so
// other readers still load the file.
uint32_t crc32(const unsigned char* data, size_t size, uint32_t crc) {
  static const std::array<uint32_t, 256> table = [] {
    std::array<uint32_t, 256> t{};
    for (uint32_t i = 0; i < 256; ++i) {
      uint32_t c = i;
      for (int k = 0; k < 8; ++k) c = (c & 1) ? 0xEDB88320u ^ (c >> 1) : c >> 1;
      t[i] = c;
    }
    return t;
  }();
  crc = ~crc;
  for (size_t i = 0; i < size; ++i) crc = table[(crc ^ data[i]) & 0xFF] ^ (crc >> 8);
  return ~crc;
}

constexpr std::string_view kCrcPrefix = "crc32.";

void save_safetensors(const std::string& path, const StateDict& tensors,
                      const std::map<std::string, std::string>& metadata_in) {
  for (const auto& [key, value] : metadata_in) {
    RG_CHECK(key.rfind(kCrcPrefix, 0) != 0, kSave, "'{}': metadata key '{}' is reserved for checksums", path, key);
  }
  std::map<std::string, std::string> metadata = metadata_in;
  for (const auto& [name, t] : tensors) {
    if (!t.defined()) continue;  // reported below
    const Tensor c = kernels::contiguous(t);
    const uint32_t crc = crc32(reinterpret_cast<const unsigned char*>(c.raw_data()),
                               static_cast<size_t>(c.numel()) * element_size(c.dtype()));
    metadata[std::string(kCrcPrefix) + name] = fmt::format("{:08x}", crc);
  }
  // Validate everything before touching the disk.
  for (const auto& [name, t] : tensors) {
    RG_CHECK(name != kMetadataKey, kSave, "'{}': '{}' is reserved for metadata and cannot name a tensor",
             path, name);
    RG_CHECK(invalid_utf8_at(name) == std::string_view::npos, kSave,
             "'{}': tensor name '{}' is not valid UTF-8", path, name);
    RG_CHECK(t.defined(), kSave, "'{}': tensor '{}' is undefined", path, name);
  }
  for (const auto& [key, value] : metadata) {
    const bool valid =
        invalid_utf8_at(key) == std::string_view::npos && invalid_utf8_at(value) == std::string_view::npos;
    RG_CHECK(valid, kSave, "'{}': metadata '{}' is not valid UTF-8", path, key);
  }

  // Header: metadata first, then tensors in name order, packed back to back.
  std::string header = "{";
  if (!metadata.empty()) {
    append_json_string(header, kMetadataKey);
    header += ":{";
    bool first = true;
    for (const auto& [key, value] : metadata) {
      if (!first) header += ',';
      first = false;
      append_json_string(header, key);
      header += ':';
      append_json_string(header, value);
    }
    header += '}';
  }
  std::vector<Tensor> contiguous;
  uint64_t offset = 0;
  for (const auto& [name, t] : tensors) {
    const uint64_t bytes = static_cast<uint64_t>(t.numel()) * element_size(t.dtype());
    if (header.size() > 1) header += ',';
    append_json_string(header, name);
    header += fmt::format(":{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}",
                          safetensors_dtype(t.dtype()), fmt::join(t.shape(), ","), offset, offset + bytes);
    offset += bytes;
    contiguous.push_back(kernels::contiguous(t));
  }
  header += '}';
  // Pad so the data section starts 8-byte aligned.
  header.append((8 - header.size() % 8) % 8, ' ');
  uint64_t n = header.size();
  unsigned char length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<unsigned char>((n >> (8 * i)) & 0xFF);

  TmpFile tmp{path + ".tmp"};
  tmp.fd = ::open(tmp.path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  RG_CHECK(tmp.fd >= 0, kSave, "cannot open '{}' for writing: {}", tmp.path, std::strerror(errno));
  write_all(tmp.fd, length, sizeof(length), tmp.path);
  write_all(tmp.fd, header.data(), header.size(), tmp.path);
  for (const Tensor& t : contiguous) {
    const size_t bytes = static_cast<size_t>(t.numel()) * element_size(t.dtype());
    if (bytes > 0) write_all(tmp.fd, t.raw_data(), bytes, tmp.path);
  }
  // The bytes must be on disk before the rename makes them visible under <path>.
  RG_CHECK(::fsync(tmp.fd) == 0, kSave, "fsync of '{}' failed: {}", tmp.path, std::strerror(errno));
  const int fd = tmp.fd;
  tmp.fd = -1;
  RG_CHECK(::close(fd) == 0, kSave, "closing '{}' failed: {}", tmp.path, std::strerror(errno));
  std::error_code ec;
  std::filesystem::rename(tmp.path, path, ec);
  RG_CHECK(!ec, kSave, "cannot rename '{}' to '{}': {}", tmp.path, path, ec.message());
  tmp.keep = true;
  // Persist the rename itself (best effort: some file systems refuse to fsync a directory).
  std::filesystem::path dir = std::filesystem::path(path).parent_path();
  if (dir.empty()) dir = ".";
  const int dir_fd = ::open(dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  if (dir_fd >= 0) {
    (void)::fsync(dir_fd);
    ::close(dir_fd);
  }
}

SafetensorsFile load_safetensors(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  RG_CHECK(std::filesystem::exists(status), kLoad, "'{}': no such file", path);
  RG_CHECK(std::filesystem::is_regular_file(status), kLoad, "'{}' is not a regular file", path);
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  RG_CHECK(!ec, kLoad, "'{}': cannot read its size: {}", path, ec.message());
  std::ifstream in(path, std::ios::binary);
  RG_CHECK(in.good(), kLoad, "cannot open '{}'", path);

  RG_CHECK(file_size >= 8, kLoad,
           "'{}' is {} bytes long, shorter than the 8-byte header length: truncated or not a "
           "safetensors file",
           path, file_size);
  unsigned char length[8];
  in.read(reinterpret_cast<char*>(length), 8);
  RG_CHECK(in.gcount() == 8, kLoad, "'{}': cannot read the header length", path);
  uint64_t header_size = 0;
  for (int i = 7; i >= 0; --i) header_size = (header_size << 8) | length[i];
  RG_CHECK(header_size <= file_size - 8, kLoad,
           "'{}': header length {} is larger than the {} bytes that follow it: truncated or not a "
           "safetensors file",
           path, header_size, file_size - 8);
  RG_CHECK(header_size <= kMaxHeaderBytes, kLoad, "'{}': header length {} exceeds the {}-byte limit", path,
           header_size, kMaxHeaderBytes);
  std::string header(header_size, '\0');
  in.read(header.data(), static_cast<std::streamsize>(header_size));
  RG_CHECK(static_cast<uint64_t>(in.gcount()) == header_size, kLoad, "'{}': truncated in its header", path);

  const Json root = JsonParser(header, path).parse_document();
  RG_CHECK(root.kind == Json::Kind::Object, kLoad, "'{}': the header must be a JSON object", path);

  SafetensorsFile out;
  std::vector<Entry> entries;
  for (size_t i = 0; i < root.keys.size(); ++i) {
    const std::string& name = root.keys[i];
    const Json& value = root.items[i];
    if (name == kMetadataKey) {
      RG_CHECK(value.kind == Json::Kind::Object, kLoad, "'{}': __metadata__ must be an object of strings",
               path);
      for (size_t k = 0; k < value.keys.size(); ++k) {
        RG_CHECK(value.items[k].kind == Json::Kind::String, kLoad,
                 "'{}': __metadata__ value for '{}' must be a string", path, value.keys[k]);
        out.metadata.emplace(value.keys[k], value.items[k].str);
      }
      continue;
    }
    entries.push_back(parse_entry(name, value, path));
  }

  // The tensors must tile the data section exactly: no overlap, no gap, no
  // trailing bytes, nothing past the end.
  const uint64_t data_size = file_size - 8 - header_size;
  for (const Entry& e : entries) {
    RG_CHECK(e.end <= data_size, kLoad,
             "'{}': tensor '{}' has data_offsets [{}, {}] past the end of the {}-byte data section: "
             "truncated or corrupt",
             path, e.name, e.begin, e.end, data_size);
  }
  std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  uint64_t covered = 0;
  for (size_t i = 0; i < entries.size(); ++i) {
    const Entry& e = entries[i];
    RG_CHECK(e.begin >= covered, kLoad,
             "'{}': tensors '{}' and '{}' overlap (data_offsets [{}, {}] and [{}, {}])", path,
             entries[i - 1].name, e.name, entries[i - 1].begin, entries[i - 1].end, e.begin, e.end);
    RG_CHECK(e.begin == covered, kLoad, "'{}': data bytes [{}, {}) are not covered by any tensor", path,
             covered, e.begin);
    covered = e.end;
  }
  RG_CHECK(covered == data_size, kLoad,
           "'{}': data bytes [{}, {}) are not covered by any tensor (the data section has {} bytes)", path,
           covered, data_size, data_size);

  // Read in file order: the entries are now sorted by offset and contiguous.
  for (const Entry& e : entries) {
    Tensor t = Tensor::empty(e.shape, e.dtype);
    const uint64_t bytes = e.end - e.begin;
    if (bytes > 0) {
      in.read(reinterpret_cast<char*>(t.raw_data()), static_cast<std::streamsize>(bytes));
      RG_CHECK(static_cast<uint64_t>(in.gcount()) == bytes, kLoad,
               "'{}': truncated while reading tensor '{}'", path, e.name);
    }
    if (e.dtype == DType::Bool) {
      // Any byte other than 0 or 1 would be an invalid C++ bool.
      const auto* b = reinterpret_cast<const unsigned char*>(t.raw_data());
      for (uint64_t k = 0; k < bytes; ++k) {
        RG_CHECK(b[k] <= 1, kLoad, "'{}': BOOL tensor '{}' holds the byte {} at element {} (must be 0 or 1)",
                 path, e.name, static_cast<int>(b[k]), k);
      }
    }
    // A checksum written by save_safetensors must match (files from other tools have none).
    const auto crc = out.metadata.find(std::string(kCrcPrefix) + e.name);
    if (crc != out.metadata.end()) {
      const std::string computed =
          fmt::format("{:08x}", crc32(reinterpret_cast<const unsigned char*>(t.raw_data()), bytes));
      RG_CHECK(crc->second == computed, kLoad,
               "'{}': tensor '{}' fails its checksum (CRC-32 {} stored, {} computed): the file is corrupt", path,
               e.name, crc->second, computed);
      out.metadata.erase(crc);
    }
    out.tensors.emplace(e.name, std::move(t));
  }
  for (const auto& [key, value] : out.metadata) {
    RG_CHECK(key.rfind(kCrcPrefix, 0) != 0, kLoad, "'{}': checksum '{}' names no tensor of the file", path, key);
  }
  return out;
}

}  // namespace ropegrad::nn
