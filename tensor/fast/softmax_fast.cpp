// Softmax rows with vectorisable max and exp, compiled for AVX2 too (tensor/fast/softmax_fast.h).
#include "tensor/fast/softmax_fast.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "tensor/fast_math.h"
#include "tensor/simd.h"

namespace ropegrad::kernels::fast {

template <typename T>
void softmax_rows(const T* x_rows, T* y_rows, int64_t lo, int64_t hi, int64_t n) {
  simd::run_best([&] {
    for (int64_t r = lo; r < hi; ++r) {
      const T* x = x_rows + r * n;
      T* y = y_rows + r * n;
      const T m = max_of(x, n);
      // A row of -inf (every key masked) has no finite max: give zeros, not NaN.
      if (m == -std::numeric_limits<T>::infinity()) {
        std::fill(y, y + n, T(0));
        continue;
      }
      T total = 0;
      for (int64_t j = 0; j < n; ++j) total += (y[j] = fast_exp(x[j] - m));
      const T inv = T(1) / total;
      for (int64_t j = 0; j < n; ++j) y[j] *= inv;
    }
  });
}

template <typename T>
void log_softmax_rows(const T* x_rows, T* y_rows, int64_t lo, int64_t hi, int64_t n) {
  simd::run_best([&] {
    for (int64_t r = lo; r < hi; ++r) {
      const T* x = x_rows + r * n;
      T* y = y_rows + r * n;
      const T m = max_of(x, n);
      if (m == -std::numeric_limits<T>::infinity()) {  // log of an empty distribution
        std::fill(y, y + n, -std::numeric_limits<T>::infinity());
        continue;
      }
      T total = 0;
      for (int64_t j = 0; j < n; ++j) total += fast_exp(x[j] - m);
      const T log_total = std::log(total);
      for (int64_t j = 0; j < n; ++j) y[j] = (x[j] - m) - log_total;
    }
  });
}

template <typename T>
void softmax_backward_rows(const T* y_rows, const T* g_rows, T* gx_rows, int64_t lo, int64_t hi, int64_t n) {
  simd::run_best([&] {
    for (int64_t r = lo; r < hi; ++r) {
      const T* yr = y_rows + r * n;
      const T* g = g_rows + r * n;
      T* gx = gx_rows + r * n;
      T dot = 0;
      for (int64_t j = 0; j < n; ++j) dot += g[j] * yr[j];
      for (int64_t j = 0; j < n; ++j) gx[j] = yr[j] * (g[j] - dot);
    }
  });
}

template <typename T>
void log_softmax_backward_rows(const T* y_rows, const T* g_rows, T* gx_rows, int64_t lo, int64_t hi, int64_t n) {
  simd::run_best([&] {
    for (int64_t r = lo; r < hi; ++r) {
      const T* yr = y_rows + r * n;
      const T* g = g_rows + r * n;
      T* gx = gx_rows + r * n;
      T total = 0;
      for (int64_t j = 0; j < n; ++j) total += g[j];
      for (int64_t j = 0; j < n; ++j) gx[j] = g[j] - fast_exp(yr[j]) * total;
    }
  });
}

#define ROPEGRAD_SOFTMAX_ROWS(T)                                                              \
  template void softmax_rows<T>(const T*, T*, int64_t, int64_t, int64_t);                     \
  template void log_softmax_rows<T>(const T*, T*, int64_t, int64_t, int64_t);                 \
  template void softmax_backward_rows<T>(const T*, const T*, T*, int64_t, int64_t, int64_t); \
  template void log_softmax_backward_rows<T>(const T*, const T*, T*, int64_t, int64_t, int64_t);
ROPEGRAD_SOFTMAX_ROWS(float)
ROPEGRAD_SOFTMAX_ROWS(double)
#undef ROPEGRAD_SOFTMAX_ROWS

}  // namespace ropegrad::kernels::fast
