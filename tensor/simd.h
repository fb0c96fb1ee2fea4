// The elementwise and row kernels compiled twice: for AVX2 (8 floats per
// vector instruction) and for baseline x86-64 (SSE2, 4 floats), the one to
// run chosen once from the CPU. The build has no -march=native, so without
// this every machine would run the SSE2 loops; with AVX2 the SwiGLU gate's
// forward runs 2.5x faster (docs/appendix-c-performance.md has the profile).
//
// Neither path uses FMA, and both run the same scalar program on each element
// (only the vector width differs; no reduction is reordered), so a kernel
// gives the same bits on either path: Simd.KernelsGiveTheSameBitsOnBothCompilations
// in tests/test_parallel.cpp runs the kernels and a training step both ways
// and compares. That keeps "same binary, same seeded numbers on every
// x86-64 machine" true.
//
//   simd::run_best([&] { for (...) out[i] = f(in[i]); });
//
// runs the lambda inlined into a function compiled for AVX2 when the CPU has
// it, else plainly. The lambda must be visible here (a template argument), so
// its loop is compiled for both targets.
#pragma once

namespace ropegrad::simd {

enum class Level { Baseline, Avx2 };

// What kernels use now: set_level(), else ROPEGRAD_SIMD (auto, avx2 or
// baseline), else the best the CPU supports.
Level level();
// The best the CPU running this supports.
Level best_supported();
// For tests and benchmarks: an error (naming simd) for Avx2 on a CPU without it.
void set_level(Level level);
const char* level_name(Level level);
// ROPEGRAD_SIMD's value: "", "auto", "avx2" or "baseline"; anything else is an
// error naming the variable and the value.
Level parse_level(const char* value);

#if defined(__x86_64__) || defined(__i386__)
// flatten: f and everything it calls is inlined here, so compiled for AVX2
// (without it GCC may leave a large lambda as a call to its baseline copy).
template <typename F>
[[gnu::target("avx2"), gnu::flatten]] void run_avx2(F& f) {
  f();
}
template <typename F>
inline void run_best(F&& f) {
  if (level() == Level::Avx2) run_avx2(f);
  else f();
}
#else
template <typename F>
inline void run_best(F&& f) {
  f();
}
#endif

}  // namespace ropegrad::simd
