// The transformer language model (docs/appendix-a-formulas.md, model and tasks, nn/transformer.h):
// 1. Structure: CS336 parameter names and shapes, counts worked out by hand
//    for every attention variant, tied embeddings.
// 2. Forward: shapes, causality (token t never changes logits before t), the
//    KV cache (incremental decoding == full recomputation).
// 3. Decoding: greedy generate == an argmax loop written here (with and
//    without the cache), stop token, top-p, sample_token's distribution.
// 4. Bad inputs: every Error names the op and the offending value.
//
// Small float64 models (V 11, D 8, H 2, L 2, d_ff 16) keep each test instant.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "autograd/ops.h"
#include "nn/attention_variants.h"
#include "nn/transformer.h"
#include "tensor/random.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::nn;
using namespace ropegrad::testing;
using ::testing::HasSubstr;

namespace {

constexpr int64_t kV = 11, kCtx = 8, kD = 8, kH = 2, kL = 2, kFF = 16;
constexpr DType F64 = DType::Float64;

TransformerConfig small_config(AttentionKind kind, SigmaMode sigma = SigmaMode::Scalar) {
  TransformerConfig c;
  c.vocab_size = kV;
  c.context_length = kCtx;
  c.d_model = kD;
  c.num_heads = kH;
  c.num_layers = kL;
  c.d_ff = kFF;
  c.attention = kind;
  c.sigma = sigma;
  return c;
}

std::string kind_label(AttentionKind kind) { return attention_kind_name(kind); }

const std::vector<AttentionKind> kAllKinds = attention_kinds();

// logits (B, T, V) -> the row at [b, t] as a vector.
std::vector<double> row(const Tensor& logits, int64_t b, int64_t t) {
  const int64_t v = logits.size(2);
  const std::vector<double> all = logits.to_vector<double>();
  const auto start = all.begin() + (b * logits.size(1) + t) * v;
  return {start, start + v};
}

int64_t argmax_of(const std::vector<double>& v) {
  return std::max_element(v.begin(), v.end()) - v.begin();  // first maximum, like torch.argmax
}

Tensor ids_1xT(const std::vector<int64_t>& tokens) {
  return tensor_i64(tokens, {1, static_cast<int64_t>(tokens.size())});
}

// ---- 1. structure --------------------------------------------------------------------------

TEST(TransformerStructure, ParameterNamesAndShapesFollowCS336) {
  Generator gen(0);
  TransformerLM model(small_config(AttentionKind::Standard), &gen, F64);
  std::map<std::string, Shape> got;
  for (const auto& [name, p] : model.named_parameters()) got[name] = p.shape();

  std::map<std::string, Shape> expected = {{"token_embeddings.weight", {kV, kD}},
                                           {"ln_final.weight", {kD}},
                                           {"lm_head.weight", {kV, kD}}};
  for (int l = 0; l < kL; ++l) {
    const std::string p = "layers." + std::to_string(l) + ".";
    for (const char* proj : {"q_proj", "k_proj", "v_proj", "output_proj"}) expected[p + "attn." + proj + ".weight"] = {kD, kD};
    expected[p + "ln1.weight"] = {kD};
    expected[p + "ln2.weight"] = {kD};
    expected[p + "ffn.w1.weight"] = {kFF, kD};
    expected[p + "ffn.w2.weight"] = {kD, kFF};
    expected[p + "ffn.w3.weight"] = {kFF, kD};
  }
  EXPECT_EQ(got, expected);

  // The RoPE table is a non-persistent buffer: the state_dict holds exactly the parameters.
  std::set<std::string> keys;
  for (const auto& [name, t] : model.state_dict()) keys.insert(name);
  std::set<std::string> param_names;
  for (const auto& [name, shape] : expected) param_names.insert(name);
  EXPECT_EQ(keys, param_names);
}

TEST(TransformerStructure, VariantSpecificParameterNames) {
  Generator gen(0);
  TransformerLM w2(small_config(AttentionKind::W2), &gen, F64);
  std::map<std::string, Shape> w2_params;
  for (const auto& [name, p] : w2.named_parameters()) w2_params[name] = p.shape();
  EXPECT_EQ(w2_params.at("layers.1.attn.sigma_q_proj.weight"), (Shape{kH, kD}));  // scalar sigma: (H, D)
  EXPECT_EQ(w2_params.at("layers.1.attn.sigma_k_proj.weight"), (Shape{kH, kD}));
  EXPECT_EQ(w2_params.at("layers.1.attn.temperature"), (Shape{kH}));

  TransformerLM triple(small_config(AttentionKind::Triple), &gen, F64);
  std::map<std::string, Shape> tri_params;
  for (const auto& [name, p] : triple.named_parameters()) tri_params[name] = p.shape();
  EXPECT_EQ(tri_params.at("layers.0.attn.r_proj.weight"), (Shape{kD, kD}));
  EXPECT_EQ(tri_params.count("layers.0.attn.sigma_q_proj.weight"), 0u);
}

// Attention parameters per layer, by hand (docs/appendix-a-formulas.md, attention): standard W_q, W_k, W_v, W_o;
// W2 adds two sigma projections and one temperature per head; triple adds W_r.
int64_t attention_params(AttentionKind kind, SigmaMode sigma) {
  switch (kind) {
    case AttentionKind::Standard: return 4 * kD * kD;
    case AttentionKind::W2:
      return 4 * kD * kD + 2 * (sigma == SigmaMode::Scalar ? kH * kD : kD * kD) + kH;
    case AttentionKind::Triple: return 5 * kD * kD;
  }
  return -1;
}

struct CountCase {
  AttentionKind kind;
  SigmaMode sigma;
  int64_t attn;   // by hand, for D 8, H 2
  int64_t total;  // by hand: V D + L (attn + 3 D d_ff + 2 D) + D + V D
};

TEST(TransformerStructure, ParameterCountsByHandForEveryVariant) {
  // V D = 88, per layer FFN 3*8*16 = 384 and two norms 16, ln_final 8, head 88.
  const std::vector<CountCase> cases = {
      {AttentionKind::Standard, SigmaMode::Scalar, 256, 88 + 2 * (256 + 384 + 16) + 8 + 88},  // 1496
      {AttentionKind::W2, SigmaMode::Scalar, 256 + 32 + 2, 88 + 2 * (290 + 384 + 16) + 8 + 88},
      {AttentionKind::W2, SigmaMode::Vector, 256 + 128 + 2, 88 + 2 * (386 + 384 + 16) + 8 + 88},
      {AttentionKind::Triple, SigmaMode::Scalar, 320, 88 + 2 * (320 + 384 + 16) + 8 + 88},
  };
  for (const CountCase& c : cases) {
    SCOPED_TRACE(kind_label(c.kind) + (c.sigma == SigmaMode::Vector ? " (vector sigma)" : ""));
    ASSERT_EQ(attention_params(c.kind, c.sigma), c.attn);  // the formula agrees with the arithmetic
    Generator gen(0);
    TransformerLM model(small_config(c.kind, c.sigma), &gen, F64);
    EXPECT_EQ(model.num_parameters(), c.total);
    EXPECT_EQ((*model.layers)[0].attn->num_parameters(), c.attn);

    const auto counts = model.parameter_counts();
    const std::vector<std::pair<std::string, int64_t>> expected = {
        {"token_embeddings", kV * kD}, {"layers.0", c.attn + 3 * kD * kFF + 2 * kD},
        {"layers.1", c.attn + 3 * kD * kFF + 2 * kD}, {"ln_final", kD}, {"lm_head", kV * kD},
        {"total", c.total}};
    EXPECT_EQ(counts, expected);
    int64_t sum = 0;
    for (const auto& [name, n] : counts) sum += name == "total" ? 0 : n;
    EXPECT_EQ(sum, model.num_parameters());
  }
  EXPECT_EQ(cases[0].total, 1496);
}

TEST(TransformerStructure, DefaultFeedForwardWidthIsEightThirdsRoundedTo64) {
  TransformerConfig c = small_config(AttentionKind::Standard);
  c.d_ff = 0;
  c.d_model = 96;  // 8/3 * 96 = 256 exactly
  c.num_heads = 4;
  Generator gen(0);
  TransformerLM a(c, &gen);
  EXPECT_EQ(a.state_dict().at("layers.0.ffn.w1.weight").shape(), (Shape{256, 96}));
  c.d_model = 104;  // 8/3 * 104 = 277.3 -> 320
  TransformerLM b(c, &gen);
  EXPECT_EQ(b.state_dict().at("layers.0.ffn.w1.weight").shape(), (Shape{320, 104}));
}

TEST(TransformerStructure, TiedEmbeddingsDropTheHeadAndUseETransposed) {
  TransformerConfig c = small_config(AttentionKind::Standard);
  c.tie_embeddings = true;
  Generator gen_tied(3);
  TransformerLM tied(c, &gen_tied, F64);
  EXPECT_EQ(tied.lm_head, nullptr);
  for (const auto& [name, p] : tied.named_parameters()) EXPECT_THAT(name, ::testing::Not(HasSubstr("lm_head")));
  EXPECT_EQ(tied.num_parameters(), 1496 - kV * kD);
  const auto counts = tied.parameter_counts();
  EXPECT_EQ(counts.back(), (std::pair<std::string, int64_t>{"total", 1496 - kV * kD}));

  // An untied model holding the same weights, with lm_head.weight = E, must give
  // the same logits: tied logits are h E^T.
  c.tie_embeddings = false;
  Generator gen_untied(99);
  TransformerLM untied(c, &gen_untied, F64);
  StateDict state = tied.state_dict();
  state["lm_head.weight"] = tied.token_embeddings->weight;
  untied.load_state_dict(state);

  const Tensor ids = tensor_i64({1, 4, 10, 0, 7, 7, 2, 3, 5, 9}, {2, 5});
  const Tensor lt = tied.forward(ids);
  const Tensor lu = untied.forward(ids);
  EXPECT_EQ(lt.shape(), (Shape{2, 5, kV}));
  EXPECT_LT(max_abs_diff(lt, lu), 1e-12);

  // The embedding's gradient collects both uses: input lookup and output head.
  backward(sum(lt));
  backward(sum(lu));
  const Tensor expected_grad = untied.token_embeddings->weight.grad() + untied.lm_head->weight.grad();
  EXPECT_LT(max_abs_diff(tied.token_embeddings->weight.grad(), expected_grad), 1e-10);
  EXPECT_GT(max_abs_diff(untied.lm_head->weight.grad(), zeros({kV, kD}, F64)), 1e-3);  // the head part is real
}

// The GEMM trace (tensor/kernels.h), under the benchmarks' GEMM floor, sees
// every product of a training step once: per layer q, k, v, o (D x D each),
// the SwiGLU's three (D x d_ff), q k^T and P v over every (query, key) pair
// (the materialised kernels compute the masked half too), the LM head
// (D x V); the backward forms two products per forward one.
TEST(TransformerGemmTrace, AStepsProductsAreThreeTimesTheForwardCountedByHand) {
  Generator gen(3);
  const TransformerConfig c = small_config(AttentionKind::Standard);
  TransformerLM model(c, &gen, F64);
  const int64_t b = 3, t = kCtx, dh = kD / kH;
  const Tensor ids = randint(0, kV, {b, t}, &gen), targets = randint(0, kV, {b, t}, &gen);
  std::vector<kernels::GemmCall> calls;
  {
    const kernels::GemmTrace trace;
    backward(cross_entropy(model.forward(ids), targets));
    calls = trace.calls();
  }
  double flops = 0;
  for (const auto& call : calls) {
    EXPECT_EQ(call.dtype, F64);
    flops += 2.0 * call.m * call.n * call.k * call.count;
  }
  const double weights = kL * (4 * kD * kD + 3 * kD * kFF) + kD * kV;
  const double forward = 2.0 * b * t * weights + kL * 2 * 2.0 * b * kH * t * t * dh;
  EXPECT_EQ(flops, 3 * forward);
}

// ---- 2. forward ------------------------------------------------------------------------------

TEST(TransformerForward, ShapesAndDtypes) {
  for (AttentionKind kind : kAllKinds) {
    SCOPED_TRACE(kind_label(kind));
    Generator gen(1);
    TransformerLM m32(small_config(kind), &gen);
    const Tensor ids = tensor_i64({0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 0}, {3, 4});
    const Tensor l32 = m32.forward(ids);
    EXPECT_EQ(l32.shape(), (Shape{3, 4, kV}));
    EXPECT_EQ(l32.dtype(), DType::Float32);
    TransformerLM m64(small_config(kind), &gen, F64);
    const Tensor l64 = m64.forward(tensor_i64({3, 1, 4, 1, 5, 9, 2, 6}, {1, kCtx}));  // the full context
    EXPECT_EQ(l64.shape(), (Shape{1, kCtx, kV}));
    EXPECT_EQ(l64.dtype(), F64);
    for (double x : l64.to_vector<double>()) ASSERT_TRUE(std::isfinite(x));
  }
}

TEST(TransformerForward, CausalForEveryVariant) {
  const std::vector<int64_t> base = {3, 1, 4, 1, 5, 9, 2, 6};
  for (AttentionKind kind : kAllKinds) {
    Generator gen(5);
    TransformerLM model(small_config(kind), &gen, F64);
    const Tensor before = model.forward(ids_1xT(base));
    for (int64_t t = 0; t < kCtx; ++t) {
      SCOPED_TRACE(kind_label(kind) + ", token " + std::to_string(t) + " changed");
      std::vector<int64_t> changed = base;
      changed[t] = (changed[t] + 5) % kV;
      const Tensor after = model.forward(ids_1xT(changed));
      for (int64_t s = 0; s < kCtx; ++s) {
        const std::vector<double> a = row(before, 0, s), b = row(after, 0, s);
        double diff = 0;
        for (size_t i = 0; i < a.size(); ++i) diff = std::max(diff, std::abs(a[i] - b[i]));
        if (s < t) {
          EXPECT_LT(diff, 1e-12) << "logits at " << s << " saw the future token " << t;
        } else if (s == t) {
          EXPECT_GT(diff, 1e-6) << "logits at " << t << " ignore their own token";
        }
      }
    }
  }
}

TEST(TransformerForward, KVCacheIncrementalLogitsEqualFullRecomputation) {
  Generator gen(7);
  TransformerLM model(small_config(AttentionKind::Standard), &gen, F64);
  const Tensor ids = tensor_i64({3, 1, 4, 1, 5, 9, 2, 6, 10, 0, 7, 7, 2, 3, 5, 8}, {2, kCtx});
  const Tensor full = model.forward(ids);  // (2, 8, V)

  for (const bool explicit_positions : {true, false}) {
    SCOPED_TRACE(explicit_positions ? "positions passed" : "positions from the cache length");
    std::vector<KVCache> caches;
    // A 3-token prompt, then one token at a time.
    const Tensor prompt = kernels::contiguous(kernels::narrow(ids, 1, 0, 3));
    const Tensor first = model.forward(prompt, &caches, explicit_positions ? arange(int64_t{0}, int64_t{3}) : Tensor());
    ASSERT_EQ(caches.size(), static_cast<size_t>(kL));
    EXPECT_EQ(caches[0].length(), 3);
    ASSERT_EQ(first.shape(), (Shape{2, 3, kV}));
    for (int64_t b = 0; b < 2; ++b) {
      for (int64_t t = 0; t < 3; ++t) {
        const std::vector<double> x = row(first, b, t), y = row(full, b, t);
        for (int64_t v = 0; v < kV; ++v) EXPECT_NEAR(x[v], y[v], 1e-10) << "b " << b << " t " << t;
      }
    }
    for (int64_t t = 3; t < kCtx; ++t) {
      const Tensor step = kernels::contiguous(kernels::narrow(ids, 1, t, 1));  // (2, 1)
      const Tensor out = model.forward(step, &caches, explicit_positions ? arange(t, t + 1) : Tensor());
      ASSERT_EQ(out.shape(), (Shape{2, 1, kV}));
      EXPECT_EQ(caches[1].length(), t + 1);
      for (int64_t b = 0; b < 2; ++b) {
        const std::vector<double> x = row(out, b, 0), y = row(full, b, t);
        for (int64_t v = 0; v < kV; ++v) EXPECT_NEAR(x[v], y[v], 1e-10) << "b " << b << " t " << t;
      }
    }
  }
}

// ---- 3. decoding ------------------------------------------------------------------------------

// Greedy decoding written out: the whole (windowed) sequence through the
// model each step, no cache, argmax of the last position.
std::vector<int64_t> greedy_reference(TransformerLM& model, std::vector<int64_t> tokens, int64_t n) {
  NoGradGuard no_grad;
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) {
    const size_t start = tokens.size() > static_cast<size_t>(kCtx) ? tokens.size() - kCtx : 0;
    const std::vector<int64_t> window(tokens.begin() + static_cast<std::ptrdiff_t>(start), tokens.end());
    const Tensor logits = model.forward(ids_1xT(window));
    const int64_t next = argmax_of(row(logits, 0, static_cast<int64_t>(window.size()) - 1));
    tokens.push_back(next);
    out.push_back(next);
  }
  return out;
}

TEST(TransformerGenerate, GreedyEqualsArgmaxLoopWithAndWithoutCache) {
  for (AttentionKind kind : kAllKinds) {
    Generator init(11);
    TransformerLM model(small_config(kind), &init, F64);
    const std::vector<int64_t> prompt = {2, 7, 1};
    // 3 + 10 tokens overflow the context of 8: the window slides.
    const std::vector<int64_t> expected = greedy_reference(model, prompt, 10);
    for (const bool cache : {false, true}) {
      SCOPED_TRACE(kind_label(kind) + (cache ? ", cache on" : ", cache off"));
      GenerateOptions o;
      o.max_new_tokens = 10;
      o.temperature = 0;
      o.use_cache = cache;
      Generator gen(0);
      o.generator = &gen;
      EXPECT_EQ(model.generate(prompt, o), expected);
    }
  }
}

TEST(TransformerGenerate, GreedyWithCacheWithinTheContext) {
  // Fully inside the context, so every step after the prompt uses the cache.
  Generator init(12);
  TransformerLM model(small_config(AttentionKind::Standard), &init, F64);
  const std::vector<int64_t> prompt = {5};
  const std::vector<int64_t> expected = greedy_reference(model, prompt, kCtx - 1);
  GenerateOptions o;
  o.max_new_tokens = kCtx - 1;
  o.temperature = 0;
  EXPECT_EQ(model.generate(prompt, o), expected);
}

TEST(TransformerGenerate, StopTokenEndsGenerationAndIsIncluded) {
  Generator init(13);
  TransformerLM model(small_config(AttentionKind::Standard), &init, F64);
  const std::vector<int64_t> prompt = {4, 4, 9};
  GenerateOptions o;
  o.max_new_tokens = 10;
  o.temperature = 0;
  const std::vector<int64_t> all = model.generate(prompt, o);
  ASSERT_EQ(all.size(), 10u);
  const int64_t stop = all[2];
  const size_t first = static_cast<size_t>(std::find(all.begin(), all.end(), stop) - all.begin());  // <= 2
  o.stop_token = stop;
  const std::vector<int64_t> stopped = model.generate(prompt, o);
  EXPECT_EQ(stopped, std::vector<int64_t>(all.begin(), all.begin() + static_cast<std::ptrdiff_t>(first) + 1));
  EXPECT_EQ(stopped.back(), stop);

  o.max_new_tokens = 0;
  EXPECT_TRUE(model.generate(prompt, o).empty());
}

TEST(TransformerGenerate, TinyTopPIsGreedyAndRestoresTrainingMode) {
  Generator init(14);
  TransformerLM model(small_config(AttentionKind::W2), &init, F64);
  model.train();
  const std::vector<int64_t> prompt = {1, 2, 3};
  GenerateOptions greedy;
  greedy.max_new_tokens = 6;
  greedy.temperature = 0;
  const std::vector<int64_t> expected = model.generate(prompt, greedy);
  GenerateOptions nucleus = greedy;
  nucleus.temperature = 1.0;
  nucleus.top_p = 1e-9;  // only the most likely token survives
  Generator gen(42);
  nucleus.generator = &gen;
  EXPECT_EQ(model.generate(prompt, nucleus), expected);
  EXPECT_TRUE(model.is_training());  // generate switches to eval and back
}

TEST(TransformerGenerate, SameSeedSameSamples) {
  Generator init(15);
  TransformerLM model(small_config(AttentionKind::Triple), &init, F64);
  GenerateOptions o;
  o.max_new_tokens = 12;
  o.temperature = 1.5;
  Generator g1(8), g2(8), g3(9);
  o.generator = &g1;
  const auto a = model.generate({0}, o);
  o.generator = &g2;
  const auto b = model.generate({0}, o);
  o.generator = &g3;
  const auto c = model.generate({0}, o);
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);  // 12 draws at temperature 1.5 over 11 tokens: a collision is ~impossible
}

// Empirical frequencies of sample_token over `n` seeded draws.
std::vector<double> frequencies(const Tensor& logits, double temperature, double top_p, int n) {
  Generator gen(2024);
  std::vector<int> count(static_cast<size_t>(logits.numel()), 0);
  for (int i = 0; i < n; ++i) ++count.at(static_cast<size_t>(sample_token(logits, temperature, top_p, gen)));
  std::vector<double> f;
  for (int k : count) f.push_back(static_cast<double>(k) / n);
  return f;
}

std::vector<double> softmax_of(const std::vector<double>& z, double temperature) {
  std::vector<double> p(z.size());
  double total = 0;
  for (size_t i = 0; i < z.size(); ++i) total += p[i] = std::exp(z[i] / temperature);
  for (double& x : p) x /= total;
  return p;
}

TEST(SampleToken, FrequenciesMatchSoftmax) {
  const std::vector<double> z = {1.0, 2.0, 0.5, -1.0};
  const Tensor logits = tensor(z, {4}, F64);
  constexpr int kDraws = 20000;  // binomial sd <= 0.0036; bound 0.015 is > 4 sd
  for (const double temperature : {1.0, 2.0, 0.5}) {
    SCOPED_TRACE("temperature " + std::to_string(temperature));
    const std::vector<double> p = softmax_of(z, temperature);
    const std::vector<double> f = frequencies(logits, temperature, 1.0, kDraws);
    for (size_t i = 0; i < p.size(); ++i) EXPECT_NEAR(f[i], p[i], 0.015) << "token " << i;
  }
  // softmax(z) = [0.2242, 0.6095, 0.1360, 0.0303]: check the arithmetic the bounds rest on.
  EXPECT_NEAR(softmax_of(z, 1.0)[1], 0.6095, 1e-4);
  EXPECT_NEAR(softmax_of(z, 1.0)[3], 0.0303, 1e-4);
}

TEST(SampleToken, TopPKeepsTheSmallestNucleusAndRenormalises) {
  // p = [0.2242, 0.6095, 0.1360, 0.0303]: top_p 0.8 keeps {1, 0} (mass 0.8337)
  // and samples them as 0.6095/0.8337 = 0.7311 and 0.2689; tokens 2, 3 never.
  const Tensor logits = tensor({1.0, 2.0, 0.5, -1.0}, F64);
  const std::vector<double> f = frequencies(logits, 1.0, 0.8, 20000);
  EXPECT_NEAR(f[1], 0.7311, 0.015);
  EXPECT_NEAR(f[0], 0.2689, 0.015);
  EXPECT_EQ(f[2], 0.0);
  EXPECT_EQ(f[3], 0.0);
  // top_p 0.5 < p_max: the nucleus is the top token alone.
  const std::vector<double> g = frequencies(logits, 1.0, 0.5, 2000);
  EXPECT_EQ(g[1], 1.0);
  // top_p 0.9 adds token 2 (0.8337 + 0.1360 = 0.9697) but not token 3.
  const std::vector<double> h = frequencies(logits, 1.0, 0.9, 20000);
  EXPECT_GT(h[2], 0.1);
  EXPECT_EQ(h[3], 0.0);
}

TEST(SampleToken, TemperatureZeroIsArgmax) {
  Generator gen(1);
  EXPECT_EQ(sample_token(tensor({0.1, -3.0, 2.5, 2.4}, F64), 0.0, 1.0, gen), 2);
  EXPECT_EQ(sample_token(tensor({7.0, 1.0, 7.0}, F64), 0.0, 0.3, gen), 0);  // ties: the first, as torch.argmax
  EXPECT_EQ(sample_token(tensor({-1.0, 5.0}), 0.0, 1.0, gen), 1);        // float32 logits too
}

// ---- 4. bad inputs ----------------------------------------------------------------------------

TEST(TransformerErrors, BadIdsAndLengths) {
  Generator gen(0);
  TransformerLM model(small_config(AttentionKind::Standard), &gen, F64);
  std::string msg = error_of([&] { model.forward(tensor({1.0, 2.0}, {1, 2}, F64)); });
  EXPECT_THAT(msg, HasSubstr("TransformerLM"));
  EXPECT_THAT(msg, HasSubstr("int64"));
  EXPECT_THAT(msg, HasSubstr("float64"));

  msg = error_of([&] { model.forward(tensor_i64({1, 2, 3})); });  // 1-D, not (B, T)
  EXPECT_THAT(msg, HasSubstr("TransformerLM"));
  EXPECT_THAT(msg, HasSubstr("[3]"));

  msg = error_of([&] { model.forward(tensor_i64(std::vector<int64_t>(kCtx + 1, 1), {1, kCtx + 1})); });
  EXPECT_THAT(msg, HasSubstr("TransformerLM"));
  EXPECT_THAT(msg, HasSubstr("9"));
  EXPECT_THAT(msg, HasSubstr("context length 8"));

  msg = error_of([&] { model.forward(tensor_i64({1, kV}, {1, 2})); });  // id 11 outside [0, 11)
  EXPECT_THAT(msg, HasSubstr("embedding"));
  EXPECT_THAT(msg, HasSubstr("11"));
}

TEST(TransformerErrors, CacheNeedsStandardAttention) {
  for (AttentionKind kind : {AttentionKind::W2, AttentionKind::Triple}) {
    Generator gen(0);
    TransformerLM model(small_config(kind), &gen, F64);
    std::vector<KVCache> caches;
    const std::string msg = error_of([&] { model.forward(tensor_i64({1, 2}, {1, 2}), &caches); });
    EXPECT_THAT(msg, HasSubstr("TransformerLM"));
    EXPECT_THAT(msg, HasSubstr("cache"));
    EXPECT_THAT(msg, HasSubstr(attention_kind_name(kind)));
  }
}

TEST(TransformerErrors, BadGenerateAndSamplingOptions) {
  Generator gen(0);
  TransformerLM model(small_config(AttentionKind::Standard), &gen, F64);
  GenerateOptions o;
  std::string msg = error_of([&] { model.generate({}, o); });
  EXPECT_THAT(msg, HasSubstr("generate"));
  EXPECT_THAT(msg, HasSubstr("prompt"));

  o.max_new_tokens = -1;
  msg = error_of([&] { model.generate({1}, o); });
  EXPECT_THAT(msg, HasSubstr("generate"));
  EXPECT_THAT(msg, HasSubstr("-1"));

  o.max_new_tokens = 3;
  o.temperature = -0.5;
  msg = error_of([&] { model.generate({1}, o); });
  EXPECT_THAT(msg, HasSubstr("temperature"));
  EXPECT_THAT(msg, HasSubstr("-0.5"));

  const Tensor logits = tensor({0.0, 1.0, 2.0}, F64);
  msg = error_of([&] { sample_token(logits, -1.0, 1.0, gen); });
  EXPECT_THAT(msg, HasSubstr("sample_token"));
  EXPECT_THAT(msg, HasSubstr("temperature must be >= 0, got -1"));
  for (const double p : {0.0, -0.25, 1.5}) {
    msg = error_of([&] { sample_token(logits, 1.0, p, gen); });
    EXPECT_THAT(msg, HasSubstr("sample_token"));
    EXPECT_THAT(msg, HasSubstr("top_p"));
    EXPECT_THAT(msg, HasSubstr(fmt::format("got {}", p)));
  }
  msg = error_of([&] { sample_token(tensor({0.0, 1.0}, {1, 2}, F64), 1.0, 1.0, gen); });
  EXPECT_THAT(msg, HasSubstr("sample_token"));
  EXPECT_THAT(msg, HasSubstr("[1, 2]"));
}

TEST(TransformerErrors, BadConfigAndAttentionName) {
  TransformerConfig c = small_config(AttentionKind::Standard);
  c.num_heads = 3;  // 8 % 3 != 0
  std::string msg = error_of([&] { TransformerLM m(c); });
  EXPECT_THAT(msg, HasSubstr("TransformerLM"));
  EXPECT_THAT(msg, HasSubstr("d_model 8"));
  EXPECT_THAT(msg, HasSubstr("num_heads 3"));

  c = small_config(AttentionKind::Standard);
  c.num_layers = 0;
  msg = error_of([&] { TransformerLM m(c); });
  EXPECT_THAT(msg, HasSubstr("TransformerLM"));
  EXPECT_THAT(msg, HasSubstr("num_layers"));

  msg = error_of([] { parse_attention_kind("w3"); });
  EXPECT_THAT(msg, HasSubstr("attention"));
  EXPECT_THAT(msg, HasSubstr("'w3'"));
  EXPECT_EQ(parse_attention_kind("standard"), AttentionKind::Standard);
  EXPECT_EQ(parse_attention_kind("w2"), AttentionKind::W2);
  EXPECT_EQ(parse_attention_kind("triple"), AttentionKind::Triple);
}

}  // namespace

// Data-parallel training (dist/mpi/data_parallel.h) starts sending a parameter's
// gradient from its gradient-ready hook: in the model the head's gradient is
// complete first and the embedding's last, every parameter's exactly once,
// and the hooks change no gradient bit.
TEST(TransformerGradReadyHooks, HeadFirstEmbeddingLastEachOnceSameGradients) {
  for (AttentionKind kind : kAllKinds) {
    SCOPED_TRACE(kind_label(kind));
    Generator gen(5);
    TransformerLM model(small_config(kind), &gen, F64);
    const Tensor ids = randint(0, kV, {2, kCtx}, &gen), targets = randint(0, kV, {2, kCtx}, &gen);
    backward(cross_entropy(model.forward(ids), targets));
    std::map<std::string, std::vector<double>> plain;
    for (auto& [name, p] : model.named_parameters()) {
      plain[name] = p.grad().to_vector<double>();
      p.set_grad(Tensor());
    }
    std::vector<std::string> fired;
    std::vector<GradReadyHookHandle> hooks;
    for (auto& [name, p] : model.named_parameters()) {
      hooks.push_back(register_grad_ready_hook(p, [&fired, name = name](const Tensor&) { fired.push_back(name); }));
    }
    backward(cross_entropy(model.forward(ids), targets));
    ASSERT_EQ(fired.size(), plain.size());
    EXPECT_EQ(fired.front(), "lm_head.weight");
    EXPECT_EQ(fired.back(), "token_embeddings.weight");
    EXPECT_EQ(std::set<std::string>(fired.begin(), fired.end()).size(), fired.size());
    for (auto& [name, p] : model.named_parameters()) EXPECT_EQ(p.grad().to_vector<double>(), plain[name]) << name;
  }
}
