#include "nn/w2_attention.h"

#include <cmath>

#include "nn/attention_path.h"

namespace ropegrad::nn {

W2Attention::W2Attention(int64_t d_model_, int64_t num_heads_, std::shared_ptr<RotaryEmbedding> rope_, SigmaMode sigma,
                         Generator* gen, DType dtype, double dropout)
    : d_model(d_model_), num_heads(num_heads_), head_dim(0), sigma_mode(sigma), dropout_p(dropout), rope(std::move(rope_)) {
  head_dim = attention_head_dim(d_model, num_heads, rope.get(), "W2Attention");
  q_proj = register_module("q_proj", std::make_shared<Linear>(d_model, d_model, gen, dtype));
  k_proj = register_module("k_proj", std::make_shared<Linear>(d_model, d_model, gen, dtype));
  v_proj = register_module("v_proj", std::make_shared<Linear>(d_model, d_model, gen, dtype));
  output_proj = register_module("output_proj", std::make_shared<Linear>(d_model, d_model, gen, dtype));
  const int64_t sigma_out = sigma == SigmaMode::Scalar ? num_heads : d_model;
  sigma_q_proj = register_module("sigma_q_proj", std::make_shared<Linear>(d_model, sigma_out, gen, dtype));
  sigma_k_proj = register_module("sigma_k_proj", std::make_shared<Linear>(d_model, sigma_out, gen, dtype));
  // softplus(t) = sqrt(dh)  <=>  t = log(e^sqrt(dh) - 1)
  const double t0 = std::log(std::expm1(std::sqrt(static_cast<double>(head_dim))));
  temperature = register_parameter("temperature", full({num_heads}, t0, dtype));
}

Tensor W2Attention::temperatures() const { return softplus(temperature); }

Tensor W2Attention::forward(const Tensor& x, const AttentionCall& call) {
  check_attention_input(x, d_model, "W2Attention");
  RG_CHECK(call.cache == nullptr, "W2Attention", "the key/value cache is implemented for standard attention only");
  Tensor mu_q = split_heads(q_proj->forward(x), num_heads);  // (B, H, T, dh)
  Tensor mu_k = split_heads(k_proj->forward(x), num_heads);
  const Tensor v = split_heads(v_proj->forward(x), num_heads);
  if (rope) {  // on the means only
    mu_q = rope->forward(mu_q, call.positions, false);
    mu_k = rope->forward(mu_k, call.positions, true);
  }
  Tensor sigma_q = softplus(sigma_q_proj->forward(x));  // (B, T, H) or (B, T, D), positive
  Tensor sigma_k = softplus(sigma_k_proj->forward(x));
  if (sigma_mode == SigmaMode::Scalar) {
    sigma_q = transpose(sigma_q, 1, 2);  // (B, H, T)
    sigma_k = transpose(sigma_k, 1, 2);
  } else {
    sigma_q = split_heads(sigma_q, num_heads);  // (B, H, T, dh)
    sigma_k = split_heads(sigma_k, num_heads);
  }
  const ScoreMask mask{call.mask, call.is_causal, 0};
  // Long contexts: the output without the (B, H, T, T) weights (nn/attention_path.h).
  if (auto out = w2_attention_if_tiled(mu_q, mu_k, sigma_q, sigma_k, temperatures(), v, mask,
                                       call.weights != nullptr || (is_training() && dropout_p > 0))) {
    return output_proj->forward(merge_heads(*out));
  }
  Tensor p = w2_attention_probs(mu_q, mu_k, sigma_q, sigma_k, temperatures(), mask);
  p = dropout(p, dropout_p, is_training());
  if (call.weights != nullptr) *call.weights = p;  // the weights that multiplied v
  return output_proj->forward(merge_heads(matmul(p, v)));  // (B, H, T, dh) -> (B, T, D)
}

}  // namespace ropegrad::nn
