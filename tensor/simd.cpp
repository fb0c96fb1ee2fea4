// Which of the two compilations of the kernels runs (tensor/simd.h).
#include "tensor/simd.h"

#include <atomic>
#include <cstdlib>
#include <string>

#include "tensor/error.h"

namespace ropegrad::simd {

namespace {
std::atomic<int> g_forced{-1};  // -1: not set by set_level

Level from_env() { return parse_level(std::getenv("ROPEGRAD_SIMD")); }
}  // namespace

Level best_supported() {
#if defined(__x86_64__) || defined(__i386__)
  static const bool has_avx2 = __builtin_cpu_supports("avx2");
  return has_avx2 ? Level::Avx2 : Level::Baseline;
#else
  return Level::Baseline;
#endif
}

Level level() {
  const int forced = g_forced.load(std::memory_order_relaxed);
  if (forced >= 0) return static_cast<Level>(forced);
  static const Level chosen = from_env();
  return chosen;
}

void set_level(Level wanted) {
  RG_CHECK(wanted == Level::Baseline || best_supported() == Level::Avx2, "simd",
           "cannot run the AVX2 kernels: this CPU has no AVX2");
  g_forced.store(static_cast<int>(wanted));
}

Level parse_level(const char* env) {
  const std::string value = env == nullptr ? "" : env;
  if (value.empty() || value == "auto") return best_supported();
  if (value == "baseline") return Level::Baseline;
  if (value == "avx2") {
    RG_CHECK(best_supported() == Level::Avx2, "simd", "ROPEGRAD_SIMD=avx2, but this CPU has no AVX2");
    return Level::Avx2;
  }
  RG_CHECK(false, "simd", "ROPEGRAD_SIMD must be auto, avx2 or baseline, got '{}'", value);
  return Level::Baseline;
}

const char* level_name(Level l) { return l == Level::Avx2 ? "avx2" : "baseline"; }

}  // namespace ropegrad::simd
