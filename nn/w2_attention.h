// Wasserstein-2 attention (docs/appendix-a-formulas.md, W2 attention).
//
// Inside the layer each token is a diagonal Gaussian N(mu, diag(sigma^2));
// the residual stream stays one vector. The score of query m and key n is
// minus the squared W2 distance between their Gaussians over a learnable
// per-head temperature:
//   S = -(|R mu_q - R mu_k|^2 + D_sigma^2) / (tau + eps),
// with RoPE (R) on the means only: sigma does not depend on position.
#pragma once

#include "nn/attention.h"
#include "nn/attention_scores.h"

namespace ropegrad::nn {

enum class SigmaMode {
  Scalar,  // one sigma per head per token: W_sigma (H, D); D_sigma^2 = dh (s_q - s_k)^2
  Vector,  // one sigma per dimension: W_sigma (D, D); D_sigma^2 = |s_q - s_k|^2
};

class W2Attention : public AttentionLayer {
 public:
  W2Attention(int64_t d_model, int64_t num_heads, std::shared_ptr<RotaryEmbedding> rope = nullptr,
              SigmaMode sigma = SigmaMode::Scalar, Generator* gen = nullptr, DType dtype = kDefaultFloat,
              double dropout = 0.0);
  std::string type_name() const override { return "W2Attention"; }
  Tensor forward(const Tensor& x, const AttentionCall& call) override;
  // tau = softplus(temperature), one per head; starts at sqrt(dh).
  Tensor temperatures() const;

  int64_t d_model, num_heads, head_dim;
  SigmaMode sigma_mode;
  double dropout_p;
  std::shared_ptr<Linear> q_proj, k_proj, v_proj, output_proj, sigma_q_proj, sigma_k_proj;
  Tensor temperature;  // (H), before softplus
  std::shared_ptr<RotaryEmbedding> rope;
};

}  // namespace ropegrad::nn
