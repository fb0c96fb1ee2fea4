#include "nn/transformer.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "nn/attention_variants.h"
#include "tensor/exercise.h"

namespace ropegrad::nn {

const char* attention_kind_name(AttentionKind kind) { return attention_variant(kind).name; }

AttentionKind parse_attention_kind(const std::string& name) {
  const AttentionVariant* variant = find_attention_variant(name);
  if (variant == nullptr) {
    fail("attention", "unknown attention variant '{}' (expected {})", name, attention_variant_list(", ", " or "));
  }
  return variant->kind;
}

const char* norm_placement_name(NormPlacement norm) {
  switch (norm) {
    case NormPlacement::Pre: return "pre";
    case NormPlacement::Post: return "post";
    case NormPlacement::None: return "none";
  }
  return "?";
}

NormPlacement parse_norm_placement(const std::string& name) {
  if (name == "pre") return NormPlacement::Pre;
  if (name == "post") return NormPlacement::Post;
  if (name == "none") return NormPlacement::None;
  fail("norm", "unknown norm placement '{}' (expected pre, post or none)", name);
}

const char* position_encoding_name(PositionEncoding position) {
  return position == PositionEncoding::Rope ? "rope" : "none";
}

PositionEncoding parse_position_encoding(const std::string& name) {
  if (name == "rope") return PositionEncoding::Rope;
  if (name == "none") return PositionEncoding::None;
  fail("position", "unknown position encoding '{}' (expected rope or none)", name);
}

const char* feed_forward_name(FeedForwardKind ffn) { return ffn == FeedForwardKind::SwiGLU ? "swiglu" : "silu"; }

FeedForwardKind parse_feed_forward(const std::string& name) {
  if (name == "swiglu") return FeedForwardKind::SwiGLU;
  if (name == "silu") return FeedForwardKind::SiLU;
  fail("ffn", "unknown feed-forward '{}' (expected swiglu or silu)", name);
}

int64_t feed_forward_width(FeedForwardKind kind, int64_t d_model, int64_t d_ff) {
  if (d_ff > 0) return d_ff;
  return kind == FeedForwardKind::SwiGLU ? SwiGLU::default_d_ff(d_model) : SiLUFeedForward::default_d_ff(d_model);
}

int64_t feed_forward_parameters(FeedForwardKind kind, int64_t d_model, int64_t d_ff) {
  const int64_t matrices = kind == FeedForwardKind::SwiGLU ? 3 : 2;
  return matrices * d_model * feed_forward_width(kind, d_model, d_ff);
}

TransformerBlock::TransformerBlock(const TransformerConfig& c, std::shared_ptr<RotaryEmbedding> rope, Generator* gen,
                                   DType dtype)
    : norm_(c.norm) {
  RG_CHECK(c.position == PositionEncoding::Rope || rope == nullptr, "TransformerBlock",
           "position encoding 'none' (NoPE) takes no RoPE table, but one was given");
  const bool normed = c.norm != NormPlacement::None;
  if (normed) ln1 = register_module("ln1", std::make_shared<RMSNorm>(c.d_model, c.norm_eps, dtype));
  attn = register_module("attn", attention_variant(c.attention).make(c, rope, gen, dtype));
  if (normed) ln2 = register_module("ln2", std::make_shared<RMSNorm>(c.d_model, c.norm_eps, dtype));
  if (c.ffn == FeedForwardKind::SwiGLU) {
    ffn = register_module("ffn", std::make_shared<SwiGLU>(c.d_model, c.d_ff, gen, dtype));
  } else {
    ffn = register_module("ffn", std::make_shared<SiLUFeedForward>(c.d_model, c.d_ff, gen, dtype));
  }
}

Tensor TransformerBlock::forward(const Tensor& x, const AttentionCall& call) const {
  switch (norm_) {
    case NormPlacement::Pre: return pre_norm_forward(x, call);
    case NormPlacement::Post: return post_norm_forward(x, call);
    case NormPlacement::None: return unnormed_forward(x, call);
  }
  fail("TransformerBlock", "unknown norm placement {}", static_cast<int>(norm_));
}

Tensor TransformerBlock::pre_norm_forward(const Tensor& x, const AttentionCall& call) const {
  // BEGIN EXERCISE ex17-block
  const Tensor h = x + attn->forward(ln1->forward(x), call);  // pre-norm residual
  return h + ffn->forward(ln2->forward(h));
  // END EXERCISE ex17-block
}

Tensor TransformerBlock::post_norm_forward(const Tensor& x, const AttentionCall& call) const {
  // BEGIN EXERCISE ex17-post-norm
  const Tensor z = ln1->forward(x + attn->forward(x, call));  // post-norm: the norm acts on the sum
  return ln2->forward(z + ffn->forward(z));
  // END EXERCISE ex17-post-norm
}

Tensor TransformerBlock::unnormed_forward(const Tensor& x, const AttentionCall& call) const {
  const Tensor h = x + attn->forward(x, call);  // the residual stream, never normalised
  return h + ffn->forward(h);
}

TransformerLM::TransformerLM(const TransformerConfig& c, Generator* gen, DType dtype) : config_(c) {
  RG_CHECK(c.vocab_size > 0 && c.context_length > 0 && c.num_layers > 0, "TransformerLM",
           "vocab_size, context_length and num_layers must be positive, got {}, {}, {}", c.vocab_size,
           c.context_length, c.num_layers);
  RG_CHECK(c.num_heads > 0 && c.d_model % c.num_heads == 0, "TransformerLM",
           "d_model {} must be a multiple of num_heads {}", c.d_model, c.num_heads);
  if (c.position == PositionEncoding::Rope) {
    RopeConfig rc;
    rc.head_dim = c.d_model / c.num_heads;
    rc.base = c.rope_theta;
    rc.max_seq_len = c.context_length;
    rope = register_module("rope", std::make_shared<RotaryEmbedding>(rc, dtype));  // buffers only, not persistent
  }
  token_embeddings = register_module("token_embeddings", std::make_shared<Embedding>(c.vocab_size, c.d_model, gen, dtype));
  layers = register_module("layers", std::make_shared<ModuleList<TransformerBlock>>());
  for (int64_t i = 0; i < c.num_layers; ++i) layers->push_back(std::make_shared<TransformerBlock>(c, rope, gen, dtype));
  // Post-norm blocks end in a norm already; CS336's post-norm ablation (like
  // the original transformer) has no final norm before the head.
  if (c.norm == NormPlacement::Pre)
    ln_final = register_module("ln_final", std::make_shared<RMSNorm>(c.d_model, c.norm_eps, dtype));
  if (!c.tie_embeddings) lm_head = register_module("lm_head", std::make_shared<Linear>(c.d_model, c.vocab_size, gen, dtype));
}

Tensor TransformerLM::forward(const Tensor& ids, std::vector<KVCache>* caches, const Tensor& positions) {
  RG_CHECK(ids.dim() == 2 && ids.dtype() == DType::Int64, "TransformerLM", "ids must be (B, T) int64, got shape {} of {}",
           shape_str(ids.shape()), dtype_name(ids.dtype()));
  const int64_t past = caches != nullptr && !caches->empty() ? (*caches)[0].length() : 0;
  RG_CHECK(past + ids.size(1) <= config_.context_length, "TransformerLM",
           "sequence length {} (after {} cached tokens) exceeds the context length {}", ids.size(1), past,
           config_.context_length);
  if (caches != nullptr) {
    RG_CHECK(config_.attention == AttentionKind::Standard, "TransformerLM",
             "the KV cache is implemented for standard attention, not {}", attention_kind_name(config_.attention));
    if (caches->empty()) caches->resize(static_cast<size_t>(config_.num_layers));
  }
  // BEGIN EXERCISE ex17-lm
  Tensor h = token_embeddings->forward(ids);  // (B, T, D)
  for (size_t i = 0; i < layers->size(); ++i) {
    AttentionCall call = AttentionCall::causal();
    call.positions = positions;
    call.cache = caches != nullptr ? &(*caches)[i] : nullptr;
    h = (*layers)[i].forward(h, call);
  }
  if (ln_final) h = ln_final->forward(h);  // pre-norm only
  if (lm_head) return lm_head->forward(h);                             // (B, T, V)
  return matmul(h, transpose(token_embeddings->weight, 0, 1));         // tied: h E^T
  // END EXERCISE ex17-lm
}

int64_t sample_token(const Tensor& logits_in, double temperature, double top_p, Generator& gen) {
  RG_CHECK(logits_in.dim() == 1 && logits_in.numel() > 0, "sample_token", "logits must be 1-D (V), got shape {}",
           shape_str(logits_in.shape()));
  RG_CHECK(temperature >= 0, "sample_token", "temperature must be >= 0, got {}", temperature);
  RG_CHECK(top_p > 0 && top_p <= 1, "sample_token", "top_p must be in (0, 1], got {}", top_p);
  const std::vector<double> logits = logits_in.to_vector<double>();
  const auto best = std::max_element(logits.begin(), logits.end());
  if (temperature == 0) return best - logits.begin();  // greedy
  // Softmax with temperature, stable.
  std::vector<double> p(logits.size());
  double total = 0;
  for (size_t i = 0; i < p.size(); ++i) total += (p[i] = std::exp((logits[i] - *best) / temperature));
  // BEGIN EXERCISE ex17-top-p
  // Nucleus: keep the most likely tokens until their mass reaches top_p.
  std::vector<size_t> order(p.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return p[a] > p[b]; });
  double kept = 0;
  size_t count = 0;
  while (count < order.size() && (count == 0 || kept < top_p * total)) kept += p[order[count++]];
  double u = gen.uniform() * kept;
  for (size_t i = 0; i < count; ++i) {
    u -= p[order[i]];
    if (u < 0) return static_cast<int64_t>(order[i]);
  }
  return static_cast<int64_t>(order[count - 1]);
  // END EXERCISE ex17-top-p
}

std::vector<int64_t> TransformerLM::generate(const std::vector<int64_t>& prompt, const GenerateOptions& o) {
  RG_CHECK(!prompt.empty(), "generate", "the prompt must contain at least one token");
  RG_CHECK(o.max_new_tokens >= 0, "generate", "max_new_tokens must be >= 0, got {}", o.max_new_tokens);
  RG_CHECK(o.temperature >= 0, "generate", "temperature must be >= 0, got {}", o.temperature);
  RG_CHECK(o.top_p > 0 && o.top_p <= 1, "generate", "top_p must be in (0, 1], got {}", o.top_p);
  NoGradGuard no_grad;
  const bool was_training = is_training();
  eval();
  Generator& gen = o.generator != nullptr ? *o.generator : default_generator();
  const bool cached = o.use_cache && config_.attention == AttentionKind::Standard;
  std::vector<int64_t> tokens = prompt, out;
  std::vector<KVCache> caches;
  int64_t fed = 0;  // tokens already in the cache
  for (int64_t step = 0; step < o.max_new_tokens; ++step) {
    Tensor logits;
    if (cached && static_cast<int64_t>(tokens.size()) <= config_.context_length) {
      // Feed only what the cache has not seen, at its true positions.
      const std::vector<int64_t> fresh(tokens.begin() + fed, tokens.end());
      const Tensor ids = tensor_i64(fresh, {1, static_cast<int64_t>(fresh.size())});
      logits = forward(ids, &caches, arange(fed, static_cast<int64_t>(tokens.size())));
      fed = static_cast<int64_t>(tokens.size());
    } else {
      // Recompute over the last context_length tokens.
      const int64_t start = std::max<int64_t>(0, static_cast<int64_t>(tokens.size()) - config_.context_length);
      const std::vector<int64_t> window(tokens.begin() + start, tokens.end());
      logits = forward(tensor_i64(window, {1, static_cast<int64_t>(window.size())}));
    }
    const Tensor last = kernels::select(kernels::select(logits, 0, 0), 0, -1);  // (V)
    const int64_t next = sample_token(last, o.temperature, o.top_p, gen);
    tokens.push_back(next);
    out.push_back(next);
    if (o.on_token) o.on_token(static_cast<int64_t>(out.size()));
    if (o.stop_token && next == *o.stop_token) break;
  }
  train(was_training);
  return out;
}

std::vector<std::pair<std::string, int64_t>> TransformerLM::parameter_counts() const {
  std::vector<std::pair<std::string, int64_t>> counts;
  int64_t total = 0;
  for (const auto& [name, child] : named_children()) {
    if (name == "layers") {
      for (const auto& [index, layer] : child->named_children()) {
        counts.emplace_back("layers." + index, layer->num_parameters());
      }
    } else if (child->num_parameters() > 0) {
      counts.emplace_back(name, child->num_parameters());
    }
  }
  for (const auto& [name, n] : counts) total += n;
  counts.emplace_back("total", total);
  return counts;
}

}  // namespace ropegrad::nn
