// Language-model batches from one long token array (CS336's get_batch).
#pragma once

#include <cstdint>
#include <utility>

#include "tensor/random.h"
#include "tensor/tensor.h"

namespace ropegrad::nn {

class TokenMemmap;  // io/token_memmap.h

// tokens: 1-D int64 of length n >= context_length + 1 (any strides).
// Draws batch_size start offsets s_b uniformly from [0, n - T - 1]
// (T = context_length), one gen.integer() each, in order, and returns
//   x (B, T) int64: x[b, j] = tokens[s_b + j]
//   y (B, T) int64: y[b, j] = tokens[s_b + j + 1]   (x shifted by one)
// The same generator state gives the same batch. Another dtype is an Error:
// ids stored as uint16 or int32 are read through a TokenMemmap (below).
std::pair<Tensor, Tensor> get_batch(const Tensor& tokens, int64_t batch_size,
                                    int64_t context_length, Generator& gen);

// The same over a memory-mapped .npy of uint16, int32 or int64 ids, which is
// never read whole: the same draws and windows as the int64 tensor of the
// same ids, x and y int64. A negative id in a sampled window is an Error
// naming the file and the position (TokenMemmap::check_ids checks a whole
// file against a vocabulary once).
std::pair<Tensor, Tensor> get_batch(const TokenMemmap& tokens, int64_t batch_size,
                                    int64_t context_length, Generator& gen);

}  // namespace ropegrad::nn
