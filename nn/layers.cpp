#include "nn/layers.h"
#include "tensor/exercise.h"

namespace ropegrad::nn {

Linear::Linear(int64_t d_in_, int64_t d_out_, Generator* gen, DType dtype) : d_in(d_in_), d_out(d_out_) {
  weight = register_parameter("weight", init::linear_weight(d_out, d_in, gen, dtype));
}

Tensor Linear::forward(const Tensor& x) const {
  RG_CHECK(x.dim() >= 1 && x.size(-1) == d_in, "Linear",
           "input of shape {} does not end in d_in = {} (weight is (d_out, d_in) = {})", shape_str(x.shape()), d_in,
           shape_str(weight.shape()));
  // BEGIN EXERCISE ex06-linear
  return matmul(x, transpose(weight, 0, 1));  // (..., d_in) @ (d_in, d_out)
  // END EXERCISE ex06-linear
}

Embedding::Embedding(int64_t v, int64_t d, Generator* gen, DType dtype) : num_embeddings(v), dim(d) {
  weight = register_parameter("weight", init::embedding_weight(v, d, gen, dtype));
}

Tensor Embedding::forward(const Tensor& ids) const { return embedding(ids, weight); }

RMSNorm::RMSNorm(int64_t dim, double eps_, DType dtype) : eps(eps_) {
  RG_CHECK(dim > 0, "RMSNorm", "dim must be positive, got {}", dim);
  weight = register_parameter("weight", ones({dim}, dtype));
}

Tensor RMSNorm::forward(const Tensor& x) const { return rms_norm(x, weight, eps); }

int64_t SwiGLU::default_d_ff(int64_t dim) {
  const int64_t raw = (8 * dim + 2) / 3;  // ceil(8/3 D)
  return (raw + 63) / 64 * 64;
}

SwiGLU::SwiGLU(int64_t dim, int64_t d_ff, Generator* gen, DType dtype) {
  if (d_ff <= 0) d_ff = default_d_ff(dim);
  w1 = register_module("w1", std::make_shared<Linear>(dim, d_ff, gen, dtype));
  w2 = register_module("w2", std::make_shared<Linear>(d_ff, dim, gen, dtype));
  w3 = register_module("w3", std::make_shared<Linear>(dim, d_ff, gen, dtype));
}

Tensor SwiGLU::forward(const Tensor& x) const {
  return w2->forward(silu_mul(w1->forward(x), w3->forward(x)));  // (..., D) -> (..., d_ff) -> (..., D)
}

SiLUFeedForward::SiLUFeedForward(int64_t dim, int64_t d_ff, Generator* gen, DType dtype) {
  if (d_ff <= 0) d_ff = default_d_ff(dim);
  w1 = register_module("w1", std::make_shared<Linear>(dim, d_ff, gen, dtype));
  w2 = register_module("w2", std::make_shared<Linear>(d_ff, dim, gen, dtype));
}

Tensor SiLUFeedForward::forward(const Tensor& x) const {
  return w2->forward(silu(w1->forward(x)));  // (..., D) -> (..., d_ff) -> (..., D)
}

}  // namespace ropegrad::nn
