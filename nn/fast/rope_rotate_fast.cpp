// RoPE's rotation in one pass over memory (nn/fast/rope_rotate_fast.h).
#include "nn/fast/rope_rotate_fast.h"

#include <algorithm>

#include "tensor/elementwise.h"
#include "tensor/parallel.h"
#include "tensor/simd.h"

namespace ropegrad::nn::fast {

bool rope_rotate_is_one_pass(const Tensor& x, const Tensor& cos, const Tensor& sin) {
  if (x.dtype() != DType::Float32 || cos.dtype() != DType::Float32 || sin.dtype() != DType::Float32) return false;
  if (x.dim() < 2 || x.size(-1) % 2 != 0 || !x.is_contiguous() || !cos.is_contiguous() || !sin.is_contiguous()) {
    return false;
  }
  const Shape table{x.size(-2), x.size(-1) / 2};
  return cos.shape() == table && sin.shape() == table;
}

void rotate_one_pass(const float* x, const float* cos, const float* sin, float* out, int64_t rows, int64_t t,
                     int64_t half, RopePairing pairing, float sign) {
  // One row of dh values: pair p is (a, b) at (2p, 2p + 1) interleaved, at
  // (p, p + half) split; the offsets are constants of each loop, so both
  // vectorise. s and half are locals: read through the lambda's captures they
  // would have to be re-read after every store.
  const auto rotate_row = [](const float* xr, const float* c, const float* sn, float* yr, int64_t half_, float s,
                             bool interleaved) {
    if (interleaved) {
      for (int64_t p = 0; p < half_; ++p) {
        const float xr_p = xr[2 * p], xi_p = xr[2 * p + 1], yr_p = c[p], yi_p = sn[p];
        yr[2 * p] = xr_p * yr_p - xi_p * (s * yi_p);
        yr[2 * p + 1] = xr_p * (s * yi_p) + xi_p * yr_p;
      }
    } else {
      for (int64_t p = 0; p < half_; ++p) {
        const float xr_p = xr[p], xi_p = xr[p + half_], yr_p = c[p], yi_p = sn[p];
        yr[p] = xr_p * yr_p - xi_p * (s * yi_p);
        yr[p + half_] = xr_p * (s * yi_p) + xi_p * yr_p;
      }
    }
  };
  const bool interleaved = pairing == RopePairing::Interleaved;
  parallel_for(0, rows, std::max<int64_t>(1, kernels::kParallelGrain / std::max<int64_t>(2 * half, 1)),
               [&](int64_t lo, int64_t hi) {
                 simd::run_best([&] {
                   for (int64_t r = lo; r < hi; ++r) {
                     const int64_t table_row = (r % t) * half;
                     rotate_row(x + r * 2 * half, cos + table_row, sin + table_row, out + r * 2 * half, half, sign,
                                interleaved);
                   }
                 });
               });
}

}  // namespace ropegrad::nn::fast
