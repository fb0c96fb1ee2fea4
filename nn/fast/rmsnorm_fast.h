// RMSNorm's forward and backward kernels as the library runs them for speed
// (tensor/fast_forms.h): rows across the thread pool, the sums of squares and
// the backward's dot product in four running double sums (dot_in_double,
// tensor/fast_math.h), each loop compiled for AVX2 too. The plain form, the
// one chapter 7 derives and a learner writes, is in nn/rmsnorm.cpp; this one
// computes the same formulas and agrees with it within a float32 rounding
// (FastForms.RmsNormEqualsThePlainForm in tests/test_fast_forms.cpp: the
// double sums add in another order, so r can differ in its last bit).
#pragma once

#include <cstdint>

namespace ropegrad::nn::fast {

// x, y: (rows, d); g: (d); inv_rms: (rows), the 1 / rms of each row.
template <typename T>
void rms_norm_forward(const T* x, const T* g, T* y, T* inv_rms, int64_t rows, int64_t d, double eps);

// dx (rows, d) when not null; dg (d) accumulated in double when not null.
template <typename T>
void rms_norm_backward(const T* x, const T* g, const T* inv_rms, const T* dy, T* dx, double* dg, int64_t rows,
                       int64_t d);

}  // namespace ropegrad::nn::fast
