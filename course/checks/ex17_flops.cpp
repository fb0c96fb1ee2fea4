// ex17-flops: the matmul FLOPs of one forward pass, by component (nn/accounting.cpp,
// forward_flops_by_component), against what a real forward hands to BLAS: a GemmTrace
// (tensor/kernels.h) records every product, and each is put with its component by its shape.
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "course/checks/check_util.h"
#include "nn/accounting.h"
#include "tensor/kernels.h"
#include "tensor/random.h"

namespace ropegrad::course {
namespace {

// B = 3, T = 5, H = 4 (dh = 6), L = 3: every wrong factor below gives its own ratio.
constexpr int64_t kB = 3, kT = 5, kH = 4, kL = 3, kD = 24, kFF = 40, kV = 37;

nn::TransformerConfig config() {
  nn::TransformerConfig c;
  c.vocab_size = kV;
  c.context_length = 8;
  c.d_model = kD;
  c.num_heads = kH;
  c.num_layers = kL;
  c.d_ff = kFF;
  return c;
}

// The part of a component name ("attn.q_proj" -> "attention projections"), "" for an unknown name.
std::string part_of(const std::string& name) {
  if (name == "attn.scores") return "attention scores";
  if (name == "attn.values") return "attention values";
  if (name == "lm_head") return "lm_head";
  if (name.rfind("attn.", 0) == 0 && name.size() > 10 && name.substr(name.size() - 5) == "_proj") {
    return "attention projections";
  }
  if (name == "ffn.w1" || name == "ffn.w2" || name == "ffn.w3") return "feed-forward";
  return "";
}

// The learner's count by part, for the whole model (block parts are one layer's: times L).
std::map<std::string, double> counted(const nn::TransformerConfig& c, int64_t batch, int64_t t) {
  std::map<std::string, double> parts;
  for (const nn::ComponentFlops& f : nn::forward_flops_by_component(c, batch, t)) {
    const std::string part = part_of(f.name);
    parts[part] += part == "lm_head" ? f.flops : static_cast<double>(c.num_layers) * f.flops;
  }
  return parts;
}

// What a forward hands to BLAS, by part: weights multiply all B T tokens at once (one product);
// attention's products run once per sequence and head, scores (T, .) x (., T), values (T, T) x (T, dh).
std::map<std::string, double> traced(const nn::TransformerConfig& c, int64_t batch, int64_t t) {
  Generator gen(7);
  nn::TransformerLM model(c, &gen);
  const Tensor ids = randint(0, c.vocab_size, {batch, t}, &gen);
  std::vector<kernels::GemmCall> calls;
  {
    NoGradGuard no_grad;
    const kernels::GemmTrace trace;
    model.forward(ids);
    calls = trace.calls();
  }
  const int64_t ff = c.d_ff > 0 ? c.d_ff : nn::SwiGLU::default_d_ff(c.d_model);
  std::map<std::string, double> parts;
  for (const kernels::GemmCall& g : calls) {
    const double flops = 2.0 * static_cast<double>(g.m * g.n * g.k * g.count);
    if (g.count == batch * c.num_heads) {
      parts[g.n == t ? "attention scores" : "attention values"] += flops;
    } else if (g.n == c.vocab_size) {
      parts["lm_head"] += flops;
    } else if (g.n == ff || g.k == ff) {
      parts["feed-forward"] += flops;
    } else {
      parts["attention projections"] += flops;
    }
  }
  return parts;
}

bool flops_near(double a, double b) { return std::abs(a - b) <= 1e-9 * std::abs(b); }

// What a wrong count's ratio to the trace usually means.
std::string diagnosis(double mine, double real) {
  if (mine == 0) return "not counted at all";
  const double r = mine / real;
  if (flops_near(r, 0.5)) return "half the trace: a multiply and an add are 2 FLOPs per term";
  if (flops_near(r, 2)) return "twice the trace";
  if (flops_near(r, 1.0 / kT)) return "1/T of the trace: counted once per sequence, but every one of its T tokens goes through";
  if (flops_near(r, 1.0 / (kB * kT))) return "1/(B T) of the trace: counted once per batch, but every token goes through";
  if (flops_near(r, 1.0 / kB)) return "1/B of the trace: every sequence of the batch goes through";
  if (flops_near(r, kH)) return "H times the trace: each head works at its own width dh = D / H, not D";
  if (flops_near(r, 1.0 / kH)) return "1/H of the trace: every head makes its own product";
  if (flops_near(r, kL)) return "L times the trace: give one layer's count (the rows multiply by the layers)";
  return "";
}

void expect_part(const std::string& part) {
  const nn::TransformerConfig c = config();
  std::map<std::string, double> mine = counted(c, kB, kT);
  std::map<std::string, double> real = traced(c, kB, kT);
  if (flops_near(mine[part], real[part])) return;
  ADD_FAILURE() << part << ": you count " << mine[part] << " FLOPs, the forward's products are " << real[part]
                << " (B " << kB << ", T " << kT << ", D " << kD << ", H " << kH << ", d_ff " << kFF << ", V " << kV
                << ", " << kL << " layers)" << (diagnosis(mine[part], real[part]).empty() ? "" : ": ")
                << diagnosis(mine[part], real[part]);
}

TEST(ex17_flops, components_are_named_as_in_the_accounting) {
  for (const nn::ComponentFlops& f : nn::forward_flops_by_component(config(), kB, kT)) {
    if (part_of(f.name).empty()) {
      ADD_FAILURE() << "unknown component '" << f.name << "': name them attn.q_proj, attn.k_proj, attn.v_proj, "
                       "attn.scores, attn.values, attn.output_proj, ffn.w1, ffn.w3, ffn.w2, lm_head";
      return;
    }
  }
}

TEST(ex17_flops, attention_projections_match_the_trace) { expect_part("attention projections"); }
TEST(ex17_flops, attention_scores_match_the_trace) { expect_part("attention scores"); }
TEST(ex17_flops, attention_values_match_the_trace) { expect_part("attention values"); }
TEST(ex17_flops, feed_forward_matches_the_trace) { expect_part("feed-forward"); }
TEST(ex17_flops, lm_head_matches_the_trace) { expect_part("lm_head"); }

// Other shapes: one sequence at the full context, many one-token ones, a tied head, the default d_ff,
// and the W2 and triple variants (their extra products are the library's, added to yours).
TEST(ex17_flops, the_total_matches_the_trace_at_other_shapes_and_variants) {
  struct Case {
    const char* label;
    int64_t batch, t;
    nn::AttentionKind kind;
    bool tie;
    int64_t d_ff;
  };
  const Case cases[] = {{"B 1, T 8", 1, 8, nn::AttentionKind::Standard, false, kFF},
                        {"B 4, T 1", 4, 1, nn::AttentionKind::Standard, false, kFF},
                        {"tied head, default d_ff", 2, 7, nn::AttentionKind::Standard, true, 0},
                        {"w2 attention", 2, 5, nn::AttentionKind::W2, false, kFF},
                        {"triple attention", 2, 5, nn::AttentionKind::Triple, false, kFF}};
  for (const Case& k : cases) {
    nn::TransformerConfig c = config();
    c.attention = k.kind;
    c.tie_embeddings = k.tie;
    c.d_ff = k.d_ff;
    double mine = 0, real = 0;
    for (const auto& [part, f] : counted(c, k.batch, k.t)) mine += f;
    for (const auto& [part, f] : traced(c, k.batch, k.t)) real += f;
    if (!flops_near(mine, real)) {
      ADD_FAILURE() << k.label << ": you count " << mine << " FLOPs in all, the forward's products are " << real;
      return;
    }
  }
}

}  // namespace
}  // namespace ropegrad::course
