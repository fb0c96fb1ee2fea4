// Initialisation (docs/appendix-a-formulas.md, building blocks, CS336 §3.4.1): truncated normals.
#pragma once

#include "tensor/random.h"

namespace ropegrad::nn::init {

// Linear weight (d_out, d_in): N(0, 2 / (d_in + d_out)) cut at +-3 sigma.
Tensor linear_weight(int64_t d_out, int64_t d_in, Generator* gen = nullptr, DType dtype = kDefaultFloat);
// Embedding weight (V, D): N(0, 1) cut at +-3.
Tensor embedding_weight(int64_t num_embeddings, int64_t dim, Generator* gen = nullptr, DType dtype = kDefaultFloat);

}  // namespace ropegrad::nn::init
