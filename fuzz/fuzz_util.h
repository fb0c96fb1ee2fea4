// What the fuzz targets share: the bytes libFuzzer made, as a file a reader
// can open (the readers take paths, as users call them).
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <string>

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

}  // namespace ropegrad::fuzz
