// Tiled attention with an online softmax (nn/fast/attention_tiled.h) for the three
// variants — standard, W2 (scalar and vector sigma), triple product — against
// the materialised kernels of nn/attention_scores.h followed by P v.
//
// 1. float64 gradchecks (full Jacobian) of each tiled variant, every mask kind,
//    with tiles that do not divide T.
// 2. tiled == materialised in float64 (|a - e| <= 1e-12 + 1e-10 |e|): outputs
//    and d(sum(out * w))/d(every input), every mask kind, tiles that do not
//    divide T, cross-attention with a causal offset, fully masked rows.
// 3. the same in float32, within the float32 error bound (test_util.h).
// 4. memory: what the tiled forward keeps for backward grows linearly in T
//    (the materialised one quadratically), from the allocator's statistics.
// 5. the dispatch: forcing either path, the modules on both paths, fallbacks.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "nn/attention.h"
#include "nn/attention_scores.h"
#include "nn/attention_path.h"
#include "nn/fast/attention_tiled.h"
#include "nn/functional.h"
#include "nn/triple_attention.h"
#include "nn/w2_attention.h"
#include "tensor/random.h"
#include "tensor/storage.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::nn;
using namespace ropegrad::testing;

namespace {

enum class Variant { Dot, W2Scalar, W2Vector, Triple };
const std::vector<Variant> kVariants = {Variant::Dot, Variant::W2Scalar, Variant::W2Vector, Variant::Triple};

std::string variant_name(Variant v) {
  switch (v) {
    case Variant::Dot: return "dot";
    case Variant::W2Scalar: return "w2_scalar";
    case Variant::W2Vector: return "w2_vector";
    case Variant::Triple: return "triple";
  }
  return "";
}

struct Dims {
  int64_t b = 2, h = 2, nq = 5, nk = 5, dh = 3, dv = 2;
};

// The float64 leaves of a variant, in the order attend() takes them.
std::vector<Tensor> make_leaves(Variant v, const Dims& d, uint64_t seed) {
  Generator gen(seed);
  const auto normal = [&](Shape s) { return randn(s, DType::Float64, &gen); };
  const Shape qs{d.b, d.h, d.nq, d.dh}, ks{d.b, d.h, d.nk, d.dh}, vs{d.b, d.h, d.nk, d.dv};
  switch (v) {
    case Variant::Dot: return {normal(qs), normal(ks), normal(vs)};
    case Variant::Triple: return {normal(qs), normal(ks), normal(qs), normal(vs)};
    case Variant::W2Scalar:
    case Variant::W2Vector: {
      const bool scalar = v == Variant::W2Scalar;
      const Shape sq = scalar ? Shape{d.b, d.h, d.nq} : qs, sk = scalar ? Shape{d.b, d.h, d.nk} : ks;
      Tensor sigma_q = rand(sq, DType::Float64, &gen) + 0.5, sigma_k = rand(sk, DType::Float64, &gen) + 0.5;
      std::vector<double> tau;
      for (int64_t i = 0; i < d.h; ++i) tau.push_back(1.5 + static_cast<double>(i));
      return {normal(qs), normal(ks), sigma_q, sigma_k, tensor(tau, {d.h}, DType::Float64), normal(vs)};
    }
  }
  return {};
}

// softmax(S + mask) v, tiled or through the materialised probabilities.
Tensor attend(Variant v, bool tiled, const std::vector<Tensor>& in, const ScoreMask& m, TileSizes tiles = {}) {
  const double dh = static_cast<double>(in[0].size(3));
  switch (v) {
    case Variant::Dot: {
      const double scale = 1 / std::sqrt(dh);
      return tiled ? dot_attention_tiled(in[0], in[1], in[2], scale, m, tiles)
                   : matmul(dot_attention_probs(in[0], in[1], scale, m), in[2]);
    }
    case Variant::W2Scalar:
    case Variant::W2Vector:
      return tiled ? w2_attention_tiled(in[0], in[1], in[2], in[3], in[4], in[5], m, 1e-6, tiles)
                   : matmul(w2_attention_probs(in[0], in[1], in[2], in[3], in[4], m), in[5]);
    case Variant::Triple: {
      const double scale = std::pow(dh, -1.5);
      return tiled ? triple_attention_tiled(in[0], in[1], in[2], in[3], scale, m, tiles)
                   : matmul(triple_attention_probs(in[0], in[1], in[2], scale, m), in[3]);
    }
  }
  return Tensor();
}

// The output and the gradient of sum(out * w) w.r.t. every leaf (fresh copies
// of `leaves`, made to require grad).
NamedTensors run_once(Variant v, bool tiled, const std::vector<Tensor>& leaves, const ScoreMask& m, TileSizes tiles,
                      const Tensor& w) {
  std::vector<Tensor> in;
  for (const Tensor& t : leaves) in.push_back(clone(t).detach().requires_grad_());
  const Tensor out = attend(v, tiled, in, m, tiles);
  backward(sum(out * to(w, out.dtype())));
  NamedTensors r{{"out", out.detach()}};
  for (size_t i = 0; i < in.size(); ++i) r.emplace_back("grad" + std::to_string(i), in[i].grad());
  return r;
}

ScoreMask mask_of(ScoreMaskKind kind, const Dims& d, DType dtype = DType::Float64) {
  ScoreMask m = score_mask(kind, d.b, d.h, d.nq, d.nk);
  if (m.mask.defined() && m.mask.is_floating_point()) m.mask = to(m.mask, dtype);
  return m;
}

using VariantMask = std::tuple<Variant, ScoreMaskKind>;
std::string case_name(const ::testing::TestParamInfo<VariantMask>& info) {
  return variant_name(std::get<0>(info.param)) + "_" + score_mask_name(std::get<1>(info.param));
}

// Restores the automatic choice when a test that forced a path ends.
struct ForcePath {
  explicit ForcePath(AttentionPath p) { set_attention_path(p); }
  ~ForcePath() { set_attention_path(AttentionPath::Auto); }
};

// ---- 1. gradchecks (float64) ---------------------------------------------------------------------

class TiledGradcheck : public ::testing::TestWithParam<VariantMask> {};

TEST_P(TiledGradcheck, EveryInput) {
  // Plain variables, not a structured binding: clang 14 cannot capture one in a lambda.
  const auto variant = std::get<0>(GetParam());
  const auto kind = std::get<1>(GetParam());
  const Dims d;  // T = 5 with 2 x 3 tiles: neither divides it
  const ScoreMask m = mask_of(kind, d);
  std::vector<Tensor> in = make_leaves(variant, d, 61);
  for (Tensor& t : in) t.requires_grad_();
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& x) { return attend(variant, true, x, m, TileSizes{2, 3}); }, in);
  EXPECT_TRUE(r.passed) << r.report;
}

INSTANTIATE_TEST_SUITE_P(Variants, TiledGradcheck,
                         ::testing::Combine(::testing::ValuesIn(kVariants), ::testing::ValuesIn(kScoreMaskKinds)),
                         case_name);

TEST(TiledGradcheckOffset, CausalWithOffsetAndFullyMaskedRows) {
  // Nq = 4 queries over Nk = 6 keys with offset -1: query 0 sees no key.
  Dims d;
  d.nq = 4, d.nk = 6;
  ScoreMask m;
  m.causal = true;
  m.causal_offset = -1;
  for (Variant v : kVariants) {
    std::vector<Tensor> in = make_leaves(v, d, 62);
    for (Tensor& t : in) t.requires_grad_();
    const GradcheckResult r =
        gradcheck([&](const std::vector<Tensor>& x) { return attend(v, true, x, m, TileSizes{3, 4}); }, in);
    EXPECT_TRUE(r.passed) << variant_name(v) << "\n" << r.report;
  }
}

// ---- 2. tiled == materialised, float64 ------------------------------------------------------------

void expect_paths_agree_f64(Variant v, const Dims& d, const ScoreMask& m, TileSizes tiles, const std::string& label) {
  const std::vector<Tensor> leaves = make_leaves(v, d, 63);
  Generator gen(64);
  const Tensor w = randn({d.b, d.h, d.nq, d.dv}, DType::Float64, &gen);
  const NamedTensors tiled = run_once(v, true, leaves, m, tiles, w);
  const NamedTensors reference = run_once(v, false, leaves, m, tiles, w);
  for (size_t i = 0; i < tiled.size(); ++i) {
    expect_close(tiled[i].second, reference[i].second, 1e-10, 1e-12, label + " " + tiled[i].first);
  }
}

class TiledParity64 : public ::testing::TestWithParam<VariantMask> {};

TEST_P(TiledParity64, OutputAndGradientsEqualTheMaterialisedPath) {
  // Plain variables, not a structured binding: clang 14 cannot capture one in a lambda.
  const auto variant = std::get<0>(GetParam());
  const auto kind = std::get<1>(GetParam());
  Dims d;
  d.nq = d.nk = 13, d.dh = 8, d.dv = 6;
  for (const TileSizes tiles : {TileSizes{4, 5}, TileSizes{13, 13}, TileSizes{1, 1}, TileSizes{64, 128}}) {
    expect_paths_agree_f64(variant, d, mask_of(kind, d), tiles,
                           "tiles " + std::to_string(tiles.query) + "x" + std::to_string(tiles.key));
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, TiledParity64,
                         ::testing::Combine(::testing::ValuesIn(kVariants), ::testing::ValuesIn(kScoreMaskKinds)),
                         case_name);

TEST(TiledParity64Cross, CausalOffsetsAndMasksOnCrossAttention) {
  Dims d;
  d.nq = 6, d.nk = 11, d.dh = 5, d.dv = 3;
  for (Variant v : kVariants) {
    for (const int64_t offset : {5, 0, -2, -6}) {  // -2: two empty rows; -6: every row empty
      ScoreMask m;
      m.causal = true;
      m.causal_offset = offset;
      expect_paths_agree_f64(v, d, m, TileSizes{4, 3}, variant_name(v) + " offset " + std::to_string(offset));
    }
    // causal together with a padding mask and with an additive bias
    for (ScoreMaskKind kind : {ScoreMaskKind::BoolPadding, ScoreMaskKind::Additive}) {
      ScoreMask m = mask_of(kind, d);
      m.causal = true;
      m.causal_offset = 5;
      expect_paths_agree_f64(v, d, m, TileSizes{4, 3}, variant_name(v) + " causal+" + score_mask_name(kind));
    }
  }
}

// ---- fully masked rows -------------------------------------------------------------------------------

TEST(TiledMasks, FullyMaskedRowGivesZerosNotNaN) {
  Dims d;
  d.nq = 5, d.nk = 7;
  // Query 2 of every batch and head may see nothing (bool), query 3 gets -inf everywhere (additive).
  std::vector<bool> keep;
  std::vector<double> bias;
  for (int64_t i = 0; i < d.nq; ++i)
    for (int64_t j = 0; j < d.nk; ++j) {
      keep.push_back(i != 2);
      bias.push_back(i == 3 ? -std::numeric_limits<double>::infinity() : 0.1 * static_cast<double>(j));
    }
  for (Variant v : kVariants) {
    for (const Tensor& mask : {tensor_bool(keep, {d.nq, d.nk}), tensor(bias, {d.nq, d.nk}, DType::Float64)}) {
      const int64_t empty_row = mask.dtype() == DType::Bool ? 2 : 3;
      ScoreMask m;
      m.mask = mask;
      std::vector<Tensor> in = make_leaves(v, d, 65);
      for (Tensor& t : in) t.requires_grad_();
      const Tensor out = attend(v, true, in, m, TileSizes{2, 3});
      backward(sum(out * out));
      EXPECT_TRUE(all_finite(out)) << variant_name(v);
      EXPECT_EQ(max_abs_diff(narrow(out, 2, empty_row, 1), zeros({d.b, d.h, 1, d.dv}, DType::Float64)), 0.0);
      for (const Tensor& t : in) EXPECT_TRUE(all_finite(t.grad())) << variant_name(v);
      // The empty query row gets no gradient.
      EXPECT_EQ(max_abs_diff(narrow(in[0].grad(), 2, empty_row, 1), zeros({d.b, d.h, 1, d.dh}, DType::Float64)), 0.0);
      expect_paths_agree_f64(v, d, m, TileSizes{2, 3}, variant_name(v) + " empty rows");
    }
  }
}

// A NaN in a query gives NaN in that query's output on both paths, not a
// silently finite row (the tiled forward merges tile maxima: NaN must stick).
TEST(TiledMasks, NanInAQueryGivesNanInItsRowOnBothPaths) {
  Dims d;
  d.nq = 5, d.nk = 7;
  for (Variant v : kVariants) {
    std::vector<Tensor> in = make_leaves(v, d, 66);
    std::vector<double> q = in[0].to_vector<double>();
    q[1 * d.dh] = std::numeric_limits<double>::quiet_NaN();  // batch 0, head 0, query 1
    in[0] = tensor(q, in[0].shape(), DType::Float64);
    for (bool tiled : {false, true}) {
      const Tensor out = attend(v, tiled, in, ScoreMask{}, TileSizes{2, 3});
      const std::vector<double> row = narrow(narrow(narrow(out, 0, 0, 1), 1, 0, 1), 2, 1, 1).to_vector<double>();
      for (double x : row) EXPECT_TRUE(std::isnan(x)) << variant_name(v) << (tiled ? " tiled" : " materialised");
      EXPECT_TRUE(all_finite(narrow(out, 0, 1, 1))) << variant_name(v) << ": the other batch is untouched";
    }
  }
}

// ---- 3. tiled == materialised, float32 ------------------------------------------------------------

class TiledParity32 : public ::testing::TestWithParam<VariantMask> {};

TEST_P(TiledParity32, WithinTheFloat32Bound) {
  // Plain variables, not a structured binding: clang 14 cannot capture one in a lambda.
  const auto variant = std::get<0>(GetParam());
  const auto kind = std::get<1>(GetParam());
  Dims d;
  d.nq = d.nk = 9, d.dh = 4, d.dv = 3;
  const TileSizes tiles{4, 5};
  const std::vector<Tensor> leaves = make_leaves(variant, d, 66);
  Generator gen(67);
  const Tensor w = randn({d.b, d.h, d.nq, d.dv}, DType::Float64, &gen);
  const auto run = [&](bool tiled) {
    return [&, tiled](const std::vector<Tensor>& x) {
      return run_once(variant, tiled, x, mask_of(kind, d, x[0].dtype()), tiles, w);
    };
  };
  std::vector<Tensor> leaves32;
  for (const Tensor& t : leaves) leaves32.push_back(to(t, DType::Float32));
  const NamedTensors tiled = run(true)(leaves32), reference = run(false)(leaves32);
  const NamedTensors cond = condition_numbers(run(true), leaves);
  // K: the longest sum (dh, Nk keys, Nq rows); stages: scores, softmax, P v and their backward.
  const F32Bound bound{16, 8};
  for (size_t i = 0; i < tiled.size(); ++i) {
    // The float32 bound, plus 2 stages x gamma(K) x max |e| over the tensor: the
    // tiled backward takes D_i = dO_i . O_i where the materialised one sums
    // P_ij dP_ij. Both are exact in exact arithmetic, but where dS = P (dP - D)
    // cancels to exactly 0 (a causal row that sees one key) their roundings
    // differ at the scale of the tensor, while the condition number there is 0.
    const std::vector<double> c = cond[i].second.to_vector<double>(), e = reference[i].second.to_vector<double>();
    double largest = 0;
    for (double x : e) largest = std::max(largest, std::abs(x));
    const double g = 2 * bound.stages * gamma32(bound.reduction), r = 2 * bound.stages * kUnitRoundoff32;
    const auto allowed = [&](size_t k, double ek) {
      return g * std::abs(c[k]) + r * std::abs(ek) + 2 * gamma32(16) * largest;
    };
    EXPECT_TRUE(ropegrad::testing::detail::all_within(tiled[i].second, reference[i].second, allowed,
                                                      "float32 bound + 2 gamma(16) max|e|"))
        << variant_name(variant) << " " << score_mask_name(kind) << " " << tiled[i].first;
  }
}

INSTANTIATE_TEST_SUITE_P(Variants, TiledParity32,
                         ::testing::Combine(::testing::ValuesIn(kVariants), ::testing::ValuesIn(kScoreMaskKinds)),
                         case_name);

// ---- 4. memory ------------------------------------------------------------------------------------

// Bytes held after the forward (the output and what the node saved) and the
// peak of forward + backward, above what the inputs already hold.
struct Held {
  int64_t kept, peak;
};

Held measure(Variant v, bool tiled, int64_t t) {
  Dims d;
  d.b = 1, d.h = 2, d.nq = d.nk = t, d.dh = 16, d.dv = 16;
  std::vector<Tensor> in;
  for (const Tensor& x : make_leaves(v, d, 68)) in.push_back(to(x, DType::Float32).requires_grad_());
  Generator gen(69);
  const Tensor grad_out = randn({d.b, d.h, t, d.dv}, DType::Float32, &gen);
  ScoreMask m;
  m.causal = true;
  reset_peak_memory();
  const int64_t base = memory_stats().current_bytes;
  Held held{};
  {
    const Tensor out = attend(v, tiled, in, m);
    held.kept = memory_stats().current_bytes - base;
    backward(out, grad_out);
  }
  held.peak = memory_stats().peak_bytes - base;
  return held;
}

TEST(TiledMemory, KeptForBackwardGrowsLinearlyInT) {
  // (The tiles' scratch, a few (64 x 128) blocks per thread, is std::vector
  // memory outside these statistics; it does not depend on T.)
  for (Variant v : kVariants) {
    const Held t1 = measure(v, true, 256), t2 = measure(v, true, 512), t4 = measure(v, true, 1024);
    const Held m1 = measure(v, false, 256), m2 = measure(v, false, 512);
    std::printf("[ %s ] kept after forward, T = 256 / 512 / 1024: tiled %lld / %lld / %lld B, "
                "materialised %lld / %lld B; peak tiled %lld / %lld / %lld B, materialised %lld / %lld B\n",
                variant_name(v).c_str(), static_cast<long long>(t1.kept), static_cast<long long>(t2.kept),
                static_cast<long long>(t4.kept), static_cast<long long>(m1.kept), static_cast<long long>(m2.kept),
                static_cast<long long>(t1.peak), static_cast<long long>(t2.peak), static_cast<long long>(t4.peak),
                static_cast<long long>(m1.peak), static_cast<long long>(m2.peak));
    // Linear: doubling T at most doubles what is kept (plus a little slack for the graph).
    EXPECT_LE(t2.kept, 2 * t1.kept + 4096) << variant_name(v);
    EXPECT_LE(t4.kept, 2 * t2.kept + 4096) << variant_name(v);
    EXPECT_LE(t4.peak, 2 * t2.peak + 4096) << variant_name(v);
    // Never the (B, H, T, T) probabilities: at T = 1024 they alone would be 8 MiB.
    EXPECT_LT(t4.peak, 2 * 1024 * 1024 * 4) << variant_name(v);
    // The materialised path keeps P: quadratic, about 4x per doubling.
    EXPECT_GE(m2.kept, 3 * m1.kept) << variant_name(v);
  }
}

// ---- 5. the dispatch ---------------------------------------------------------------------------------

TEST(TiledDispatch, AutoChoosesByTheNumberOfKeys) {
  const ForcePath force(AttentionPath::Auto);
  const auto qkv = [](int64_t n) { return zeros({1, 1, n, 4}); };
  const int64_t at = kTiledAttentionMinKeys;
  EXPECT_FALSE(use_tiled_attention(qkv(at - 1), qkv(at - 1), qkv(at - 1), {}, false));
  EXPECT_TRUE(use_tiled_attention(qkv(at), qkv(at), qkv(at), {}, false));
  EXPECT_FALSE(use_tiled_attention(qkv(at), qkv(at), qkv(at), {}, true));  // weights wanted
  ScoreMask with_grad;
  with_grad.mask = zeros({at, at}).requires_grad_();
  EXPECT_FALSE(use_tiled_attention(qkv(at), qkv(at), qkv(at), with_grad, false));
  // The triple variant's own, lower threshold.
  const int64_t triple_at = kTripleTiledMinKeys;
  ASSERT_LT(triple_at, at);
  EXPECT_FALSE(use_tiled_attention(qkv(triple_at - 1), qkv(triple_at - 1), qkv(triple_at - 1), {}, false, triple_at));
  EXPECT_TRUE(use_tiled_attention(qkv(triple_at), qkv(triple_at), qkv(triple_at), {}, false, triple_at));
  EXPECT_FALSE(use_tiled_attention(qkv(triple_at), qkv(triple_at), qkv(triple_at), {}, false));
  set_attention_path(AttentionPath::Tiled);
  EXPECT_TRUE(use_tiled_attention(qkv(3), qkv(3), qkv(3), {}, false));
  EXPECT_FALSE(use_tiled_attention(qkv(3), qkv(3), qkv(3), {}, true));
  set_attention_path(AttentionPath::Materialized);
  EXPECT_FALSE(use_tiled_attention(qkv(at), qkv(at), qkv(at), {}, false));
}

TEST(TiledDispatch, SdpaOnBothPathsAndWeightsFallBack) {
  Generator gen(70);
  const Tensor q = randn({2, 2, 7, 4}, DType::Float64, &gen), k = randn({2, 2, 7, 4}, DType::Float64, &gen);
  const Tensor v = randn({2, 2, 7, 3}, DType::Float64, &gen);
  AttentionOptions o;
  o.causal = true;
  Tensor tiled, materialised, weights;
  {
    const ForcePath force(AttentionPath::Tiled);
    tiled = scaled_dot_product_attention(q, k, v, o);
    const Tensor with_weights = scaled_dot_product_attention(q, k, v, o, &weights);  // falls back
    EXPECT_TRUE(weights.defined());
    expect_close(with_weights, tiled, 1e-10, 1e-12, "sdpa with weights");
  }
  {
    const ForcePath force(AttentionPath::Materialized);
    materialised = scaled_dot_product_attention(q, k, v, o);
  }
  expect_close(tiled, materialised, 1e-10, 1e-12, "sdpa");
  expect_close(tiled, dot_attention_tiled(q, k, v, 0.5, {Tensor(), true, 0}), 1e-15, 0, "sdpa is the tiled kernel");
}

// Each attention module, forced down either path: the same output and parameter gradients.
TEST(TiledDispatch, ModulesGiveTheSameOutputAndGradientsOnBothPaths) {
  const int64_t d_model = 8, heads = 2;
  std::vector<std::pair<std::string, std::shared_ptr<AttentionLayer>>> layers;
  Generator gen(71);
  layers.emplace_back("mha", std::make_shared<MultiHeadAttention>(d_model, heads, make_rope(4, kF64), &gen, kF64));
  layers.emplace_back("w2_scalar",
                      std::make_shared<W2Attention>(d_model, heads, make_rope(4, kF64), SigmaMode::Scalar, &gen, kF64));
  layers.emplace_back("w2_vector",
                      std::make_shared<W2Attention>(d_model, heads, make_rope(4, kF64), SigmaMode::Vector, &gen, kF64));
  layers.emplace_back("triple", std::make_shared<TripleAttention>(d_model, heads, make_rope(4, kF64), &gen, kF64));
  const Tensor x = randn({2, 9, d_model}, kF64, &gen);
  for (auto& [name, layer] : layers) {
    AttentionCall call = AttentionCall::causal();
    NamedTensors results[2];
    for (int tiled = 0; tiled < 2; ++tiled) {
      const ForcePath force(tiled ? AttentionPath::Tiled : AttentionPath::Materialized);
      layer->zero_grad();
      const Tensor out = layer->forward(x, call);
      backward(sum(out * out));
      results[tiled].emplace_back("out", out.detach());
      for (const auto& [pname, p] : layer->named_parameters()) results[tiled].emplace_back(pname, clone(p.grad()));
    }
    for (size_t i = 0; i < results[0].size(); ++i) {
      expect_close(results[1][i].second, results[0][i].second, 1e-10, 1e-12, name + " " + results[0][i].first);
    }
  }
}

// At kTripleTiledMinKeys keys Auto runs the triple module tiled and standard
// attention materialised: each output equals, bit for bit, the one of the path
// forced by hand.
TEST(TiledDispatch, AutoGivesEachVariantItsOwnThreshold) {
  const int64_t d_model = 8, heads = 2, t = kTripleTiledMinKeys;
  Generator gen(72);
  const auto triple = std::make_shared<TripleAttention>(d_model, heads, make_rope(d_model / heads, kF64), &gen, kF64);
  const auto mha = std::make_shared<MultiHeadAttention>(d_model, heads, make_rope(d_model / heads, kF64), &gen, kF64);
  const Tensor x = randn({1, t, d_model}, kF64, &gen);
  AttentionCall call = AttentionCall::causal();
  const auto run = [&](AttentionLayer& layer, AttentionPath path) {
    const ForcePath force(path);
    return layer.forward(x, call);
  };
  const Tensor triple_auto = run(*triple, AttentionPath::Auto);
  EXPECT_EQ(max_abs_diff(triple_auto, run(*triple, AttentionPath::Tiled)), 0.0);
  // The two paths round differently, so the equality above names the path.
  EXPECT_GT(max_abs_diff(triple_auto, run(*triple, AttentionPath::Materialized)), 0.0);
  const Tensor mha_auto = run(*mha, AttentionPath::Auto);
  EXPECT_EQ(max_abs_diff(mha_auto, run(*mha, AttentionPath::Materialized)), 0.0);
  EXPECT_GT(max_abs_diff(mha_auto, run(*mha, AttentionPath::Tiled)), 0.0);
}

TEST(TiledErrors, MaskThatRequiresGradAndBadTiles) {
  const Tensor q = zeros({1, 1, 3, 2}), v = zeros({1, 1, 3, 2});
  ScoreMask m;
  m.mask = zeros({3, 3}).requires_grad_();
  expect_error_with([&] { dot_attention_tiled(q, q, v, 1.0, m); }, {"dot_attention_tiled", "requires grad"});
  expect_error_with([&] { dot_attention_tiled(q, q, v, 1.0, {}, TileSizes{0, 4}); },
                    {"dot_attention_tiled", "tile sizes"});
  expect_error_with([&] { dot_attention_tiled(q, q, zeros({1, 1, 4, 2}), 1.0); }, {"dot_attention_tiled", "v"});
}

}  // namespace

// The GEMM trace (tensor/kernels.h) sees the tiled kernels' own BLAS calls: a
// score product per pair of tiles, written over its buffer, and P v added to
// the output's running sum.
TEST(TiledGemmTrace, RecordsEveryTileProduct) {
  Generator gen(7);
  const Tensor q = randn({1, 2, 6, 4}, DType::Float32, &gen), k = randn({1, 2, 6, 4}, DType::Float32, &gen);
  const Tensor v = randn({1, 2, 6, 3}, DType::Float32, &gen);
  std::vector<kernels::GemmCall> calls;
  {
    const kernels::GemmTrace trace;
    (void)dot_attention_tiled(q, k, v, 0.5, {}, TileSizes{4, 4});
    calls = trace.calls();
  }
  // 2 heads x 2 query tiles x 2 key tiles = 8 pairs of tiles.
  int64_t scores = 0, sums = 0;
  double score_flops = 0, sum_flops = 0;
  for (const auto& c : calls) {
    const double flops = 2.0 * c.m * c.n * c.k * c.count;
    if (c.accumulate) {
      ++sums, sum_flops += flops;
      EXPECT_FALSE(c.trans_a || c.trans_b);
    } else {
      ++scores, score_flops += flops;
      EXPECT_TRUE(c.trans_b);  // q k^T, k read transposed
    }
  }
  EXPECT_EQ(scores, 8);
  EXPECT_EQ(sums, 8);
  EXPECT_EQ(score_flops, 2.0 * 2 * 6 * 6 * 4);  // every (query, key) pair once, dh = 4
  EXPECT_EQ(sum_flops, 2.0 * 2 * 6 * 6 * 3);    // dv = 3
}
