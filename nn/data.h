// Language-model batches from one long token array (CS336's get_batch).
#pragma once

#include <cstdint>
#include <utility>

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ropegrad::nn {

// tokens: 1-D int64 of length n >= context_length + 1 (any strides).
// Draws batch_size start offsets s_b uniformly from [0, n - T - 1]
// (T = context_length), one gen.integer() each, in order, and returns
//   x (B, T) int64: x[b, j] = tokens[s_b + j]
//   y (B, T) int64: y[b, j] = tokens[s_b + j + 1]   (x shifted by one)
// The same generator state gives the same batch.
std::pair<Tensor, Tensor> get_batch(const Tensor& tokens, int64_t batch_size,
                                    int64_t context_length, Generator& gen);

}  // namespace ropegrad::nn
