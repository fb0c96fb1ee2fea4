// The feed-forward building blocks of CS336 assignment 1 (docs/appendix-a-formulas.md, building blocks):
// Linear, Embedding, RMSNorm, SwiGLU, and the plain SiLU feed-forward of the
// assignment's ablation (docs/17-language-model-and-decoding.md).
#pragma once

#include "nn/functional.h"
#include "nn/init.h"
#include "nn/module.h"

namespace ropegrad::nn {

// y = x W^T, no bias; W is (d_out, d_in). x (..., d_in) -> y (..., d_out).
// W^T is a transposed view: BLAS reads it with a transpose flag.
class Linear : public Module {
 public:
  Linear(int64_t d_in, int64_t d_out, Generator* gen = nullptr, DType dtype = kDefaultFloat);
  std::string type_name() const override { return "Linear"; }
  Tensor forward(const Tensor& x) const;
  Tensor weight;  // (d_out, d_in)
  int64_t d_in, d_out;
};

// Rows of a (V, D) table for int64 ids of any shape: (...) -> (..., D).
class Embedding : public Module {
 public:
  Embedding(int64_t num_embeddings, int64_t dim, Generator* gen = nullptr, DType dtype = kDefaultFloat);
  std::string type_name() const override { return "Embedding"; }
  Tensor forward(const Tensor& ids) const;
  Tensor weight;  // (V, D)
  int64_t num_embeddings, dim;
};

// y = x / sqrt(mean(x^2) + eps) * g over the last dim; g starts at 1.
class RMSNorm : public Module {
 public:
  explicit RMSNorm(int64_t dim, double eps = 1e-5, DType dtype = kDefaultFloat);
  std::string type_name() const override { return "RMSNorm"; }
  Tensor forward(const Tensor& x) const;
  Tensor weight;  // (D), the gain g
  double eps;
};

// What a transformer block needs of its feed-forward: x (..., D) -> (..., D).
class FeedForward : public Module {
 public:
  virtual Tensor forward(const Tensor& x) const = 0;
};

// FFN(x) = W2 (SiLU(W1 x) * W3 x); W1, W3: (d_ff, D), W2: (D, d_ff).
class SwiGLU : public FeedForward {
 public:
  // d_ff <= 0 picks the default: 8/3 D rounded up to a multiple of 64.
  SwiGLU(int64_t dim, int64_t d_ff = 0, Generator* gen = nullptr, DType dtype = kDefaultFloat);
  std::string type_name() const override { return "SwiGLU"; }
  Tensor forward(const Tensor& x) const override;
  static int64_t default_d_ff(int64_t dim);
  std::shared_ptr<Linear> w1, w2, w3;
};

// FFN(x) = W2 SiLU(W1 x), no gate; W1: (d_ff, D), W2: (D, d_ff). Two matrices
// where SwiGLU has three, so its default d_ff = 4 D gives 8 D^2 parameters,
// SwiGLU's 3 D (8/3 D) (before SwiGLU's rounding up to a multiple of 64).
class SiLUFeedForward : public FeedForward {
 public:
  // d_ff <= 0 picks the default 4 D.
  SiLUFeedForward(int64_t dim, int64_t d_ff = 0, Generator* gen = nullptr, DType dtype = kDefaultFloat);
  std::string type_name() const override { return "SiLUFeedForward"; }
  Tensor forward(const Tensor& x) const override;
  static int64_t default_d_ff(int64_t dim) { return 4 * dim; }
  std::shared_ptr<Linear> w1, w2;
};

}  // namespace ropegrad::nn
