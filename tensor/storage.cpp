#include "tensor/storage.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <new>

namespace ropegrad {
namespace {

std::atomic<int64_t> g_current_bytes{0};
std::atomic<int64_t> g_peak_bytes{0};

constexpr size_t kAlignment = 64;  // one cache line; what SIMD loads like

void record_allocation(int64_t nbytes) {
  const int64_t now = g_current_bytes.fetch_add(nbytes) + nbytes;
  int64_t peak = g_peak_bytes.load();
  while (now > peak && !g_peak_bytes.compare_exchange_weak(peak, now)) {
  }
}

}  // namespace

Storage::Storage(size_t nbytes, bool zero) : nbytes_(nbytes) {
  // aligned_alloc wants a size that is a multiple of the alignment, and a
  // non-zero one so every storage has a distinct, valid pointer.
  const size_t padded = std::max<size_t>(kAlignment, (nbytes + kAlignment - 1) / kAlignment * kAlignment);
  data_ = static_cast<std::byte*>(std::aligned_alloc(kAlignment, padded));
  if (data_ == nullptr) throw std::bad_alloc();
  if (zero) std::memset(data_, 0, padded);
  record_allocation(static_cast<int64_t>(nbytes));
}

Storage::~Storage() {
  std::free(data_);
  g_current_bytes.fetch_sub(static_cast<int64_t>(nbytes_));
}

MemoryStats memory_stats() { return {g_current_bytes.load(), g_peak_bytes.load()}; }

void reset_peak_memory() { g_peak_bytes.store(g_current_bytes.load()); }

}  // namespace ropegrad
