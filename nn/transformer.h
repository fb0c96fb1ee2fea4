// The transformer language model (docs/appendix-a-formulas.md, model and tasks): pre-norm blocks
//   h <- h + Attn(RMSNorm(h)),   h <- h + SwiGLU(RMSNorm(h)),
// Embedding -> L blocks -> RMSNorm -> Linear head to V (untied by default).
// The attention variant (standard, W2 or triple product) is chosen by the
// config; one RoPE table is shared by every layer.
//
// CS336's ablations (docs/17-language-model-and-decoding.md) are switches of
// the config: the norms after each residual add (post-norm, no final norm) or
// none at all; no positional rotation (NoPE); a plain SiLU feed-forward.
//
// Parameter names follow CS336: token_embeddings.weight,
// layers.0.attn.q_proj.weight, layers.0.ln1.weight, layers.0.ffn.w1.weight,
// ln_final.weight, lm_head.weight.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "nn/attention.h"
#include "nn/triple_attention.h"
#include "nn/w2_attention.h"

namespace ropegrad::nn {

// The attention variants; each has an entry in nn/attention_variants.cpp (its name, module,
// accounting, ...), which every reader of the list loops over.
enum class AttentionKind { Standard, W2, Triple };
const char* attention_kind_name(AttentionKind kind);          // the registry's name: "w2"
AttentionKind parse_attention_kind(const std::string& name);  // Error for an unknown name

// Where the RMSNorms sit:
//   Pre   h = x + attn(norm(x)), y = h + ffn(norm(h)); a final norm before the head
//   Post  z = norm(x + attn(x)), y = norm(z + ffn(z)); no final norm (the original transformer)
//   None  h = x + attn(x), y = h + ffn(h); no norm anywhere
enum class NormPlacement { Pre, Post, None };
// How positions enter: RoPE in every attention variant (standard: q, k; W2: the
// means; triple: q, k, r), or not at all (NoPE: no variant rotates anything,
// and the causal mask is the only source of order).
enum class PositionEncoding { Rope, None };
// The feed-forward: SwiGLU (three matrices) or W2 SiLU(W1 x) (two).
enum class FeedForwardKind { SwiGLU, SiLU };

const char* norm_placement_name(NormPlacement norm);             // "pre", "post", "none"
NormPlacement parse_norm_placement(const std::string& name);     // Error for an unknown name
const char* position_encoding_name(PositionEncoding position);   // "rope", "none"
PositionEncoding parse_position_encoding(const std::string& name);
const char* feed_forward_name(FeedForwardKind ffn);              // "swiglu", "silu"
FeedForwardKind parse_feed_forward(const std::string& name);

struct TransformerConfig {
  int64_t vocab_size = 256;
  int64_t context_length = 128;
  int64_t d_model = 128;
  int64_t num_layers = 2;
  int64_t num_heads = 4;
  int64_t d_ff = 0;  // <= 0: the FFN's default (SwiGLU 8/3 d_model rounded up to 64; SiLU 4 d_model)
  double rope_theta = 10000.0;
  AttentionKind attention = AttentionKind::Standard;
  SigmaMode sigma = SigmaMode::Scalar;  // W2 only
  bool tie_embeddings = false;          // lm_head reuses token_embeddings.weight
  double dropout = 0.0;                 // attention dropout (train mode only)
  double norm_eps = 1e-5;
  NormPlacement norm = NormPlacement::Pre;
  PositionEncoding position = PositionEncoding::Rope;
  FeedForwardKind ffn = FeedForwardKind::SwiGLU;
};

// The width a feed-forward of `kind` gets for d_model: d_ff, or when d_ff <= 0
// the kind's default (SwiGLU 8/3 d_model rounded up to 64, SiLU 4 d_model).
int64_t feed_forward_width(FeedForwardKind kind, int64_t d_model, int64_t d_ff = 0);
// Its parameters: 3 (SwiGLU: W1, W2, W3) or 2 (SiLU: W1, W2) matrices of d_model x width.
int64_t feed_forward_parameters(FeedForwardKind kind, int64_t d_model, int64_t d_ff = 0);

class TransformerBlock : public Module {
 public:
  // rope may be null (NoPE); config.norm says where the norms sit.
  TransformerBlock(const TransformerConfig& config, std::shared_ptr<RotaryEmbedding> rope, Generator* gen, DType dtype);
  std::string type_name() const override { return "TransformerBlock"; }
  // x (B, T, D) -> (B, T, D). The call says causal or bidirectional
  // (AttentionCall::causal() in a language model).
  Tensor forward(const Tensor& x, const AttentionCall& call) const;

  std::shared_ptr<RMSNorm> ln1, ln2;  // null with NormPlacement::None
  std::shared_ptr<AttentionLayer> attn;
  std::shared_ptr<FeedForward> ffn;

 private:
  Tensor pre_norm_forward(const Tensor& x, const AttentionCall& call) const;
  Tensor post_norm_forward(const Tensor& x, const AttentionCall& call) const;
  Tensor unnormed_forward(const Tensor& x, const AttentionCall& call) const;
  NormPlacement norm_;
};

struct GenerateOptions {
  int64_t max_new_tokens = 32;
  double temperature = 1.0;  // 0: greedy (argmax)
  double top_p = 1.0;        // nucleus sampling: the smallest set of tokens with this much probability
  std::optional<int64_t> stop_token;
  Generator* generator = nullptr;
  bool use_cache = true;  // KV cache (standard attention only)
  std::function<void(int64_t)> on_token;  // called with the count after each new token (progress)
};

class TransformerLM : public Module {
 public:
  explicit TransformerLM(const TransformerConfig& config, Generator* gen = nullptr, DType dtype = kDefaultFloat);
  std::string type_name() const override { return "TransformerLM"; }

  // ids (B, T) int64 -> logits (B, T, V). `caches` (one per layer) and
  // `positions` serve incremental decoding with standard attention.
  Tensor forward(const Tensor& ids, std::vector<KVCache>* caches = nullptr, const Tensor& positions = Tensor());

  // Continues `prompt` (1-D token ids) and returns the new tokens only.
  std::vector<int64_t> generate(const std::vector<int64_t>& prompt, const GenerateOptions& options);

  // Parameters per top-level part ("token_embeddings", "layers.0", ..., "lm_head") and the total.
  std::vector<std::pair<std::string, int64_t>> parameter_counts() const;

  const TransformerConfig& config() const { return config_; }

  std::shared_ptr<Embedding> token_embeddings;
  std::shared_ptr<ModuleList<TransformerBlock>> layers;
  std::shared_ptr<RMSNorm> ln_final;  // null unless pre-norm
  std::shared_ptr<Linear> lm_head;    // null when tied
  std::shared_ptr<RotaryEmbedding> rope;  // null with PositionEncoding::None

 private:
  TransformerConfig config_;
};

// Samples one token id from logits (V) with temperature and top-p.
int64_t sample_token(const Tensor& logits, double temperature, double top_p, Generator& gen);

}  // namespace ropegrad::nn
