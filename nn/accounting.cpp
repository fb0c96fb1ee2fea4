// Resource accounting: what the model holds and computes, counted from its shapes.
#include "nn/accounting.h"

#include <algorithm>

#include "tensor/exercise.h"

namespace ropegrad::nn {

namespace {

int64_t resolved_d_ff(const TransformerConfig& c) { return c.d_ff > 0 ? c.d_ff : SwiGLU::default_d_ff(c.d_model); }

void check_shape(const TransformerConfig& c, int64_t batch, int64_t context) {
  const char* op = "account";
  RG_CHECK(c.vocab_size > 0 && c.d_model > 0 && c.num_layers > 0 && c.num_heads > 0, op,
           "vocab_size, d_model, num_layers and num_heads must be positive, got {}, {}, {}, {}", c.vocab_size,
           c.d_model, c.num_layers, c.num_heads);
  RG_CHECK(c.d_model % c.num_heads == 0, op, "d_model {} must be a multiple of num_heads {}", c.d_model,
           c.num_heads);
  RG_CHECK(batch >= 1, op, "batch must be >= 1, got {}", batch);
  RG_CHECK(context >= 1 && context <= c.context_length, op, "context must be in 1..{} (the context length), got {}",
           c.context_length, context);
}

ComponentFlops& component(std::vector<ComponentFlops>& parts, const std::string& name) {
  const auto it = std::find_if(parts.begin(), parts.end(), [&](const ComponentFlops& p) { return p.name == name; });
  RG_CHECK(it != parts.end(), "account", "forward_flops_by_component lists no '{}'", name);
  return *it;
}

void insert_after(std::vector<ComponentFlops>& parts, const std::string& name, ComponentFlops part) {
  const auto it = std::find_if(parts.begin(), parts.end(), [&](const ComponentFlops& p) { return p.name == name; });
  RG_CHECK(it != parts.end(), "account", "forward_flops_by_component lists no '{}'", name);
  parts.insert(it + 1, std::move(part));
}

// The W2 and triple variants' products beyond standard attention's (nn/w2_attention.cpp,
// nn/triple_attention.cpp and their score kernels in nn/attention_scores.cpp).
void add_variant_flops(const TransformerConfig& c, int64_t batch, int64_t context, std::vector<ComponentFlops>& parts) {
  const double tokens = static_cast<double>(batch) * static_cast<double>(context);
  const double d = static_cast<double>(c.d_model), dh = d / static_cast<double>(c.num_heads);
  if (c.attention == AttentionKind::Triple) {
    insert_after(parts, "attn.v_proj", {"attn.r_proj", 2 * tokens * d * d});  // the reference r: (B T, D) x (D, D)
    component(parts, "attn.scores").flops *= 2;  // q k^T and r k^T, both (T, dh) x (dh, T)
  } else if (c.attention == AttentionKind::W2) {
    const double sigma_out = c.sigma == SigmaMode::Scalar ? static_cast<double>(c.num_heads) : d;
    insert_after(parts, "attn.v_proj", {"attn.sigma_q_proj", 2 * tokens * d * sigma_out});  // (B T, D) x (D, H or D)
    insert_after(parts, "attn.sigma_q_proj", {"attn.sigma_k_proj", 2 * tokens * d * sigma_out});
    // One product of the augmented vectors [mu, c sigma]: dh + 1 columns (scalar sigma) or 2 dh (vector).
    const double width = c.sigma == SigmaMode::Scalar ? dh + 1 : 2 * dh;
    component(parts, "attn.scores").flops *= width / dh;
  }
}

}  // namespace

std::vector<ComponentFlops> forward_flops_by_component(const TransformerConfig& c, int64_t batch, int64_t context) {
  check_shape(c, batch, context);
  std::vector<ComponentFlops> parts;
  // BEGIN EXERCISE ex17-flops
  // 2 m n k FLOPs for (m, k) x (k, n): a multiply and an add per term of each dot product.
  const auto product = [](double m, double n, double k) { return 2 * m * n * k; };
  const double b = static_cast<double>(batch), t = static_cast<double>(context);
  const double d = static_cast<double>(c.d_model), heads = static_cast<double>(c.num_heads);
  const double dh = d / heads, ff = static_cast<double>(resolved_d_ff(c)), v = static_cast<double>(c.vocab_size);
  const double tokens = b * t;  // a weight multiplies every token of every sequence
  parts.push_back({"attn.q_proj", product(tokens, d, d)});
  parts.push_back({"attn.k_proj", product(tokens, d, d)});
  parts.push_back({"attn.v_proj", product(tokens, d, d)});
  parts.push_back({"attn.scores", b * heads * product(t, t, dh)});  // q k^T per sequence and head
  parts.push_back({"attn.values", b * heads * product(t, dh, t)});  // P v
  parts.push_back({"attn.output_proj", product(tokens, d, d)});
  parts.push_back({"ffn.w1", product(tokens, ff, d)});
  parts.push_back({"ffn.w3", product(tokens, ff, d)});
  parts.push_back({"ffn.w2", product(tokens, d, ff)});
  parts.push_back({"lm_head", product(tokens, v, d)});  // tied or not: h E^T is the same product
  // END EXERCISE ex17-flops
  add_variant_flops(c, batch, context, parts);
  return parts;
}

double backward_factor(BackwardRule rule) {
  switch (rule) {
    case BackwardRule::None: return 0;
    case BackwardRule::InputWeight:
    case BackwardRule::TwoOperands: return 2;
    case BackwardRule::Recompute: return 3;
  }
  return 0;
}

const char* backward_rule_text(BackwardRule rule) {
  switch (rule) {
    case BackwardRule::None: return "no product";
    case BackwardRule::InputWeight: return "2x: dX and dW";
    case BackwardRule::TwoOperands: return "2x: both operands";
    case BackwardRule::Recompute: return "3x: 2 recomputed + 4";
  }
  return "?";
}

int64_t Accounting::parameters() const {
  int64_t n = 0;
  for (const AccountingRow& r : rows) n += r.parameters;
  return n;
}

double Accounting::forward_flops() const {
  double n = 0;
  for (const AccountingRow& r : rows) n += r.forward_flops;
  return n;
}

double Accounting::backward_flops() const {
  double n = 0;
  for (const AccountingRow& r : rows) n += r.backward_flops;
  return n;
}

double Accounting::memory_bytes() const {
  double n = 0;
  for (const MemoryRow& r : memory) n += r.bytes;
  return n;
}

double Accounting::group_forward_flops(const std::string& group) const {
  double n = 0;
  for (const AccountingRow& r : rows) n += r.group == group ? r.forward_flops : 0;
  return n;
}

namespace {

// What attention saves for its backward per token and layer, beyond the input of its projections,
// v (P v's right operand), P and the merged heads (output_proj's input), which every variant keeps.
struct AttentionSaved {
  double per_token;  // values
  double per_layer;
  const char* what;
};

AttentionSaved attention_saved(const TransformerConfig& c) {
  const double d = static_cast<double>(c.d_model), h = static_cast<double>(c.num_heads);
  switch (c.attention) {
    case AttentionKind::Standard: return {2 * d, 0, "rotated q, k (2 D)"};
    case AttentionKind::Triple: return {3 * d, 0, "rotated q, k, r (3 D)"};
    case AttentionKind::W2:
      if (c.sigma == SigmaMode::Scalar) {
        return {2 * d + 4 * h, h, "softplus inputs (2 H), augmented [mu, sigma] of q and k (2 (D + H)); tau (H per layer)"};
      }
      return {6 * d, h, "softplus inputs (2 D), augmented [mu, sigma] of q and k (4 D); tau (H per layer)"};
  }
  return {0, 0, ""};
}

}  // namespace

// Per token and layer (every variant): ln1's input and 1/rms (D + 1), the projections' input (D),
// v (D), P (H T), the merged heads (D), ln2's input and 1/rms (D + 1), the SwiGLU's input (D), w1 x
// and w3 x (2 d_ff), the gate's output (d_ff); plus the variant's (attention_saved). After the
// blocks, per token: ln_final's input and 1/rms (D + 1), lm_head's input (D), the log-probabilities
// (V). The logits themselves are not kept: cross_entropy keeps log_softmax.
double saved_activation_values(const TransformerConfig& c, int64_t batch, int64_t context) {
  check_shape(c, batch, context);
  const double d = static_cast<double>(c.d_model), h = static_cast<double>(c.num_heads);
  const double t = static_cast<double>(context), ff = static_cast<double>(resolved_d_ff(c));
  const AttentionSaved attn = attention_saved(c);
  const double per_token_layer = 6 * d + 2 + h * t + 3 * ff + attn.per_token;
  const double tokens = static_cast<double>(batch) * t, layers = static_cast<double>(c.num_layers);
  return tokens * (layers * per_token_layer + 2 * d + 1 + static_cast<double>(c.vocab_size)) + layers * attn.per_layer;
}

Accounting account(const TransformerConfig& config, int64_t batch, int64_t context, DType dtype) {
  check_shape(config, batch, context);
  RG_CHECK(dtype == DType::Float32 || dtype == DType::Float64, "account", "dtype must be float32 or float64, got {}",
           dtype_name(dtype));
  Accounting a;
  a.config = config;
  a.config.d_ff = resolved_d_ff(config);
  a.batch = batch;
  a.context = context;
  a.dtype = dtype;
  const TransformerConfig& c = a.config;
  const int64_t d = c.d_model, v = c.vocab_size, ff = c.d_ff, layers = c.num_layers;
  const int64_t sigma_out = c.sigma == SigmaMode::Scalar ? c.num_heads : d;
  const bool w2 = c.attention == AttentionKind::W2, triple = c.attention == AttentionKind::Triple;

  // Every component, in model order: name, group, copies, parameters per copy, backward rule. The
  // forward FLOPs come from forward_flops_by_component by name; a component is one line here.
  struct Spec {
    const char* name;
    const char* group;
    int64_t copies, parameters;
    BackwardRule backward;
    bool present = true;
  };
  const std::vector<Spec> specs = {
      {"token_embeddings", "embedding", 1, v * d, BackwardRule::None},
      {"attn.q_proj", "attention projections", layers, d * d, BackwardRule::InputWeight},
      {"attn.k_proj", "attention projections", layers, d * d, BackwardRule::InputWeight},
      {"attn.v_proj", "attention projections", layers, d * d, BackwardRule::InputWeight},
      {"attn.r_proj", "attention projections", layers, d * d, BackwardRule::InputWeight, triple},
      {"attn.sigma_q_proj", "attention projections", layers, d * sigma_out, BackwardRule::InputWeight, w2},
      {"attn.sigma_k_proj", "attention projections", layers, d * sigma_out, BackwardRule::InputWeight, w2},
      {"attn.scores", "attention scores", layers, w2 ? c.num_heads : 0,  // W2: the temperatures tau
       triple ? BackwardRule::Recompute : BackwardRule::TwoOperands},
      {"attn.values", "attention values", layers, 0, BackwardRule::TwoOperands},
      {"attn.output_proj", "attention projections", layers, d * d, BackwardRule::InputWeight},
      {"ffn.w1", "feed-forward", layers, d * ff, BackwardRule::InputWeight},
      {"ffn.w3", "feed-forward", layers, d * ff, BackwardRule::InputWeight},
      {"ffn.w2", "feed-forward", layers, ff * d, BackwardRule::InputWeight},
      {"ln1, ln2", "norms", layers, 2 * d, BackwardRule::None},
      {"ln_final", "norms", 1, d, BackwardRule::None},
      {"lm_head", "lm_head", 1, c.tie_embeddings ? 0 : v * d, BackwardRule::InputWeight},  // tied: E counted once
  };
  const std::vector<ComponentFlops> flops = forward_flops_by_component(c, batch, context);
  size_t used = 0;
  for (const Spec& s : specs) {
    if (!s.present) continue;
    AccountingRow row{s.name, s.group, s.copies, s.copies * s.parameters, 0, 0, s.backward};
    for (const ComponentFlops& f : flops) {
      if (f.name != s.name) continue;
      row.forward_flops += static_cast<double>(s.copies) * f.flops;
      ++used;
    }
    row.backward_flops = backward_factor(s.backward) * row.forward_flops;
    a.rows.push_back(std::move(row));
  }
  RG_CHECK(used == flops.size(), "account", "forward_flops_by_component lists {} components, {} of them known",
           flops.size(), used);

  const double bytes = static_cast<double>(element_size(dtype));
  const double params = static_cast<double>(a.parameters());
  const AttentionSaved attn = attention_saved(c);
  a.memory = {
      {"parameters", params * bytes, "every weight once (tied: the embedding once)"},
      {"gradients", params * bytes, "one per parameter"},
      {"AdamW state", 2 * params * bytes, "exp_avg and exp_avg_sq per parameter"},
      {"activations", saved_activation_values(c, batch, context) * bytes,
       fmt::format("saved for backward at (B, T): per token and layer 6 D + 2 + H T + 3 d_ff plus {}; per token "
                   "2 D + 1 + V (ln_final, lm_head input, log-probabilities)",
                   attn.what)},
  };
  return a;
}

TransformerConfig gpt2_config(const std::string& size) {
  struct Size {
    const char* name;
    int64_t layers, d_model, heads;
  };
  static const Size sizes[] = {{"small", 12, 768, 12}, {"medium", 24, 1024, 16}, {"large", 36, 1280, 20},
                                 {"xl", 48, 1600, 25}};
  for (const Size& s : sizes) {
    if (size != s.name) continue;
    TransformerConfig c;
    c.vocab_size = 50257;
    c.context_length = 1024;
    c.num_layers = s.layers;
    c.d_model = s.d_model;
    c.num_heads = s.heads;
    c.d_ff = 4 * s.d_model;
    return c;
  }
  fail("gpt2_config", "unknown GPT-2 size '{}' (expected small, medium, large or xl)", size);
}

}  // namespace ropegrad::nn
