// What the fuzz targets share: the bytes libFuzzer made, as a file a reader
// can open (the readers take paths, as users call them).
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>

namespace ropegrad::fuzz {

// A file in /tmp holding `data`, unique to this process; rewritten per input.
inline const std::string& write_input(const uint8_t* data, size_t size, const char* suffix) {
  static const std::string path = "/tmp/ropegrad-fuzz-" + std::to_string(::getpid()) + suffix;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

// A directory in /tmp unique to this process and `tag`, created once.
inline const std::string& input_dir(const char* tag) {
  static const std::string dir = "/tmp/ropegrad-fuzz-" + std::to_string(::getpid()) + "-" + tag;
  static const bool made = ::mkdir(dir.c_str(), 0755) == 0 || errno == EEXIST;
  if (!made) std::abort();
  return dir;
}

// Writes `size` bytes to dir/name (the readers of a run's files pick a file's
// fields by its name); returns the path.
inline std::string write_named(const std::string& dir, const char* name, const uint8_t* data, size_t size) {
  const std::string path = dir + "/" + name;
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) std::abort();
  if (size > 0 && std::fwrite(data, 1, size, f) != size) std::abort();
  std::fclose(f);
  return path;
}

// The input split at its first 0x00: two files' bytes in one input (the
// second empty when there is none).
inline std::pair<std::pair<const uint8_t*, size_t>, std::pair<const uint8_t*, size_t>> split_at_nul(const uint8_t* data,
                                                                                                      size_t size) {
  size_t n = 0;
  while (n < size && data[n] != 0) ++n;
  const size_t rest = n < size ? n + 1 : size;
  return {{data, n}, {data + rest, size - rest}};
}

}  // namespace ropegrad::fuzz
