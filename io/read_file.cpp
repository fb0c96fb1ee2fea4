#include "io/read_file.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "tensor/error.h"

namespace ropegrad::io {

std::string read_file(const std::string& path, std::string_view op, std::string_view what) {
  std::error_code error;
  RG_CHECK(!std::filesystem::is_directory(path, error), std::string(op), "'{}' is a directory, not {}", path, what);
  std::ifstream in(path, std::ios::binary);
  RG_CHECK(in.good(), std::string(op), "cannot open '{}'", path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  RG_CHECK(!in.bad(), std::string(op), "reading '{}' failed", path);
  return bytes.str();
}

}  // namespace ropegrad::io
