// Cross-entropy's backward rows across the pool, compiled for AVX2 too (nn/fast/cross_entropy_fast.h).
#include "nn/fast/cross_entropy_fast.h"

#include <algorithm>

#include "tensor/fast_math.h"
#include "tensor/parallel.h"
#include "tensor/simd.h"

namespace ropegrad::nn::fast {

template <typename T>
void cross_entropy_grad(const T* lp, const int64_t* tgt, T* d, int64_t n, int64_t v, T scale, int64_t ignore_index) {
  parallel_for(0, n, std::max<int64_t>(1, 8192 / std::max<int64_t>(v, 1)), [&](int64_t lo, int64_t hi) {
    simd::run_best([&] {
      for (int64_t r = lo; r < hi; ++r) {
        T* row = d + r * v;
        if (tgt[r] == ignore_index) {
          std::fill(row, row + v, T(0));
          continue;
        }
        for (int64_t j = 0; j < v; ++j) row[j] = fast_exp(lp[r * v + j]) * scale;
        row[tgt[r]] -= scale;
      }
    });
  });
}

template void cross_entropy_grad<float>(const float*, const int64_t*, float*, int64_t, int64_t, float, int64_t);
template void cross_entropy_grad<double>(const double*, const int64_t*, double*, int64_t, int64_t, double, int64_t);

}  // namespace ropegrad::nn::fast
