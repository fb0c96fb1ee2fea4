// AdamW's update as the library runs it for speed (tensor/fast_forms.h): the
// elements split over the pool and compiled for AVX2 too, with __restrict
// pointers and a sqrt the compiler can inline. On the 14M parameters of the
// Wide benchmark model this took the update from 0.66 to 0.39 % of a
// one-thread step, and out of the serial part of a two-thread one. The plain
// form (optim/optim.cpp, chapter 13) runs the same expressions in the same
// order, so the values are the same bit for bit (tests/test_fast_forms.cpp).
#pragma once

#include <cstdint>

#include "optim/optim.h"

namespace ropegrad::nn::fast {

// p, m, v updated in place from the gradient g; n elements each.
template <typename T>
void adamw_update(T* p, const T* g, T* m, T* v, int64_t n, const AdamStepScalars<T>& c);

}  // namespace ropegrad::nn::fast
