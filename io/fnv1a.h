// FNV-1a, 64-bit: the one checksum of bytes that need no cryptography (a
// case's name to a seed, a corpus's fingerprint). Feed it in pieces by
// passing the previous result as `h`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

namespace ropegrad {

constexpr uint64_t kFnv1aOffset = 14695981039346656037ull;
constexpr uint64_t kFnv1aPrime = 1099511628211ull;

// Of `bytes` bytes at `data` (a name of its own: fnv1a("text", h) must not
// take h for a length).
inline uint64_t fnv1a_bytes(const void* data, size_t bytes, uint64_t h = kFnv1aOffset) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < bytes; ++i) h = (h ^ p[i]) * kFnv1aPrime;
  return h;
}

inline uint64_t fnv1a(std::string_view text, uint64_t h = kFnv1aOffset) {
  return fnv1a_bytes(text.data(), text.size(), h);
}

}  // namespace ropegrad
