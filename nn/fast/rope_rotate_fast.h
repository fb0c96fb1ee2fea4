// RoPE's rotation in one pass over memory, for a contiguous float32 x (rows
// of T positions, dh values) and contiguous (T, dh/2) cos and sin tables: the
// case of every training step (tensor/fast_forms.h). The plain form
// (nn/rope_rotate.cpp, chapter 9) runs two maps over strided views of the
// pairs, a generic scalar loop; this one reads each pair once and, compiled
// for AVX2 too, vectorises. Its expressions are those of the plain form's
// maps, so the values are the same bit for bit (tests/test_fast_forms.cpp).
#pragma once

#include <cstdint>

#include "nn/functional.h"

namespace ropegrad::nn::fast {

// Whether the one-pass rotation applies: x float32, contiguous, (..., T, dh)
// with dh even; cos and sin contiguous float32 (T, dh/2) tables.
bool rope_rotate_is_one_pass(const Tensor& x, const Tensor& cos, const Tensor& sin);

// out = x rotated by (cos, sign * sin): rows = x.numel() / dh, t = T, half = dh / 2.
void rotate_one_pass(const float* x, const float* cos, const float* sin, float* out, int64_t rows, int64_t t,
                     int64_t half, RopePairing pairing, float sign);

}  // namespace ropegrad::nn::fast
