// Standard multi-head attention with RoPE (docs/appendix-a-formulas.md, standard attention).
#pragma once

#include <memory>

#include "nn/layers.h"
#include "nn/rope.h"

namespace ropegrad::nn {

// Keys and values of the tokens seen so far, (B, H, L, dh) each, for
// incremental decoding: each call appends the new tokens' k and v.
struct KVCache {
  Tensor k, v;
  int64_t length() const { return k.defined() ? k.size(2) : 0; }
  void reset() { k = v = Tensor(); }
};

// Per-call options of an attention forward. There is no default call: each
// says whether it is causal, by the constructor it is made with, so a layer
// used without a mask is never bidirectional by surprise:
//   AttentionCall::causal()         query i attends keys at positions <= its own (a language model)
//   AttentionCall::bidirectional()  every query attends every key (an encoder, cross-attention)
// A mask, positions, a cache and a weights sink are then set on the call.
struct AttentionCall {
  static AttentionCall causal() { return AttentionCall(true); }
  static AttentionCall bidirectional() { return AttentionCall(false); }
  // Earlier releases had a default call; now a call says which it is. The
  // compiler quotes this line where a default call is asked for:
  AttentionCall() = delete;  // no default call: write AttentionCall::causal() or AttentionCall::bidirectional()

  bool is_causal;       // as chosen above (torch's is_causal)
  Tensor mask;          // bool (true = may attend) or additive float, broadcastable to (B, H, Nq, Nk)
  Tensor positions;     // RoPE positions of the queries/keys, (T), (B, T) or (1, T); default 0..T-1 (after the cache)
  KVCache* cache = nullptr;  // self-attention only: append this call's k, v and attend to all
  Tensor* weights = nullptr;  // receives the attention weights (B, H, Nq, Nk)

 private:
  explicit AttentionCall(bool causal_) : is_causal(causal_) {}
};

// What a transformer block needs of its attention: x (B, T, D) -> (B, T, D).
// The three variants (standard, W2, triple product) implement it.
class AttentionLayer : public Module {
 public:
  virtual Tensor forward(const Tensor& x, const AttentionCall& call) = 0;
};

// The head size d_model / num_heads, after checking it divides evenly and
// matches the shared RoPE table (if any); errors name `op`.
int64_t attention_head_dim(int64_t d_model, int64_t num_heads, const RotaryEmbedding* rope, const char* op);
// Checks a self-attention input is (B, T, d_model).
void check_attention_input(const Tensor& x, int64_t d_model, const char* op);

// Splits (B, T, D) into heads (B, H, T, dh) as a view, and merges them back.
Tensor split_heads(const Tensor& x, int64_t num_heads);
Tensor merge_heads(const Tensor& x);

class MultiHeadAttention : public AttentionLayer {
 public:
  // rope may be null (no positional rotation); it is shared, not owned.
  MultiHeadAttention(int64_t d_model, int64_t num_heads, std::shared_ptr<RotaryEmbedding> rope = nullptr,
                     Generator* gen = nullptr, DType dtype = kDefaultFloat, double dropout = 0.0);
  std::string type_name() const override { return "MultiHeadAttention"; }

  // Self-attention: x (B, T, D) -> (B, T, D).
  Tensor forward(const Tensor& x, const AttentionCall& call) override;
  // Cross-attention: query (B, Nq, D), key and value (B, Nk, D) -> (B, Nq, D);
  // RoPE positions 0..Nq-1 for queries and 0..Nk-1 for keys.
  Tensor forward(const Tensor& query, const Tensor& key, const Tensor& value, const AttentionCall& call);

  int64_t d_model, num_heads, head_dim;
  double dropout_p;
  std::shared_ptr<Linear> q_proj, k_proj, v_proj, output_proj;
  std::shared_ptr<RotaryEmbedding> rope;
};

}  // namespace ropegrad::nn
