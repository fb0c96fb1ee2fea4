// The geometry of the score kernels and a view of a broadcast mask, shared by
// the plain score -> softmax rows (nn/attention_scores.cpp) and their fast
// form (nn/fast/attention_scores_fast.h). Internal to nn/.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tensor/tensor.h"

namespace ropegrad::nn {

// B*H blocks of Nq rows of Nk scores.
struct Blocks {
  int64_t b, h, nq, nk;
};

// Mask element [b, h, m, n] of an expanded 4-D view (an undefined tensor: no mask).
struct MaskView {
  const std::byte* base = nullptr;
  int64_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;  // element strides
  explicit MaskView(const Tensor& t) {
    if (!t.defined()) return;
    base = t.raw_data();
    s0 = t.stride(0), s1 = t.stride(1), s2 = t.stride(2), s3 = t.stride(3);
  }
  template <typename T>
  const T* row(int64_t b, int64_t h, int64_t m) const {
    return reinterpret_cast<const T*>(base) + b * s0 + h * s1 + m * s2;
  }
};

}  // namespace ropegrad::nn
