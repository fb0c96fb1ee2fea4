#include "tensor/storage.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <new>
#include <unordered_map>
#include <vector>

namespace ropegrad {
namespace {

std::atomic<bool> g_fill_with_nan{false};
std::atomic<int64_t> g_current_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};

constexpr size_t kAlignment = 64;  // one cache line; what SIMD loads like

// Large blocks are kept for reuse instead of being handed back to the OS:
// glibc returns every block above its mmap threshold on free, and a fresh
// 64 MB block costs 16k page faults — several times the arithmetic of an
// elementwise op on it. Training repeats the same shapes every step, so an
// exact-size cache hits almost always.
#ifdef ROPEGRAD_NO_BLOCK_CACHE  // sanitizer builds: every free must reach the allocator
constexpr size_t kCacheMinBytes = SIZE_MAX;
#else
constexpr size_t kCacheMinBytes = size_t{1} << 20;
#endif
constexpr size_t kCacheMaxBytes = size_t{1} << 30;

struct BlockCache {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<std::byte*>> free_blocks;  // by padded size
  size_t cached_bytes = 0;
};

BlockCache& block_cache() {
  static BlockCache* cache = new BlockCache();  // never destroyed: storages may outlive statics
  return *cache;
}

std::byte* allocate_block(size_t padded) {
  if (padded >= kCacheMinBytes) {
    BlockCache& cache = block_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    auto it = cache.free_blocks.find(padded);
    if (it != cache.free_blocks.end() && !it->second.empty()) {
      std::byte* block = it->second.back();
      it->second.pop_back();
      cache.cached_bytes -= padded;
      return block;
    }
  }
  return static_cast<std::byte*>(std::aligned_alloc(kAlignment, padded));
}

void free_block(std::byte* block, size_t padded) {
  if (padded >= kCacheMinBytes) {
    BlockCache& cache = block_cache();
    std::lock_guard<std::mutex> lock(cache.mutex);
    if (cache.cached_bytes + padded <= kCacheMaxBytes) {
      cache.free_blocks[padded].push_back(block);
      cache.cached_bytes += padded;
      return;
    }
  }
  std::free(block);
}

size_t padded_size(size_t nbytes) {
  // aligned_alloc wants a size that is a multiple of the alignment, and a
  // non-zero one so every storage has a distinct, valid pointer.
  return std::max<size_t>(kAlignment, (nbytes + kAlignment - 1) / kAlignment * kAlignment);
}

void record_allocation(int64_t nbytes) {
  const int64_t now = g_current_bytes.fetch_add(nbytes) + nbytes;
  int64_t peak = g_peak_bytes.load();
  while (now > peak && !g_peak_bytes.compare_exchange_weak(peak, now)) {
  }
}

}  // namespace

Storage::Storage(size_t nbytes, bool zero) : nbytes_(nbytes) {
  const size_t padded = padded_size(nbytes);
  data_ = allocate_block(padded);
  if (data_ == nullptr) throw std::bad_alloc();
  if (zero) {
    std::memset(data_, 0, padded);
  } else if (g_fill_with_nan.load(std::memory_order_relaxed)) {
    std::memset(data_, 0xFF, padded);  // all ones: a nan in float32 and float64
  }
  record_allocation(static_cast<int64_t>(nbytes));
}

Storage::~Storage() {
  free_block(data_, padded_size(nbytes_));
  g_current_bytes.fetch_sub(static_cast<int64_t>(nbytes_));
}

int64_t cached_bytes() {
  BlockCache& cache = block_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  return static_cast<int64_t>(cache.cached_bytes);
}

bool block_cache_enabled() { return kCacheMinBytes != SIZE_MAX; }

void set_fill_fresh_storage_with_nan(bool on) { g_fill_with_nan.store(on); }

void release_cached_memory() {
  BlockCache& cache = block_cache();
  std::lock_guard<std::mutex> lock(cache.mutex);
  for (auto& [size, blocks] : cache.free_blocks) {
    for (std::byte* block : blocks) std::free(block);
  }
  cache.free_blocks.clear();
  cache.cached_bytes = 0;
}

MemoryStats memory_stats() { return {g_current_bytes.load(), g_peak_bytes.load()}; }

void reset_peak_memory() { g_peak_bytes.store(g_current_bytes.load()); }

}  // namespace ropegrad
