// The SwiGLU gate silu(a) * b as the library runs it for speed
// (tensor/fast_forms.h): the sigmoid through fast_exp (tensor/fast_math.h,
// a branch-free exp the compiler vectorises; float64 keeps std::exp), and,
// when both gradients are wanted and g, a, b are float32 of one shape, both
// gradients in one pass over memory, split over the pool and compiled for
// AVX2 too. The plain form, the one chapter 8 derives, is in
// nn/swiglu_gate.cpp; this one agrees with it within float32 rounding
// (fast_exp is within 4 ulp of std::exp), and the one-pass backward equals
// this form's own two maps bit for bit (tests/test_fast_forms.cpp).
#pragma once

#include <utility>

#include "tensor/tensor.h"

namespace ropegrad::nn::fast {

// silu(a) * b with its backward attached, a and b broadcasting.
Tensor silu_mul(const Tensor& a, const Tensor& b);

// The one-pass backward's condition and the pass itself: (da, db) for the
// output gradient g; g, a, b float32 of one shape (an error otherwise).
bool silu_mul_backward_is_one_pass(const Tensor& g, const Tensor& a, const Tensor& b);
std::pair<Tensor, Tensor> silu_mul_grads_one_pass(const Tensor& g, const Tensor& a, const Tensor& b);

}  // namespace ropegrad::nn::fast
