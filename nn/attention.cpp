#include "nn/attention.h"

#include "tensor/exercise.h"

namespace ropegrad::nn {

MultiHeadAttention::MultiHeadAttention(int64_t d_model_, int64_t num_heads_, std::shared_ptr<RotaryEmbedding> rope_,
                                       Generator* gen, DType dtype, double dropout)
    : d_model(d_model_), num_heads(num_heads_), head_dim(0), dropout_p(dropout), rope(std::move(rope_)) {
  head_dim = attention_head_dim(d_model, num_heads, rope.get(), "MultiHeadAttention");
  q_proj = register_module("q_proj", std::make_shared<Linear>(d_model, d_model, gen, dtype));
  k_proj = register_module("k_proj", std::make_shared<Linear>(d_model, d_model, gen, dtype));
  v_proj = register_module("v_proj", std::make_shared<Linear>(d_model, d_model, gen, dtype));
  output_proj = register_module("output_proj", std::make_shared<Linear>(d_model, d_model, gen, dtype));
}

int64_t attention_head_dim(int64_t d_model, int64_t num_heads, const RotaryEmbedding* rope, const char* op) {
  RG_CHECK(num_heads > 0 && d_model > 0 && d_model % num_heads == 0, op,
           "d_model {} must be a positive multiple of num_heads {}", d_model, num_heads);
  const int64_t head_dim = d_model / num_heads;
  RG_CHECK(rope == nullptr || rope->config().head_dim == head_dim, op,
           "the RoPE table is for head_dim {}, but d_model {} / num_heads {} = {}",
           rope ? rope->config().head_dim : 0, d_model, num_heads, head_dim);
  return head_dim;
}

void check_attention_input(const Tensor& x, int64_t d_model, const char* op) {
  RG_CHECK(x.dim() == 3 && x.size(2) == d_model, op, "input must be (B, T, D) with D = {}, got shape {}", d_model,
           shape_str(x.shape()));
}

Tensor split_heads(const Tensor& x, int64_t num_heads) {
  // BEGIN EXERCISE ex12-multihead
  const int64_t b = x.size(0), t = x.size(1);
  return transpose(view(x, {b, t, num_heads, x.size(2) / num_heads}), 1, 2);  // a view: (B, H, T, dh)
  // END EXERCISE ex12-multihead
}

Tensor merge_heads(const Tensor& x) {
  // BEGIN EXERCISE ex12-multihead
  const int64_t b = x.size(0), t = x.size(2);
  return reshape(transpose(x, 1, 2), {b, t, x.size(1) * x.size(3)});  // (B, T, H, dh) -> (B, T, D)
  // END EXERCISE ex12-multihead
}

Tensor MultiHeadAttention::forward(const Tensor& x, const AttentionCall& call) {
  check_attention_input(x, d_model, "MultiHeadAttention");
  const int64_t t = x.size(1);
  const int64_t past = call.cache != nullptr ? call.cache->length() : 0;
  Tensor positions = call.positions;
  if (!positions.defined() && past > 0) positions = arange(past, past + t);
  Tensor q = split_heads(q_proj->forward(x), num_heads);  // (B, H, T, dh)
  Tensor k = split_heads(k_proj->forward(x), num_heads);
  Tensor v = split_heads(v_proj->forward(x), num_heads);
  // BEGIN EXERCISE ex12-multihead
  if (rope) {  // positions only: q and k are rotated, v is not
    q = rope->forward(q, positions, /*is_key=*/false);
    k = rope->forward(k, positions, /*is_key=*/true);
  }
  // END EXERCISE ex12-multihead
  if (call.cache != nullptr) {
    KVCache& cache = *call.cache;
    if (cache.length() > 0) {
      RG_CHECK(cache.k.size(0) == k.size(0), "MultiHeadAttention", "cache holds batch {} but the input has batch {}",
               cache.k.size(0), k.size(0));
      k = cat({cache.k, k}, 2);  // (B, H, L + T, dh)
      v = cat({cache.v, v}, 2);
    }
    cache.k = k;
    cache.v = v;
  }
  AttentionOptions options;
  options.mask = call.mask;
  options.causal = call.is_causal;
  options.causal_offset = past;  // query i sits at position past + i
  options.dropout_p = dropout_p;
  options.training = is_training();
  // BEGIN EXERCISE ex12-multihead
  return output_proj->forward(merge_heads(scaled_dot_product_attention(q, k, v, options, call.weights)));
  // END EXERCISE ex12-multihead
}

Tensor MultiHeadAttention::forward(const Tensor& query, const Tensor& key, const Tensor& value,
                                   const AttentionCall& call) {
  for (const Tensor* t : {&query, &key, &value}) {
    RG_CHECK(t->dim() == 3 && t->size(2) == d_model, "MultiHeadAttention",
             "query, key and value must be (B, N, D) with D = {}, got shape {}", d_model, shape_str(t->shape()));
  }
  RG_CHECK(key.size(0) == query.size(0) && value.size(0) == query.size(0) && key.size(1) == value.size(1),
           "MultiHeadAttention", "cross-attention shapes disagree: query {}, key {}, value {}",
           shape_str(query.shape()), shape_str(key.shape()), shape_str(value.shape()));
  RG_CHECK(call.cache == nullptr, "MultiHeadAttention", "the key/value cache is for self-attention only");
  Tensor q = split_heads(q_proj->forward(query), num_heads);  // (B, H, Nq, dh)
  Tensor k = split_heads(k_proj->forward(key), num_heads);    // (B, H, Nk, dh)
  Tensor v = split_heads(v_proj->forward(value), num_heads);
  if (rope) {
    q = rope->forward(q, Tensor(), false);  // positions 0..Nq-1
    k = rope->forward(k, Tensor(), true);   // positions 0..Nk-1
  }
  AttentionOptions options;
  options.mask = call.mask;
  options.causal = call.is_causal;
  options.dropout_p = dropout_p;
  options.training = is_training();
  return output_proj->forward(merge_heads(scaled_dot_product_attention(q, k, v, options, call.weights)));
}

}  // namespace ropegrad::nn
