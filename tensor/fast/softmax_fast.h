// The softmax and log_softmax rows, and their backward rows, as the library
// runs them for speed (tensor/fast_forms.h): the row maximum from eight
// running maxima (max_of) and the exponentials through fast_exp
// (tensor/fast_math.h), each block of rows compiled for AVX2 too. The plain
// form, the one chapter 12 derives (std::exp, one running maximum), is in
// tensor/softmax.cpp; this one agrees with it within the float32 error of
// fast_exp (4 ulp) and is the same for float64, where fast_exp is std::exp
// (tests/test_fast_forms.cpp).
//
// Each function handles rows [lo, hi) of n contiguous values: x, y, g and the
// results point at row 0.
#pragma once

#include <cstdint>

namespace ropegrad::kernels::fast {

template <typename T>
void softmax_rows(const T* x, T* y, int64_t lo, int64_t hi, int64_t n);
template <typename T>
void log_softmax_rows(const T* x, T* y, int64_t lo, int64_t hi, int64_t n);
// gx = y (g - <g, y>) per row.
template <typename T>
void softmax_backward_rows(const T* y, const T* g, T* gx, int64_t lo, int64_t hi, int64_t n);
// gx = g - exp(y) sum(g) per row, y = log_softmax(x).
template <typename T>
void log_softmax_backward_rows(const T* y, const T* g, T* gx, int64_t lo, int64_t hi, int64_t n);

}  // namespace ropegrad::kernels::fast
