// exp for float32 in a form the compiler can vectorise: range reduction
// x = n ln2 + r (|r| <= ln2 / 2), a degree-6 polynomial for e^r, and 2^n put
// into the exponent bits. Branch-free, so a loop of it becomes SIMD code;
// glibc's expf is a call per element. Accurate to about 4 ulp over the
// float range (checked against std::exp in tests/test_tensor.cpp); float64
// code keeps std::exp.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace ropegrad {

[[gnu::always_inline]] inline float fast_exp(float x) {
  // Below -87.33 the result is under the smallest normal float: return 0
  // (also for -inf); above 88.72 it overflows to inf, as std::exp does. The
  // comparisons are written so that NaN clamps to a finite value too: n must
  // be finite before it is converted to an integer (converting NaN is
  // undefined behaviour); NaN itself is returned at the end.
  float clamped = x > -87.33f ? x : -87.33f;
  clamped = clamped < 88.72f ? clamped : 88.72f;
  // Round x / ln2 to an integer by adding and removing 1.5 * 2^23: plain
  // SSE2 arithmetic (nearbyint would need SSE4.1 to vectorise).
  const float shifter = 12582912.0f;
  const float n = (clamped * 1.44269504088896341f + shifter) - shifter;
  // r = x - n ln2, with ln2 split in two so the product is exact.
  const float r = (clamped - n * 0.693145751953125f) - n * 1.428606765330187e-06f;
  // e^r on [-ln2/2, ln2/2]: Taylor to r^6 is within 1e-8 relative here.
  float p = 1.0f / 720.0f;
  p = p * r + 1.0f / 120.0f;
  p = p * r + 1.0f / 24.0f;
  p = p * r + 1.0f / 6.0f;
  p = p * r + 0.5f;
  p = p * r + 1.0f;
  p = p * r + 1.0f;
  const float scale = std::bit_cast<float>(static_cast<int32_t>(n + 127.0f) << 23);  // 2^n
  const float result = p * scale;
  return x < -87.33f ? 0.0f : (x > 88.72f ? INFINITY : (x == x ? result : x));  // x != x: NaN in, NaN out
}

// Other types (double, and integers the generic kernels instantiate) keep std::exp.
template <typename T>
T fast_exp(T x) {
  return static_cast<T>(std::exp(x));
}

// The largest of x[0], ..., x[n-1] (-inf for n = 0; NaN if any is NaN), in a
// form the compiler can vectorise: eight running maxima, combined at the end.
// A maximum is exact, so this is the value one running maximum would give;
// but that loop, m = max(m, x[j]), is a chain the compiler may not split
// (doing so would change which NaN wins), so it runs one compare per cycle
// at best. Used for the row maxima of softmax and the attention kernels.
template <typename T>
[[gnu::always_inline]] inline T max_of(const T* x, int64_t n) {
  // a, unless b is larger or a NaN: NaN sticks once it is in.
  const auto keep = [](T a, T b) { return (a >= b || a != a) ? a : b; };
  constexpr int64_t kLanes = 8;
  T lanes[kLanes];
  for (int64_t l = 0; l < kLanes; ++l) lanes[l] = -INFINITY;
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] = keep(lanes[l], x[j + l]);
  }
  for (; j < n; ++j) lanes[0] = keep(lanes[0], x[j]);
  T m = lanes[0];
  for (int64_t l = 1; l < kLanes; ++l) m = keep(m, lanes[l]);
  return m;
}

// The sum of x[0], ..., x[n-1] (0 for n = 0) from eight running sums,
// combined in lane order at the end: the compiler turns it into SIMD code,
// where one running sum is a chain of dependent adds. Not the in-order sum's
// bits, but the same on every machine (the eight are part of the program).
// Used for the row sums of the tiled attention kernels' online softmax.
template <typename T>
[[gnu::always_inline]] inline T sum_of(const T* x, int64_t n) {
  constexpr int64_t kLanes = 8;
  T lanes[kLanes] = {};
  int64_t j = 0;
  for (; j + kLanes <= n; j += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lanes[l] += x[j + l];
  }
  for (; j < n; ++j) lanes[0] += x[j];
  T sum = 0;
  for (int64_t l = 0; l < kLanes; ++l) sum += lanes[l];
  return sum;
}

// sum_i x[i] y[i] (and sum_i x[i] y[i] z[i]) accumulated in double, from
// four running sums combined at the end: the compiler keeps the four in one
// AVX2 vector of doubles, where a single running sum would be a chain of
// dependent adds, one every four cycles. The four are a fixed part of the
// program, so the result does not depend on the machine or the vector width.
// For float inputs each product x[i] y[i] is exact in double. Used by
// RMSNorm's sum of squares and its backward's dot product.
template <typename T>
[[gnu::always_inline]] inline double dot_in_double(const T* x, const T* y, int64_t n) {
  double lanes[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int64_t l = 0; l < 4; ++l) lanes[l] += static_cast<double>(x[i + l]) * y[i + l];
  }
  for (; i < n; ++i) lanes[0] += static_cast<double>(x[i]) * y[i];
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}
template <typename T>
[[gnu::always_inline]] inline double dot_in_double(const T* x, const T* y, const T* z, int64_t n) {
  double lanes[4] = {0, 0, 0, 0};
  int64_t i = 0;
  for (; i + 4 <= n; i += 4) {
    for (int64_t l = 0; l < 4; ++l) lanes[l] += static_cast<double>(x[i + l]) * y[i + l] * z[i + l];
  }
  for (; i < n; ++i) lanes[0] += static_cast<double>(x[i]) * y[i] * z[i];
  return (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
}

}  // namespace ropegrad
