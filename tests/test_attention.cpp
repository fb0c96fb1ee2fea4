// Attention (docs/appendix-a-formulas.md, attention): scaled_dot_product_attention and dropout from
// nn/functional.h, MultiHeadAttention (with RoPE, masks, cross-attention and a
// key/value cache) from nn/attention.h.
//
// 1. Parity with PyTorch (tests/fixtures/make_attention_fixtures.py wrote the
//    .npy files; torch 1.13 has no SDPA, so the script writes the formula):
//    outputs and d(sum(out * w))/d(every input), float64 and float32, for no
//    mask, causal, boolean padding (B,1,1,Nk), additive float (ALiBi-like) and
//    cross-attention (Nq != Nk); MHA also w.r.t. all four projection weights.
// 2. float64 gradchecks of SDPA for each mask kind and of the whole MHA module.
// 3. Behaviour: fully masked rows, causal == explicit masks, weights, KV cache,
//    dropout. 4. Bad inputs: every Error names the op and the shapes.
//
// Tolerances: float64 |a - e| <= 1e-12 + 1e-10 |e|; float32 |a - e| <= 1e-6 + 1e-5 |e|.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "nn/attention.h"
#include "nn/functional.h"
#include "nn/rope.h"
#include "tensor/random.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::nn;
using namespace ropegrad::testing;
using ::testing::HasSubstr;

namespace {

// ---- helpers --------------------------------------------------------------------------------

constexpr double kInf = std::numeric_limits<double>::infinity();

Tensor fixture(const std::string& name) { return load_fixture("attention/" + name); }

constexpr Tol kTol64{1e-10, 1e-12};
// float32 parity: the error bound of tests/support/test_util.h.

// The boolean mask of 0 <= j <= i + offset: (Nq, Nk).
Tensor lower_triangular(int64_t nq, int64_t nk, int64_t offset = 0) {
  std::vector<bool> v;
  for (int64_t i = 0; i < nq; ++i)
    for (int64_t j = 0; j < nk; ++j) v.push_back(j <= i + offset);
  return tensor_bool(v, {nq, nk});
}

enum class MaskKind { None, Causal, BoolPadding, Additive, Cross };

const char* sdpa_case(MaskKind kind) {
  switch (kind) {
    case MaskKind::None: return "sdpa_no_mask";
    case MaskKind::Causal: return "sdpa_causal";
    case MaskKind::BoolPadding: return "sdpa_bool_padding";
    case MaskKind::Additive: return "sdpa_additive";
    case MaskKind::Cross: return "sdpa_cross";
  }
  return "";
}

const char* mha_case(MaskKind kind) {
  switch (kind) {
    case MaskKind::None: return "mha_no_mask";
    case MaskKind::Causal: return "mha_causal";
    case MaskKind::BoolPadding: return "mha_bool_padding";
    case MaskKind::Additive: return "mha_additive";
    case MaskKind::Cross: return "mha_cross";
  }
  return "";
}

bool has_mask(MaskKind kind) {
  return kind == MaskKind::BoolPadding || kind == MaskKind::Additive || kind == MaskKind::Cross;
}

// Masks of the kind for q (B, H, Nq, dh), k (B, H, Nk, dh): padding hides the
// last two keys of batch 1; the additive one is ALiBi-like, -slope_h |i - j|.
AttentionOptions options_for(MaskKind kind, int64_t b, int64_t h, int64_t nq, int64_t nk) {
  AttentionOptions o;
  if (kind == MaskKind::Causal) o.causal = true;
  if (kind == MaskKind::BoolPadding || kind == MaskKind::Cross) o.mask = padding_mask(b, nk);  // (B, 1, 1, Nk)
  if (kind == MaskKind::Additive) o.mask = alibi_bias(h, nq, nk);  // (1, H, Nq, Nk)
  return o;
}

const std::vector<MaskKind> kAllMaskKinds = {MaskKind::None, MaskKind::Causal, MaskKind::BoolPadding,
                                              MaskKind::Additive, MaskKind::Cross};

std::string mask_name(MaskKind kind) { return std::string(sdpa_case(kind)).substr(5); }

}  // namespace

// ---- 1. parity with PyTorch ---------------------------------------------------------------------

class SdpaParity : public ::testing::TestWithParam<std::tuple<MaskKind, DType>> {};

TEST_P(SdpaParity, ForwardAndGradientsMatchTorch) {
  const MaskKind kind = std::get<0>(GetParam());  // plain variables: the lambdas below capture them
  const DType dtype = std::get<1>(GetParam());
  const std::string name = sdpa_case(kind), tag = dtype_tag(dtype);
  const Tensor mask = has_mask(kind) ? fixture(name + ".mask") : Tensor();  // bool (B, 1, 1, Nk) or float (1, H, Nq, Nk)
  const bool float_mask = mask.defined() && mask.dtype() != DType::Bool;
  // leaves: q (B, H, Nq, dh) = (2, 2, 5, 4), cross Nq = 3; k (B, H, Nk, dh), cross Nk = 6;
  // v (B, H, Nk, 3); w; and a float mask.
  const ParityRun run = [&](const std::vector<Tensor>& ls) {
    Tensor q = ls[0], k = ls[1], v = ls[2];
    for (Tensor* t : {&q, &k, &v}) t->requires_grad_(true);
    AttentionOptions o;
    o.causal = kind == MaskKind::Causal;
    if (mask.defined()) o.mask = float_mask ? ls[4] : mask;
    const Tensor out = scaled_dot_product_attention(q, k, v, o);
    backward(sum(mul(out, ls[3])));
    return NamedTensors{{"out", out.detach()}, {"grad_q", q.grad()}, {"grad_k", k.grad()}, {"grad_v", v.grad()}};
  };
  std::vector<Tensor> leaves;
  for (const char* n : {".q", ".k", ".v", ".w"}) leaves.push_back(to(fixture(name + n), dtype));
  if (float_mask) leaves.push_back(to(mask, dtype));
  const auto expected = [&](const std::string& n) { return fixture(name + "." + tag + "." + n); };
  if (dtype == DType::Float64) {
    for (const auto& [n, t] : run(leaves)) EXPECT_TRUE(all_close(t, expected(n), kTol64)) << n;
    return;
  }
  // K: the longest sum, over dh = 4 or Nk <= 6 keys; stages: scores, softmax
  // (max, exp, sum), P V, and the backward's three contractions.
  expect_f32_parity(run, leaves, expected, {6, 7}, name + "/f32");
}

INSTANTIATE_TEST_SUITE_P(Torch, SdpaParity,
                         ::testing::Combine(::testing::ValuesIn(kAllMaskKinds),
                                            ::testing::Values(DType::Float64, DType::Float32)),
                         [](const auto& info) {
                           return mask_name(std::get<0>(info.param)) + "_" + dtype_tag(std::get<1>(info.param));
                         });

// An additive mask is a learnable bias in some models (T5's relative bias,
// learned ALiBi slopes): as in PyTorch, the gradient reaches it.
TEST(SdpaParityMaskGrad, AdditiveMaskReceivesItsGradient) {
  // leaves: q, k, v, w, mask (1, H, Nq, Nk), the one that requires grad.
  const ParityRun run = [&](const std::vector<Tensor>& ls) {
    AttentionOptions o;
    o.mask = ls[4];
    o.mask.requires_grad_(true);
    const Tensor out = scaled_dot_product_attention(ls[0], ls[1], ls[2], o);
    EXPECT_TRUE(out.requires_grad()) << "the mask requires grad, so the output must too";
    backward(sum(mul(out, ls[3])));
    return NamedTensors{{"grad_mask", o.mask.grad()}};
  };
  for (DType dtype : {DType::Float64, DType::Float32}) {
    const std::string tag = dtype_tag(dtype);
    std::vector<Tensor> leaves;
    for (const char* n : {".q", ".k", ".v", ".w", ".mask"}) leaves.push_back(to(fixture(std::string("sdpa_additive") + n), dtype));
    const auto expected = [&](const std::string& n) { return fixture("sdpa_additive." + tag + "." + n); };
    if (dtype == DType::Float64) {
      EXPECT_TRUE(all_close(run(leaves)[0].second, expected("grad_mask"), kTol64)) << tag;
    } else {
      expect_f32_parity(run, leaves, expected, {6, 7}, "sdpa_additive/f32");  // as SdpaParity
    }
  }
}

class MhaParity : public ::testing::TestWithParam<std::tuple<MaskKind, DType>> {};

TEST_P(MhaParity, ForwardAndGradientsMatchTorch) {
  const MaskKind kind = std::get<0>(GetParam());  // plain variables: the lambdas below capture them
  const DType dtype = std::get<1>(GetParam());
  const std::string name = mha_case(kind), tag = dtype_tag(dtype);
  const bool cross = kind == MaskKind::Cross;
  const Tensor mask = has_mask(kind) ? fixture(name + ".mask") : Tensor();  // bool (B, 1, 1, Nk) or float (1, H, T, T)
  const bool float_mask = mask.defined() && mask.dtype() != DType::Bool;
  // leaves: x (B, T, D) = (2, 6, 16), or query (2, 4, 16) and memory (2, 6, 16)
  // as both key and value; w; wq, wk, wv, wo; and a float mask.
  const std::vector<std::string> inputs = cross ? std::vector<std::string>{"query", "memory"} : std::vector<std::string>{"x"};
  const ParityRun run = [&](const std::vector<Tensor>& ls) {
    const size_t n = inputs.size();
    const DType dt = ls[0].dtype();
    auto mha = std::make_unique<MultiHeadAttention>(16, 2, make_rope(8, dt), nullptr, dt);  // D = 16, H = 2, dh = 8
    StateDict weights;
    const char* proj[] = {"q_proj", "k_proj", "v_proj", "output_proj"};
    for (size_t i = 0; i < 4; ++i) weights[std::string(proj[i]) + ".weight"] = ls[n + 1 + i];
    mha->load_state_dict(weights);
    std::vector<Tensor> xs(ls.begin(), ls.begin() + static_cast<std::ptrdiff_t>(n));
    for (Tensor& x : xs) x.requires_grad_(true);
    AttentionCall call = kind == MaskKind::Causal ? AttentionCall::causal() : AttentionCall::bidirectional();
    if (mask.defined()) call.mask = float_mask ? ls[n + 5] : mask;
    const Tensor out = cross ? mha->forward(xs[0], xs[1], xs[1], call) : mha->forward(xs[0], call);
    backward(sum(mul(out, ls[n])));
    NamedTensors r = {{"out", out.detach()}};
    for (size_t i = 0; i < n; ++i) r.emplace_back("grad_" + inputs[i], xs[i].grad());
    const char* w[] = {"wq", "wk", "wv", "wo"};
    const Tensor* p[] = {&mha->q_proj->weight, &mha->k_proj->weight, &mha->v_proj->weight, &mha->output_proj->weight};
    for (size_t i = 0; i < 4; ++i) r.emplace_back(std::string("grad_") + w[i], p[i]->grad());
    return r;
  };
  std::vector<Tensor> leaves;
  for (const std::string& in : inputs) leaves.push_back(to(fixture(name + "." + in), dtype));
  for (const char* n : {".w", ".wq", ".wk", ".wv", ".wo"}) leaves.push_back(to(fixture(name + n), dtype));
  if (float_mask) leaves.push_back(to(mask, dtype));
  const auto expected = [&](const std::string& n) { return fixture(name + "." + tag + "." + n); };
  if (dtype == DType::Float64) {
    for (const auto& [n, t] : run(leaves)) EXPECT_TRUE(all_close(t, expected(n), kTol64)) << n;
    return;
  }
  // K: the longest sum, over B T = 12 rows or D = 16 features; stages:
  // projections, RoPE, scores, softmax, P V, output projection, their backward.
  expect_f32_parity(run, leaves, expected, {16, 12}, name + "/f32");
}

INSTANTIATE_TEST_SUITE_P(Torch, MhaParity,
                         ::testing::Combine(::testing::ValuesIn(kAllMaskKinds),
                                            ::testing::Values(DType::Float64, DType::Float32)),
                         [](const auto& info) {
                           return mask_name(std::get<0>(info.param)) + "_" + dtype_tag(std::get<1>(info.param));
                         });

// ---- 2. gradchecks (float64) ------------------------------------------------------------------------

class SdpaGradcheck : public ::testing::TestWithParam<MaskKind> {};

TEST_P(SdpaGradcheck, QKV) {
  const MaskKind kind = GetParam();
  const int64_t b = 2, h = 2, nq = kind == MaskKind::Cross ? 3 : 4, nk = kind == MaskKind::Cross ? 5 : 4;
  Generator gen(21);
  Tensor q = randn({b, h, nq, 3}, DType::Float64, &gen).requires_grad_();
  Tensor k = randn({b, h, nk, 3}, DType::Float64, &gen).requires_grad_();
  Tensor v = randn({b, h, nk, 2}, DType::Float64, &gen).requires_grad_();
  const AttentionOptions o = options_for(kind, b, h, nq, nk);
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) { return scaled_dot_product_attention(in[0], in[1], in[2], o); },
      {q, k, v});
  EXPECT_TRUE(r.passed) << r.report;
}

INSTANTIATE_TEST_SUITE_P(MaskKinds, SdpaGradcheck, ::testing::ValuesIn(kAllMaskKinds),
                         [](const auto& info) { return mask_name(info.param); });

TEST(SdpaGradcheckMask, AdditiveMaskAsAnInput) {
  Generator gen(22);
  Tensor q = randn({1, 2, 3, 3}, DType::Float64, &gen).requires_grad_();
  Tensor k = randn({1, 2, 4, 3}, DType::Float64, &gen).requires_grad_();
  Tensor v = randn({1, 2, 4, 2}, DType::Float64, &gen).requires_grad_();
  Tensor bias = randn({2, 3, 4}, DType::Float64, &gen).requires_grad_();  // (H, Nq, Nk), broadcast over B
  const GradcheckResult r = gradcheck(
      [](const std::vector<Tensor>& in) {
        AttentionOptions o;
        o.mask = in[3];
        return scaled_dot_product_attention(in[0], in[1], in[2], o);
      },
      {q, k, v, bias});
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(MhaGradcheck, SelfAttentionOverInputAndAllParameters) {
  // Built in float32, then converted: the way a model is gradchecked.
  Generator gen(23);
  MultiHeadAttention mha(16, 2, make_rope(8, DType::Float32), &gen);  // D = 16, H = 2, dh = 8
  mha.to(DType::Float64);
  std::vector<Tensor> inputs = {randn({1, 8, 16}, DType::Float64, &gen).requires_grad_()};  // (B, T, D)
  for (const Tensor& p : mha.parameters()) {
    EXPECT_EQ(p.dtype(), DType::Float64);
    inputs.push_back(p);  // gradcheck perturbs them in place: the module sees every change
  }
  ASSERT_EQ(inputs.size(), 5u);  // x and q, k, v, o projections
  AttentionCall call = AttentionCall::causal();
  const GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& in) { return mha.forward(in[0], call); }, inputs);
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(MhaGradcheck, CrossAttentionWithPaddingMask) {
  Generator gen(24);
  MultiHeadAttention mha(8, 2, make_rope(4, DType::Float64), &gen, DType::Float64);
  std::vector<Tensor> inputs = {randn({2, 3, 8}, DType::Float64, &gen).requires_grad_(),   // query (B, Nq, D)
                                randn({2, 5, 8}, DType::Float64, &gen).requires_grad_(),   // key (B, Nk, D)
                                randn({2, 5, 8}, DType::Float64, &gen).requires_grad_()};  // value
  for (const Tensor& p : mha.parameters()) inputs.push_back(p);
  AttentionCall call = AttentionCall::bidirectional();
  call.mask = options_for(MaskKind::Cross, 2, 2, 3, 5).mask;  // (B, 1, 1, Nk)
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) { return mha.forward(in[0], in[1], in[2], call); }, inputs);
  EXPECT_TRUE(r.passed) << r.report;
}

// ---- 3. behaviour ---------------------------------------------------------------------------------------

TEST(SdpaMasks, FullyMaskedRowGivesZerosAndZeroGradient) {
  Generator gen(25);
  Tensor q = randn({1, 2, 3, 4}, DType::Float64, &gen).requires_grad_();
  Tensor k = randn({1, 2, 5, 4}, DType::Float64, &gen).requires_grad_();
  Tensor v = randn({1, 2, 5, 3}, DType::Float64, &gen).requires_grad_();
  // Query 1 may attend to nothing: by a boolean mask, and by an additive -inf one.
  std::vector<bool> keep(15, true);
  for (int j = 0; j < 5; ++j) keep[5 + j] = false;
  std::vector<double> bias(15, 0.0);
  for (int j = 0; j < 5; ++j) bias[5 + j] = -kInf;
  for (const Tensor& mask : {tensor_bool(keep, {3, 5}), tensor(bias, {3, 5}, DType::Float64)}) {
    q.set_grad(Tensor());
    k.set_grad(Tensor());
    v.set_grad(Tensor());
    AttentionOptions o;
    o.mask = mask;
    Tensor weights;
    const Tensor out = scaled_dot_product_attention(q, k, v, o, &weights);  // (1, 2, 3, 3)
    ASSERT_TRUE(all_finite(out)) << "NaN or inf in the output, mask " << dtype_name(mask.dtype());
    EXPECT_EQ(max_abs_diff(select(out, 2, 1), zeros({1, 2, 3}, DType::Float64)), 0.0);
    EXPECT_EQ(max_abs_diff(select(weights, 2, 1), zeros({1, 2, 5}, DType::Float64)), 0.0);
    EXPECT_GT(max_abs_diff(select(out, 2, 0), zeros({1, 2, 3}, DType::Float64)), 0.0);  // other rows live
    backward(sum(mul(out, randn(out.shape(), DType::Float64, &gen))));
    ASSERT_TRUE(all_finite(q.grad()) && all_finite(k.grad()) && all_finite(v.grad()));
    EXPECT_EQ(max_abs_diff(select(q.grad(), 2, 1), zeros({1, 2, 4}, DType::Float64)), 0.0);
    EXPECT_GT(max_abs_diff(select(q.grad(), 2, 0), zeros({1, 2, 4}, DType::Float64)), 0.0);
  }
}

TEST(SdpaMasks, CausalEqualsExplicitLowerTriangularAndAdditiveMasks) {
  for (auto [nq, nk, offset] : std::vector<std::tuple<int64_t, int64_t, int64_t>>{{5, 5, 0}, {3, 7, 4}}) {
    Generator gen(26);
    const Tensor q0 = randn({2, 2, nq, 4}, DType::Float64, &gen), k0 = randn({2, 2, nk, 4}, DType::Float64, &gen);
    const Tensor v0 = randn({2, 2, nk, 3}, DType::Float64, &gen), w = randn({2, 2, nq, 3}, DType::Float64, &gen);
    const Tensor allowed = lower_triangular(nq, nk, offset);  // (Nq, Nk)
    const Tensor additive = masked_fill(zeros({nq, nk}, DType::Float64), logical_not(allowed), -kInf);
    std::vector<std::vector<Tensor>> results;  // out, grad q, grad k, grad v per variant
    for (int variant = 0; variant < 3; ++variant) {
      Tensor q = clone(q0).requires_grad_(), k = clone(k0).requires_grad_(), v = clone(v0).requires_grad_();
      AttentionOptions o;
      if (variant == 0) {
        o.causal = true;
        o.causal_offset = offset;
      }
      if (variant == 1) o.mask = allowed;
      if (variant == 2) o.mask = additive;
      const Tensor out = scaled_dot_product_attention(q, k, v, o);
      backward(sum(mul(out, w)));
      results.push_back({out, q.grad(), k.grad(), v.grad()});
    }
    for (int variant = 1; variant < 3; ++variant) {
      for (int t = 0; t < 4; ++t) {
        EXPECT_LE(max_abs_diff(results[variant][t], results[0][t]), 1e-15)
            << "variant " << variant << " tensor " << t << " (Nq " << nq << ", Nk " << nk << ")";
      }
    }
  }
}

TEST(SdpaMasks, CausalFirstRowSeesOnlyTheFirstKey) {
  // Query 0 attends to key 0 alone: its output is v_0 exactly.
  Generator gen(27);
  const Tensor q = randn({1, 1, 4, 2}, DType::Float64, &gen), k = randn({1, 1, 4, 2}, DType::Float64, &gen);
  const Tensor v = randn({1, 1, 4, 3}, DType::Float64, &gen);
  AttentionOptions o;
  o.causal = true;
  const Tensor out = scaled_dot_product_attention(q, k, v, o);
  EXPECT_EQ(max_abs_diff(select(out, 2, 0), select(v, 2, 0)), 0.0);
}

TEST(SdpaWeights, RowsSumToOneAndAreZeroWhereMasked) {
  Generator gen(28);
  const Tensor q = randn({2, 3, 4, 5}, DType::Float64, &gen), k = randn({2, 3, 6, 5}, DType::Float64, &gen);
  const Tensor v = randn({2, 3, 6, 2}, DType::Float64, &gen);
  AttentionOptions o = options_for(MaskKind::BoolPadding, 2, 3, 4, 6);  // (B, 1, 1, Nk): batch 1 hides keys 4, 5
  o.causal = true;
  o.causal_offset = 2;  // query i sees keys 0..i + 2
  Tensor weights;
  const Tensor out = scaled_dot_product_attention(q, k, v, o, &weights);
  ASSERT_EQ(weights.shape(), (Shape{2, 3, 4, 6}));  // (B, H, Nq, Nk)
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 3; ++h)
      for (int64_t i = 0; i < 4; ++i) {
        double row = 0;
        for (int64_t j = 0; j < 6; ++j) {
          const double w = weights.at({b, h, i, j});
          const bool allowed = j <= i + 2 && !(b == 1 && j >= 4);
          if (allowed) {
            EXPECT_GT(w, 0.0) << "(b, h, i, j) = " << b << h << i << j;
          } else {
            EXPECT_EQ(w, 0.0) << "(b, h, i, j) = " << b << h << i << j;
          }
          row += w;
        }
        EXPECT_NEAR(row, 1.0, 1e-14) << "row " << b << h << i;
      }
  // And the output is those weights times v.
  EXPECT_LE(max_abs_diff(out, matmul(weights, v)), 1e-14);
}

TEST(MhaWeights, ReturnedWeightsHaveShapeBHNqNk) {
  Generator gen(29);
  MultiHeadAttention mha(16, 4, make_rope(4, DType::Float64), &gen, DType::Float64);
  Tensor weights;
  AttentionCall call = AttentionCall::bidirectional();
  call.weights = &weights;
  mha.forward(randn({2, 3, 16}, DType::Float64, &gen), randn({2, 7, 16}, DType::Float64, &gen),
              randn({2, 7, 16}, DType::Float64, &gen), call);
  ASSERT_EQ(weights.shape(), (Shape{2, 4, 3, 7}));
  EXPECT_LE(max_abs_diff(sum(weights, {-1}), ones({2, 4, 3}, DType::Float64)), 1e-14);
}

TEST(MhaCache, DecodingInChunksEqualsTheFullCausalPass) {
  Generator gen(30);
  MultiHeadAttention mha(16, 2, make_rope(8, DType::Float64), &gen, DType::Float64);
  mha.eval();
  const Tensor x = randn({2, 8, 16}, DType::Float64, &gen);  // (B, T, D)
  AttentionCall full_call = AttentionCall::causal();
  const Tensor full = mha.forward(x, full_call);
  KVCache cache;
  std::vector<Tensor> outs;
  std::vector<int64_t> lengths;
  int64_t start = 0;
  for (int64_t chunk : {5, 1, 2}) {
    AttentionCall call = AttentionCall::causal();  // within a chunk, token i sees the prefix and tokens <= i
    call.cache = &cache;
    outs.push_back(mha.forward(narrow(x, 1, start, chunk), call));  // (B, chunk, D)
    lengths.push_back(cache.length());
    start += chunk;
  }
  EXPECT_EQ(lengths, (std::vector<int64_t>{5, 6, 8}));
  EXPECT_EQ(cache.k.shape(), (Shape{2, 2, 8, 8}));  // (B, H, L, dh)
  EXPECT_LE(max_abs_diff(cat(outs, 1), full), 1e-12);
  // A single new token needs no mask at all: it may see the whole cache.
  KVCache cache2;
  AttentionCall prefix = AttentionCall::causal();
  prefix.cache = &cache2;
  mha.forward(narrow(x, 1, 0, 7), prefix);
  AttentionCall last = AttentionCall::bidirectional();
  last.cache = &cache2;
  EXPECT_LE(max_abs_diff(mha.forward(narrow(x, 1, 7, 1), last), narrow(full, 1, 7, 1)), 1e-12);
  // reset() starts a new sequence.
  cache.reset();
  EXPECT_EQ(cache.length(), 0);
}

TEST(MhaCache, ExplicitPositionsEqualTheCachedDefault) {
  Generator gen(31);
  MultiHeadAttention mha(16, 2, make_rope(8, DType::Float64), &gen, DType::Float64);
  const Tensor x = randn({1, 6, 16}, DType::Float64, &gen);
  KVCache a, b;
  for (int64_t start : {0, 4}) {
    const int64_t len = start == 0 ? 4 : 2;
    AttentionCall implicit = AttentionCall::causal(), explicit_pos = AttentionCall::causal();
    implicit.cache = &a;
    explicit_pos.cache = &b;
    explicit_pos.positions = arange(start, start + len);
    const Tensor chunk = narrow(x, 1, start, len);
    EXPECT_LE(max_abs_diff(mha.forward(chunk, implicit), mha.forward(chunk, explicit_pos)), 0.0);
  }
}

TEST(Dropout, EvalModeIsIdentity) {
  Generator gen(32);
  const Tensor x = randn({4, 5}, DType::Float64, &gen);
  EXPECT_EQ(max_abs_diff(dropout(x, 0.5, /*training=*/false), x), 0.0);
  // SDPA: dropout_p without training changes nothing.
  const Tensor q = randn({1, 2, 4, 3}, DType::Float64, &gen), k = randn({1, 2, 4, 3}, DType::Float64, &gen);
  const Tensor v = randn({1, 2, 4, 3}, DType::Float64, &gen);
  AttentionOptions o;
  o.dropout_p = 0.5;
  o.training = false;
  EXPECT_EQ(max_abs_diff(scaled_dot_product_attention(q, k, v, o), scaled_dot_product_attention(q, k, v)), 0.0);
  // MHA: a module with dropout in eval() equals the same weights without dropout.
  MultiHeadAttention with(16, 2, nullptr, &gen, DType::Float64, /*dropout=*/0.5);
  MultiHeadAttention without(16, 2, nullptr, nullptr, DType::Float64, 0.0);
  without.load_state_dict(with.state_dict());
  with.eval();
  const Tensor xm = randn({2, 5, 16}, DType::Float64, &gen);
  const auto call = AttentionCall::bidirectional();
  EXPECT_EQ(max_abs_diff(with.forward(xm, call), without.forward(xm, call)), 0.0);
  with.train();
  EXPECT_GT(max_abs_diff(with.forward(xm, call), without.forward(xm, call)), 1e-6);  // train mode does drop
}

TEST(Dropout, TrainModeZeroesAboutPOfTheWeightsReproducibly) {
  const double p = 0.3;
  const int64_t n = 64;
  Generator data(33);
  const Tensor q = randn({1, 1, n, 8}, DType::Float64, &data), k = randn({1, 1, n, 8}, DType::Float64, &data);
  // v = I: the output is the (dropped) weight matrix itself, (1, 1, N, N).
  const Tensor v = view(eye(n, -1, DType::Float64), {1, 1, n, n});
  auto run = [&](uint64_t seed, Tensor* weights) {
    Generator gen(seed);
    AttentionOptions o;
    o.dropout_p = p;
    o.training = true;
    o.generator = &gen;
    return scaled_dot_product_attention(q, k, v, o, weights);
  };
  Tensor clean;
  const Tensor dropped = run(5, &clean);
  const std::vector<double> d = dropped.to_vector<double>();
  // The clean softmax weights, recomputed without dropout (every one > 0).
  const std::vector<double> w = scaled_dot_product_attention(q, k, v).to_vector<double>();
  int64_t zeros_count = 0;
  for (size_t i = 0; i < d.size(); ++i) {
    ASSERT_GT(w[i], 0.0);
    if (d[i] == 0.0) {
      ++zeros_count;
    } else {
      EXPECT_NEAR(d[i], w[i] / (1 - p), 1e-15) << "kept weights are scaled by 1 / (1 - p)";
    }
  }
  const double fraction = static_cast<double>(zeros_count) / static_cast<double>(n * n);
  EXPECT_NEAR(fraction, p, 0.04);  // 4096 draws: one standard deviation is 0.007
  // The same seed drops the same weights; another seed drops others.
  EXPECT_EQ(max_abs_diff(run(5, nullptr), dropped), 0.0);
  EXPECT_GT(max_abs_diff(run(6, nullptr), dropped), 0.0);
}

// PyTorch's MultiheadAttention returns the weights after dropout: the ones
// that actually multiplied v. Returning the pre-dropout ones would not explain
// the output.
TEST(Dropout, TrainModeReturnsTheWeightsThatMultipliedV) {
  Generator data(34);
  const Tensor q = randn({1, 2, 6, 4}, DType::Float64, &data), k = randn({1, 2, 6, 4}, DType::Float64, &data);
  const Tensor v = randn({1, 2, 6, 3}, DType::Float64, &data);
  Generator gen(7);
  AttentionOptions o;
  o.dropout_p = 0.5;
  o.training = true;
  o.generator = &gen;
  Tensor weights;
  const Tensor out = scaled_dot_product_attention(q, k, v, o, &weights);
  EXPECT_LE(max_abs_diff(out, matmul(weights, v)), 1e-14);
}

// ---- 4. bad inputs ------------------------------------------------------------------------------------

TEST(AttentionErrors, MaskThatDoesNotBroadcast) {
  const Tensor q = zeros({2, 2, 5, 4}), k = zeros({2, 2, 5, 4}), v = zeros({2, 2, 5, 3});
  for (const Shape& mask_shape : {Shape{3, 5}, Shape{2, 2, 4, 5}, Shape{3, 2, 2, 5, 5}}) {
    AttentionOptions o;
    o.mask = ones(mask_shape, DType::Bool);
    const std::string msg = error_of([&] { scaled_dot_product_attention(q, k, v, o); });
    EXPECT_THAT(msg, HasSubstr("scaled_dot_product_attention"));
    EXPECT_THAT(msg, HasSubstr(shape_str(mask_shape)));
    EXPECT_THAT(msg, HasSubstr(shape_str({2, 2, 5, 5})));  // the scores' shape (B, H, Nq, Nk)
  }
}

TEST(AttentionErrors, DModelNotDivisibleByHeads) {
  const std::string msg = error_of([] { MultiHeadAttention mha(10, 3); });
  EXPECT_THAT(msg, HasSubstr("MultiHeadAttention"));
  EXPECT_THAT(msg, HasSubstr("10"));
  EXPECT_THAT(msg, HasSubstr("3"));
}

TEST(AttentionErrors, RopeHeadSizeDiffersFromTheHeads) {
  const std::string msg = error_of([] { MultiHeadAttention mha(16, 2, make_rope(4, DType::Float32)); });
  EXPECT_THAT(msg, HasSubstr("MultiHeadAttention"));
  EXPECT_THAT(msg, HasSubstr("4"));
  EXPECT_THAT(msg, HasSubstr("8"));
}

TEST(AttentionErrors, WrongInputDims) {
  MultiHeadAttention mha(16, 2);
  const std::string two_d = error_of([&] { mha.forward(zeros({8, 16}), AttentionCall::causal()); });
  EXPECT_THAT(two_d, HasSubstr("MultiHeadAttention"));
  EXPECT_THAT(two_d, HasSubstr(shape_str({8, 16})));
  const std::string wrong_d = error_of([&] { mha.forward(zeros({2, 8, 12}), AttentionCall::causal()); });
  EXPECT_THAT(wrong_d, HasSubstr("MultiHeadAttention"));
  EXPECT_THAT(wrong_d, HasSubstr(shape_str({2, 8, 12})));
  const std::string sdpa_1d = error_of([] { scaled_dot_product_attention(zeros({4}), zeros({4}), zeros({4})); });
  EXPECT_THAT(sdpa_1d, HasSubstr("scaled_dot_product_attention"));
  EXPECT_THAT(sdpa_1d, HasSubstr(shape_str({4})));
}

TEST(AttentionErrors, QueryKeyHeadSizeMismatch) {
  const std::string msg = error_of(
      [] { scaled_dot_product_attention(zeros({1, 1, 4, 3}), zeros({1, 1, 4, 5}), zeros({1, 1, 4, 2})); });
  EXPECT_THAT(msg, HasSubstr("scaled_dot_product_attention"));
  EXPECT_THAT(msg, HasSubstr(shape_str({1, 1, 4, 3})));
  EXPECT_THAT(msg, HasSubstr(shape_str({1, 1, 4, 5})));
}

TEST(AttentionErrors, CrossAttentionBatchMismatch) {
  MultiHeadAttention mha(16, 2);
  const std::string msg =
      error_of([&] { mha.forward(zeros({2, 4, 16}), zeros({3, 6, 16}), zeros({3, 6, 16}), AttentionCall::bidirectional());
      });
  EXPECT_THAT(msg, HasSubstr("MultiHeadAttention"));
  EXPECT_THAT(msg, HasSubstr(shape_str({2, 4, 16})));
  EXPECT_THAT(msg, HasSubstr(shape_str({3, 6, 16})));
}

TEST(AttentionErrors, CacheWithCrossAttention) {
  MultiHeadAttention mha(16, 2);
  KVCache cache;
  AttentionCall call = AttentionCall::bidirectional();
  call.cache = &cache;
  const std::string msg =
      error_of([&] { mha.forward(zeros({2, 4, 16}), zeros({2, 6, 16}), zeros({2, 6, 16}), call); });
  EXPECT_THAT(msg, HasSubstr("MultiHeadAttention"));
  EXPECT_THAT(msg, HasSubstr("cache"));
  EXPECT_EQ(cache.length(), 0);
}
