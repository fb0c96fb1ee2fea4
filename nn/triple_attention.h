// Triple-product (Gram determinant) attention (docs/appendix-a-formulas.md, triple-product attention).
//
// Query i carries two vectors, q_i and a reference r_i; key j matches when it
// lies in the plane they span. The score is minus the squared volume of the
// parallelepiped (q_i, k_j, r_i) — the Gram determinant — scaled by dh^-1.5
// (the determinant has degree 6 in the vectors, a dot product degree 2).
// RoPE rotates q, k and r (r at the query's position).
#pragma once

#include "nn/attention.h"
#include "nn/attention_scores.h"

namespace ropegrad::nn {

class TripleAttention : public AttentionLayer {
 public:
  TripleAttention(int64_t d_model, int64_t num_heads, std::shared_ptr<RotaryEmbedding> rope = nullptr,
                  Generator* gen = nullptr, DType dtype = kDefaultFloat, double dropout = 0.0);
  std::string type_name() const override { return "TripleAttention"; }
  Tensor forward(const Tensor& x, const AttentionCall& call) override;

  int64_t d_model, num_heads, head_dim;
  double dropout_p;
  std::shared_ptr<Linear> q_proj, k_proj, r_proj, v_proj, output_proj;
  std::shared_ptr<RotaryEmbedding> rope;
};

// The Gram-determinant score of single vectors: -det G(q, k, r) (unscaled).
double gram_score(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& r);

}  // namespace ropegrad::nn
