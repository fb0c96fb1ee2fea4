#include "io/safetensors.h"
#include "io/tmp_file.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string_view>
#include <tuple>
#include <vector>

#include "io/json.h"
#include "io/utf8.h"
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

// ---- header <-> tensors ----------------------------------------------------------------

JsonValue parse_header(std::string_view header, const std::string& path) {
  try {
    return parse_json(header, JsonLimits{"header", 64, kMaxHeaderBytes});
  } catch (const JsonError& e) {
    fail(kLoad, "'{}': invalid JSON header at byte {}: {}", path, e.offset(), e.reason());
  }
}

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
uint64_t non_negative(const JsonValue& v, const std::string& path, const std::string& name, const char* what) {
  RG_CHECK(v.kind == JsonValue::Kind::Integer, kLoad, "'{}': tensor '{}': {} must hold integers", path, name,
           what);
  RG_CHECK(v.integer >= 0, kLoad, "'{}': tensor '{}': {} holds the negative value {}", path, name, what,
           v.integer);
  return static_cast<uint64_t>(v.integer);
}

Entry parse_entry(const std::string& name, const JsonValue& v, const std::string& path) {
  RG_CHECK(v.kind == JsonValue::Kind::Object, kLoad,
           "'{}': tensor '{}' must be an object with dtype, shape and data_offsets", path, name);
  Entry e;
  e.name = name;
  const JsonValue *dtype = nullptr, *shape = nullptr, *offsets = nullptr;
  for (const JsonMember& m : v.members) {
    if (m.key == "dtype") dtype = &m.value;
    else if (m.key == "shape") shape = &m.value;
    else if (m.key == "data_offsets") offsets = &m.value;
    else fail(kLoad, "'{}': tensor '{}' has an unknown field '{}'", path, name, m.key);
  }
  RG_CHECK(dtype != nullptr && shape != nullptr && offsets != nullptr, kLoad,
           "'{}': tensor '{}' lacks '{}'", path, name,
           dtype == nullptr ? "dtype" : shape == nullptr ? "shape" : "data_offsets");

  RG_CHECK(dtype->kind == JsonValue::Kind::String, kLoad, "'{}': tensor '{}': dtype must be a string", path, name);
  const DTypeName* found = nullptr;
  for (const auto& d : kDTypes) {
    if (dtype->str == d.name) found = &d;
  }
  RG_CHECK(found != nullptr, kLoad,
           "'{}': tensor '{}' has unsupported dtype '{}' (ropegrad reads F32, F64, I64 and BOOL)", path, name,
           dtype->str);
  e.dtype = found->dtype;

  RG_CHECK(shape->kind == JsonValue::Kind::Array, kLoad, "'{}': tensor '{}': shape must be an array", path, name);
  // Element count and byte size, refusing overflow: a corrupt shape must not wrap around.
  // The product of the non-zero sizes must fit too, or numel() of an empty
  // shape such as [2^62, 4, 0] would overflow on the way to 0.
  uint64_t bytes = element_size(e.dtype);
  bool overflow = false, empty = false;
  for (const JsonValue& d : shape->items) {
    const uint64_t n = non_negative(d, path, name, "shape");
    e.shape.push_back(static_cast<int64_t>(n));
    if (n == 0) empty = true;
    else if (bytes > static_cast<uint64_t>(std::numeric_limits<int64_t>::max()) / n) overflow = true;
    else bytes *= n;
  }
  RG_CHECK(!overflow, kLoad, "'{}': tensor '{}' has an impossibly large shape {}", path, name,
           shape_str(e.shape));
  if (empty) bytes = 0;

  RG_CHECK(offsets->kind == JsonValue::Kind::Array && offsets->items.size() == 2, kLoad,
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

  TmpFile tmp{unique_tmp_path(path)};  // PATH.<pid>.<random>.tmp: a name of its own
  tmp.fd = ::open(tmp.path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  RG_CHECK(tmp.fd >= 0, kSave, "cannot open '{}' for writing: {}", tmp.path, std::strerror(errno));
  write_all(tmp.fd, length, sizeof(length), tmp.path, kSave);
  write_all(tmp.fd, header.data(), header.size(), tmp.path, kSave);
  for (const Tensor& t : contiguous) {
    const size_t bytes = static_cast<size_t>(t.numel()) * element_size(t.dtype());
    if (bytes > 0) write_all(tmp.fd, t.raw_data(), bytes, tmp.path, kSave);
  }
  // fsync, rename over <path>, fsync the directory (io/tmp_file.h).
  const int fd = tmp.fd;
  tmp.fd = -1;
  replace_with_tmp(fd, tmp.path, path, kSave);
  tmp.keep = true;
}

namespace {

// The JSON header's bytes, after the 8-byte little-endian length that
// precedes it, checked against the file's size and the header limit.
std::string read_header(std::ifstream& in, const std::string& path, uint64_t file_size) {
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
  return header;
}

// The header's tensor entries; its __metadata__ strings go to `metadata`.
std::vector<Entry> header_entries(const std::string& header, const std::string& path,
                                  std::map<std::string, std::string>& metadata) {
  const JsonValue root = parse_header(header, path);
  RG_CHECK(root.kind == JsonValue::Kind::Object, kLoad, "'{}': the header must be a JSON object", path);
  std::vector<Entry> entries;
  for (const JsonMember& member : root.members) {
    const std::string& name = member.key;
    const JsonValue& value = member.value;
    if (name == kMetadataKey) {
      RG_CHECK(value.kind == JsonValue::Kind::Object, kLoad, "'{}': __metadata__ must be an object of strings",
               path);
      for (const JsonMember& m : value.members) {
        RG_CHECK(m.value.kind == JsonValue::Kind::String, kLoad, "'{}': __metadata__ value for '{}' must be a string",
                 path, m.key);
        metadata.emplace(m.key, m.value.str);
      }
      continue;
    }
    entries.push_back(parse_entry(name, value, path));
  }
  return entries;
}

// The tensors must tile the data section exactly: no overlap, no gap, no
// trailing bytes, nothing past the end. Sorts `entries` by offset.
void check_tiling(std::vector<Entry>& entries, uint64_t data_size, const std::string& path) {
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
}

// The next tensor's bytes, checked: a BOOL tensor's bytes are 0 or 1, and a
// checksum save_safetensors wrote must match (it is then taken out of `metadata`).
Tensor read_tensor(std::ifstream& in, const Entry& e, const std::string& path,
                   std::map<std::string, std::string>& metadata) {
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
  // Files from other tools have no checksum.
  const auto crc = metadata.find(std::string(kCrcPrefix) + e.name);
  if (crc != metadata.end()) {
    const std::string computed =
        fmt::format("{:08x}", crc32(reinterpret_cast<const unsigned char*>(t.raw_data()), bytes));
    RG_CHECK(crc->second == computed, kLoad,
             "'{}': tensor '{}' fails its checksum (CRC-32 {} stored, {} computed): the file is corrupt", path,
             e.name, crc->second, computed);
    metadata.erase(crc);
  }
  return t;
}

}  // namespace

SafetensorsFile load_safetensors(const std::string& path) {
  std::error_code ec;
  const auto status = std::filesystem::status(path, ec);
  RG_CHECK(std::filesystem::exists(status), kLoad, "'{}': no such file", path);
  RG_CHECK(std::filesystem::is_regular_file(status), kLoad, "'{}' is not a regular file", path);
  const uint64_t file_size = std::filesystem::file_size(path, ec);
  RG_CHECK(!ec, kLoad, "'{}': cannot read its size: {}", path, ec.message());
  std::ifstream in(path, std::ios::binary);
  RG_CHECK(in.good(), kLoad, "cannot open '{}'", path);

  const std::string header = read_header(in, path, file_size);
  SafetensorsFile out;
  std::vector<Entry> entries = header_entries(header, path, out.metadata);
  check_tiling(entries, file_size - 8 - header.size(), path);
  // Read in file order: the entries are now sorted by offset and contiguous.
  for (const Entry& e : entries) out.tensors.emplace(e.name, read_tensor(in, e, path, out.metadata));
  for (const auto& [key, value] : out.metadata) {
    RG_CHECK(key.rfind(kCrcPrefix, 0) != 0, kLoad, "'{}': checksum '{}' names no tensor of the file", path, key);
  }
  return out;
}

}  // namespace ropegrad::nn
