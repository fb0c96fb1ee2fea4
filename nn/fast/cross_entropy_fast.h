// Cross-entropy's backward rows as the library runs them for speed
// (tensor/fast_forms.h): dz = (exp(log p) - onehot(t)) * scale, with the
// exponentials through fast_exp (tensor/fast_math.h), rows over the pool and
// compiled for AVX2 too. The plain form (nn/cross_entropy.cpp, chapter 13)
// uses std::exp; this one agrees with it within fast_exp's 4 ulp, and is the
// same for float64 (tests/test_fast_forms.cpp).
#pragma once

#include <cstdint>

namespace ropegrad::nn::fast {

// logp, dz: (n, v) contiguous; targets: (n); rows whose target is
// ignore_index get zeros.
template <typename T>
void cross_entropy_grad(const T* logp, const int64_t* targets, T* dz, int64_t n, int64_t v, T scale,
                        int64_t ignore_index);

}  // namespace ropegrad::nn::fast
