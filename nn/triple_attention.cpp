#include "nn/triple_attention.h"

#include <cmath>

#include "nn/attention_path.h"

namespace ropegrad::nn {

TripleAttention::TripleAttention(int64_t d_model_, int64_t num_heads_, std::shared_ptr<RotaryEmbedding> rope_,
                                 Generator* gen, DType dtype, double dropout)
    : d_model(d_model_), num_heads(num_heads_), head_dim(0), dropout_p(dropout), rope(std::move(rope_)) {
  head_dim = attention_head_dim(d_model, num_heads, rope.get(), "TripleAttention");
  q_proj = register_module("q_proj", std::make_shared<Linear>(d_model, d_model, gen, dtype));
  k_proj = register_module("k_proj", std::make_shared<Linear>(d_model, d_model, gen, dtype));
  r_proj = register_module("r_proj", std::make_shared<Linear>(d_model, d_model, gen, dtype));
  v_proj = register_module("v_proj", std::make_shared<Linear>(d_model, d_model, gen, dtype));
  output_proj = register_module("output_proj", std::make_shared<Linear>(d_model, d_model, gen, dtype));
}

Tensor TripleAttention::forward(const Tensor& x, const AttentionCall& call) {
  check_attention_input(x, d_model, "TripleAttention");
  RG_CHECK(call.cache == nullptr, "TripleAttention", "the key/value cache is implemented for standard attention only");
  Tensor q = split_heads(q_proj->forward(x), num_heads);  // (B, H, T, dh)
  Tensor k = split_heads(k_proj->forward(x), num_heads);
  Tensor r = split_heads(r_proj->forward(x), num_heads);
  const Tensor v = split_heads(v_proj->forward(x), num_heads);
  if (rope) {
    q = rope->forward(q, call.positions, false);
    k = rope->forward(k, call.positions, true);
    r = rope->forward(r, call.positions, false);  // the reference sits at the query's position
  }
  const double scale = std::pow(static_cast<double>(head_dim), -1.5);
  const ScoreMask mask{call.mask, call.is_causal, 0};
  // Long contexts: the output without the (B, H, T, T) weights (nn/attention_path.h).
  if (auto out = triple_attention_if_tiled(q, k, r, v, scale, mask,
                                           call.weights != nullptr || (is_training() && dropout_p > 0))) {
    return output_proj->forward(merge_heads(*out));
  }
  Tensor p = triple_attention_probs(q, k, r, scale, mask);
  p = dropout(p, dropout_p, is_training());
  if (call.weights != nullptr) *call.weights = p;  // the weights that multiplied v
  return output_proj->forward(merge_heads(matmul(p, v)));
}

double gram_score(const std::vector<double>& q, const std::vector<double>& k, const std::vector<double>& r) {
  RG_CHECK(q.size() == k.size() && k.size() == r.size(), "gram_score", "vectors differ in length: {}, {}, {}",
           q.size(), k.size(), r.size());
  const auto dot = [](const std::vector<double>& a, const std::vector<double>& b) {
    double s = 0;
    for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
    return s;
  };
  const double qq = dot(q, q), kk = dot(k, k), rr = dot(r, r), qk = dot(q, k), kr = dot(k, r), rq = dot(r, q);
  return -(qq * kk * rr + 2 * qk * kr * rq - qq * kr * kr - kk * rq * rq - rr * qk * qk);
}

}  // namespace ropegrad::nn
