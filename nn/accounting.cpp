// Resource accounting: what the model holds and computes, counted from its shapes.
#include "nn/accounting.h"

#include <algorithm>

#include "nn/attention_variants.h"
#include "tensor/exercise.h"

namespace ropegrad::nn {

namespace {

// The accounting of c's attention variant beyond standard attention's (its registry entry's).
AttentionAccounting variant_accounting(const TransformerConfig& c) {
  const AttentionVariant& variant = attention_variant(c.attention);
  RG_CHECK(variant.accounting != nullptr, "account", "attention variant '{}' has no accounting (nn/attention_variants.cpp)",
           variant.name);
  return variant.accounting(c);
}

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

// The variant's products beyond standard attention's (its AttentionAccounting): its projections
// after attn.v_proj, and its score products widened or repeated.
void add_variant_flops(const TransformerConfig& c, int64_t batch, int64_t context, std::vector<ComponentFlops>& parts) {
  const double tokens = static_cast<double>(batch) * static_cast<double>(context);
  const double d = static_cast<double>(c.d_model);
  const AttentionAccounting variant = variant_accounting(c);
  std::string after = "attn.v_proj";
  for (const ExtraProjection& p : variant.projections) {
    insert_after(parts, after, {p.name, 2 * tokens * d * static_cast<double>(p.outputs)});  // (B T, D) x (D, outputs)
    after = p.name;
  }
  if (variant.score_flops_factor != 1) component(parts, "attn.scores").flops *= variant.score_flops_factor;
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

// Per token and layer (every variant): ln1's input and 1/rms (D + 1), the projections' input (D),
// v (D), P (H T), the merged heads (D), ln2's input and 1/rms (D + 1), the SwiGLU's input (D), w1 x
// and w3 x (2 d_ff), the gate's output (d_ff); plus the variant's (its AttentionAccounting). After the
// blocks, per token: ln_final's input and 1/rms (D + 1), lm_head's input (D), the log-probabilities
// (V). The logits themselves are not kept: cross_entropy keeps log_softmax.
double saved_activation_values(const TransformerConfig& c, int64_t batch, int64_t context) {
  check_shape(c, batch, context);
  const double d = static_cast<double>(c.d_model), h = static_cast<double>(c.num_heads);
  const double t = static_cast<double>(context), ff = static_cast<double>(resolved_d_ff(c));
  const AttentionAccounting attn = variant_accounting(c);
  const double per_token_layer = 6 * d + 2 + h * t + 3 * ff + attn.saved_per_token;
  const double tokens = static_cast<double>(batch) * t, layers = static_cast<double>(c.num_layers);
  return tokens * (layers * per_token_layer + 2 * d + 1 + static_cast<double>(c.vocab_size)) + layers * attn.saved_per_layer;
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
  const AttentionAccounting variant = variant_accounting(c);

  // Every component, in model order: name, group, copies, parameters per copy, backward rule. The
  // forward FLOPs come from forward_flops_by_component by name; a component is one line here.
  struct Spec {
    std::string name;
    const char* group;
    int64_t copies, parameters;
    BackwardRule backward;
  };
  std::vector<Spec> specs = {
      {"token_embeddings", "embedding", 1, v * d, BackwardRule::None},
      {"attn.q_proj", "attention projections", layers, d * d, BackwardRule::InputWeight},
      {"attn.k_proj", "attention projections", layers, d * d, BackwardRule::InputWeight},
      {"attn.v_proj", "attention projections", layers, d * d, BackwardRule::InputWeight},
  };
  for (const ExtraProjection& p : variant.projections) {
    specs.push_back({p.name, "attention projections", layers, d * p.outputs, BackwardRule::InputWeight});
  }
  specs.insert(specs.end(), {
      {"attn.scores", "attention scores", layers, variant.score_parameters, variant.score_backward},
      {"attn.values", "attention values", layers, 0, BackwardRule::TwoOperands},
      {"attn.output_proj", "attention projections", layers, d * d, BackwardRule::InputWeight},
      {"ffn.w1", "feed-forward", layers, d * ff, BackwardRule::InputWeight},
      {"ffn.w3", "feed-forward", layers, d * ff, BackwardRule::InputWeight},
      {"ffn.w2", "feed-forward", layers, ff * d, BackwardRule::InputWeight},
      {"ln1, ln2", "norms", layers, 2 * d, BackwardRule::None},
      {"ln_final", "norms", 1, d, BackwardRule::None},
      {"lm_head", "lm_head", 1, c.tie_embeddings ? 0 : v * d, BackwardRule::InputWeight},  // tied: E counted once
  });
  const std::vector<ComponentFlops> flops = forward_flops_by_component(c, batch, context);
  size_t used = 0;
  for (const Spec& s : specs) {
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
  a.memory = {
      {"parameters", params * bytes, "every weight once (tied: the embedding once)"},
      {"gradients", params * bytes, "one per parameter"},
      {"AdamW state", 2 * params * bytes, "exp_avg and exp_avg_sq per parameter"},
      {"activations", saved_activation_values(c, batch, context) * bytes,
       fmt::format("saved for backward at (B, T): per token and layer 6 D + 2 + H T + 3 d_ff plus {}; per token "
                   "2 D + 1 + V (ln_final, lm_head input, log-probabilities)",
                   variant.saved)},
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

// Standard attention: no projection beyond q, k, v and output_proj; it saves the rotated q and k.
AttentionAccounting standard_accounting(const TransformerConfig& c) {
  const double d = static_cast<double>(c.d_model);
  AttentionAccounting a;
  a.saved_per_token = 2 * d;
  a.saved = "rotated q, k (2 D)";
  return a;
}

// W2 (nn/w2_attention.cpp): sigma projections of q and k (H outputs for a scalar sigma, D for a
// vector), one product of the augmented vectors [mu, c sigma] (dh + 1 or 2 dh columns), and the
// temperatures tau as the scores' parameters.
AttentionAccounting w2_accounting(const TransformerConfig& c) {
  const bool scalar = c.sigma == SigmaMode::Scalar;
  const double d = static_cast<double>(c.d_model), h = static_cast<double>(c.num_heads);
  const double dh = d / h;
  const int64_t sigma_out = scalar ? c.num_heads : c.d_model;
  AttentionAccounting a;
  a.projections = {{"attn.sigma_q_proj", sigma_out}, {"attn.sigma_k_proj", sigma_out}};
  const double width = scalar ? dh + 1 : 2 * dh;
  a.score_flops_factor = width / dh;
  a.score_parameters = c.num_heads;
  a.saved_per_token = scalar ? 2 * d + 4 * h : 6 * d;
  a.saved_per_layer = h;
  a.saved = scalar ? "softplus inputs (2 H), augmented [mu, sigma] of q and k (2 (D + H)); tau (H per layer)"
                   : "softplus inputs (2 D), augmented [mu, sigma] of q and k (4 D); tau (H per layer)";
  return a;
}

// Triple product (nn/triple_attention.cpp): the reference r's projection, two score products
// (q k^T and r k^T), recomputed in the backward; it saves the rotated q, k and r.
AttentionAccounting triple_accounting(const TransformerConfig& c) {
  const double d = static_cast<double>(c.d_model);
  AttentionAccounting a;
  a.projections = {{"attn.r_proj", c.d_model}};
  a.score_flops_factor = 2;
  a.score_backward = BackwardRule::Recompute;
  a.saved_per_token = 3 * d;
  a.saved = "rotated q, k, r (3 D)";
  return a;
}

}  // namespace ropegrad::nn
