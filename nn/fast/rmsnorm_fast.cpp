// RMSNorm's kernels across the pool and compiled for AVX2 too (nn/fast/rmsnorm_fast.h).
#include "nn/fast/rmsnorm_fast.h"

#include <algorithm>
#include <cmath>

#include "tensor/fast_math.h"
#include "tensor/parallel.h"
#include "tensor/simd.h"

namespace ropegrad::nn::fast {

namespace {
// Rows per part of the pool's work: about 8192 elements.
int64_t row_grain(int64_t d) { return std::max<int64_t>(1, 8192 / std::max<int64_t>(d, 1)); }
}  // namespace

template <typename T>
void rms_norm_forward(const T* x, const T* g, T* y, T* inv_rms, int64_t rows, int64_t d, double eps) {
  parallel_for(0, rows, row_grain(d), [&](int64_t lo, int64_t hi) {
    simd::run_best([&] {
      for (int64_t r = lo; r < hi; ++r) {
        const T* xr = x + r * d;
        const double ss = dot_in_double(xr, xr, d);  // sum of squares
        const T inv = static_cast<T>(1.0 / std::sqrt(ss / static_cast<double>(d) + eps));
        inv_rms[r] = inv;
        T* yr = y + r * d;
        for (int64_t i = 0; i < d; ++i) yr[i] = xr[i] * inv * g[i];
      }
    });
  });
}

template <typename T>
void rms_norm_backward(const T* x, const T* g, const T* inv_rms, const T* dy, T* dx, double* dg, int64_t rows,
                       int64_t d) {
  if (dx != nullptr) {  // rows are independent: across the thread pool
    parallel_for(0, rows, row_grain(d), [&](int64_t lo, int64_t hi) {
      simd::run_best([&] {
        for (int64_t r = lo; r < hi; ++r) {
          const T* xr = x + r * d;
          const T* dyr = dy + r * d;
          const T inv = inv_rms[r];
          const double dot = dot_in_double(dyr, g, xr, d);  // sum_j dy_j g_j x_j
          const T coef = static_cast<T>(dot * inv * inv * inv / static_cast<double>(d));
          T* dxr = dx + r * d;
          for (int64_t i = 0; i < d; ++i) dxr[i] = inv * g[i] * dyr[i] - xr[i] * coef;
        }
      });
    });
  }
  if (dg != nullptr) {  // sums over rows: columns across the pool, each summed over the rows in order
    parallel_for(0, d, std::max<int64_t>(8, 65536 / std::max<int64_t>(rows, 1)), [&](int64_t lo, int64_t hi) {
      simd::run_best([&] {
        for (int64_t r = 0; r < rows; ++r) {
          const T* xr = x + r * d;
          const T* dyr = dy + r * d;
          const T inv = inv_rms[r];
          for (int64_t i = lo; i < hi; ++i) dg[i] += static_cast<double>(dyr[i]) * xr[i] * inv;
        }
      });
    });
  }
}

template void rms_norm_forward<float>(const float*, const float*, float*, float*, int64_t, int64_t, double);
template void rms_norm_forward<double>(const double*, const double*, double*, double*, int64_t, int64_t, double);
template void rms_norm_backward<float>(const float*, const float*, const float*, const float*, float*, double*,
                                       int64_t, int64_t);
template void rms_norm_backward<double>(const double*, const double*, const double*, const double*, double*, double*,
                                        int64_t, int64_t);

}  // namespace ropegrad::nn::fast
