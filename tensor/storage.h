// Storage: one reference-counted, 64-byte aligned block of memory that any
// number of tensor views share. It also carries the version counter that
// autograd uses to detect in-place changes to saved tensors.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>

namespace ropegrad {

class Storage {
 public:
  // Allocates `nbytes`; zero-filled when `zero` is true.
  Storage(size_t nbytes, bool zero);
  ~Storage();
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;

  std::byte* data() { return data_; }
  const std::byte* data() const { return data_; }
  size_t nbytes() const { return nbytes_; }

  // Bumped by every in-place op on any view of this storage.
  uint64_t version() const { return version_; }
  void bump_version() { ++version_; }

 private:
  std::byte* data_ = nullptr;
  size_t nbytes_ = 0;
  uint64_t version_ = 0;
};

// Bytes held by live storages, and the most ever held since the last reset:
// what benchmarks report as memory. Freed blocks of 1 MiB or more are kept
// for reuse (up to 1 GiB in all) and are not counted as held.
struct MemoryStats {
  int64_t current_bytes;
  int64_t peak_bytes;
};
MemoryStats memory_stats();
void reset_peak_memory();
// Hands the cached free blocks back to the system.
void release_cached_memory();
// Bytes in freed blocks kept for reuse (always 0 in sanitizer builds, where
// every free goes to the allocator so use-after-free is caught).
int64_t cached_bytes();
bool block_cache_enabled();

// Fills every storage that is not zero-filled with all-ones bytes when it is
// made (nan in float32 and float64), so that an element nobody wrote reads
// the same nan every run instead of what the memory held. For course-check:
// a learner's code that leaves part of an output unwritten then shows where,
// the same way each time. Off by default (it costs a pass over the memory).
void set_fill_fresh_storage_with_nan(bool on);

}  // namespace ropegrad
