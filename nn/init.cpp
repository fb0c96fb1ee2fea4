#include "nn/init.h"
#include "tensor/exercise.h"

#include <cmath>

namespace ropegrad::nn::init {

Tensor linear_weight(int64_t d_out, int64_t d_in, Generator* gen, DType dtype) {
  RG_CHECK(d_out > 0 && d_in > 0, "linear_weight", "sizes must be positive, got d_out={}, d_in={}", d_out, d_in);
  // BEGIN EXERCISE ex06-linear
  const double std = std::sqrt(2.0 / static_cast<double>(d_in + d_out));
  return trunc_normal({d_out, d_in}, 0.0, std, -3 * std, 3 * std, dtype, gen);
  // END EXERCISE ex06-linear
}

Tensor embedding_weight(int64_t num_embeddings, int64_t dim, Generator* gen, DType dtype) {
  RG_CHECK(num_embeddings > 0 && dim > 0, "embedding_weight", "sizes must be positive, got {} x {}", num_embeddings,
           dim);
  return trunc_normal({num_embeddings, dim}, 0.0, 1.0, -3.0, 3.0, dtype, gen);
}

}  // namespace ropegrad::nn::init
