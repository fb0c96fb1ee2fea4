// W2 attention (docs/appendix-a-formulas.md, W2 attention): the fused kernel w2_attention_probs
// (nn/attention_scores.h) and the W2Attention module (nn/w2_attention.h).
//
// 1. Parity with PyTorch (tests/fixtures/make_variant_fixtures.py writes the
//    formulas of docs/appendix-a-formulas.md out in torch): output and d(sum(out * w))/d(x and all 7 parameters),
//    float64 and float32, scalar and vector sigma, causal / padding / no mask.
// 2. float64 gradchecks of w2_attention_probs (mu_q, mu_k, sigma_q, sigma_k,
//    tau) for each mask kind and sigma kind, and of the whole module.
// 3. Behaviour worked out by hand: equal sigmas leave softmax(-|mu_q - mu_k|^2
//    / (tau + eps)); D_sigma^2 = dh (s_q - s_k)^2 or |s_q - s_k|^2; RoPE acts
//    on mu only; tau starts at sqrt(dh); parameter shapes; masked rows.
// 4. Memory: the backward keeps P and the inputs, never a (B, H, T, T, dh) tensor.
// 5. Bad inputs: every Error names the op and the offending shape or value.
//
// Tolerances: float64 |a - e| <= 1e-12 + 1e-10 |e|; float32 the error bound of tests/support/test_util.h
// (about 8 float32 ulps of the tensor's largest entry; torch's own float32
// gradients are up to 7e-6 from its float64 ones here, for entries up to 17).
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "autograd/engine.h"
#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "nn/attention_scores.h"
#include "nn/rope.h"
#include "nn/w2_attention.h"
#include "tensor/random.h"
#include "tensor/storage.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::nn;
using namespace ropegrad::testing;
using ::testing::HasSubstr;

namespace {

// ---- helpers --------------------------------------------------------------------------------

constexpr double kEps = 1e-6;  // the W2 score's eps, docs/appendix-a-formulas.md, W2 attention

Tensor fixture(const std::string& name) { return load_fixture("variants/" + name); }

// float64 parity: rounding of float64 (float32 uses the error bound of test_util.h).
constexpr Tol kTol64{1e-10, 1e-12};

const char* sigma_name(SigmaMode mode) { return mode == SigmaMode::Scalar ? "scalar" : "vector"; }

const std::vector<std::string> kParamNames = {"k_proj.weight",       "output_proj.weight",       "q_proj.weight",
                                              "sigma_k_proj.weight", "sigma_q_proj.weight", "temperature",
                                              "v_proj.weight"};

Tensor param(const W2Attention& m, const std::string& name) {
  for (const auto& [n, p] : m.named_parameters())
    if (n == name) return p;
  ADD_FAILURE() << "no parameter " << name;
  return Tensor();
}

// softmax of one row of scores, by hand.
std::vector<double> softmax_row(const std::vector<double>& s) {
  double mx = -INFINITY, total = 0;
  for (double v : s) mx = std::max(mx, v);
  std::vector<double> p;
  for (double v : s) p.push_back(std::exp(v - mx));
  for (double v : p) total += v;
  for (double& v : p) v /= total;
  return p;
}

}  // namespace

// ---- 1. parity with PyTorch ---------------------------------------------------------------------

class W2Parity : public ::testing::TestWithParam<std::tuple<SigmaMode, std::string, DType>> {};

TEST_P(W2Parity, ForwardAndGradientsMatchTorch) {
  const SigmaMode mode = std::get<0>(GetParam());  // plain variables: the lambdas below capture them
  const std::string mask = std::get<1>(GetParam());
  const DType dtype = std::get<2>(GetParam());
  const std::string module = std::string("w2_") + sigma_name(mode), tag = dtype_tag(dtype);
  const std::string prefix = module + "." + mask + "." + tag + ".";
  // leaves: x, w, then the parameters in kParamNames order.
  const ParityRun run = [&](const std::vector<Tensor>& leaves) {
    const DType dt = leaves[0].dtype();
    auto m = std::make_unique<W2Attention>(16, 2, make_rope(8, dt), mode, nullptr, dt);
    StateDict weights;
    for (size_t i = 0; i < kParamNames.size(); ++i) weights[kParamNames[i]] = leaves[2 + i];
    m->load_state_dict(weights);  // strict: every name, shapes checked
    Tensor x = leaves[0];  // (B, T, D) = (2, 6, 16)
    x.requires_grad_(true);
    AttentionCall call = mask == "causal" ? AttentionCall::causal() : AttentionCall::bidirectional();
    if (mask == "padding") call.mask = fixture(module + ".padding_mask");  // bool (B, 1, 1, T)
    const Tensor out = m->forward(x, call);
    backward(sum(mul(out, leaves[1])));
    NamedTensors r = {{"out", out.detach()}, {"grad_x", x.grad()}};
    for (const std::string& name : kParamNames) r.emplace_back("grad_" + name, param(*m, name).grad());
    return r;
  };
  std::vector<Tensor> leaves = {to(fixture(module + ".x"), dtype), to(fixture(module + ".w"), dtype)};
  for (const std::string& name : kParamNames) leaves.push_back(to(fixture(module + "." + name), dtype));
  if (dtype == DType::Float64) {
    for (const auto& [name, t] : run(leaves)) EXPECT_TRUE(all_close(t, fixture(prefix + name), kTol64)) << name;
    return;
  }
  // K: the longest sum, over B T = 12 rows, D = 16 features or T = 6 keys;
  // stages: projections, RoPE, distances, softmax, P V, output projection, and their backward.
  expect_f32_parity(run, leaves, [&](const std::string& name) { return fixture(prefix + name); }, {16, 12}, prefix);
}

INSTANTIATE_TEST_SUITE_P(Torch, W2Parity,
                         ::testing::Combine(::testing::Values(SigmaMode::Scalar, SigmaMode::Vector),
                                            ::testing::Values("causal", "padding", "none"),
                                            ::testing::Values(DType::Float64, DType::Float32)),
                         [](const auto& info) {
                           return std::string(sigma_name(std::get<0>(info.param))) + "_" +
                                  std::get<1>(info.param) + "_" + dtype_tag(std::get<2>(info.param));
                         });

// ---- 2. gradchecks (float64) ------------------------------------------------------------------------

class W2KernelGradcheck : public ::testing::TestWithParam<std::tuple<SigmaMode, ScoreMaskKind>> {};

TEST_P(W2KernelGradcheck, MuSigmaAndTau) {
  const auto [mode, kind] = GetParam();
  const int64_t b = 2, h = 2, nq = 4, nk = kind == ScoreMaskKind::Causal ? 4 : 5, dh = 3;
  Generator gen(41);
  Tensor mu_q = randn({b, h, nq, dh}, DType::Float64, &gen).requires_grad_();
  Tensor mu_k = randn({b, h, nk, dh}, DType::Float64, &gen).requires_grad_();
  const Shape sq = mode == SigmaMode::Scalar ? Shape{b, h, nq} : Shape{b, h, nq, dh};
  const Shape sk = mode == SigmaMode::Scalar ? Shape{b, h, nk} : Shape{b, h, nk, dh};
  Tensor sigma_q = softplus(randn(sq, DType::Float64, &gen)).detach().requires_grad_();  // positive
  Tensor sigma_k = softplus(randn(sk, DType::Float64, &gen)).detach().requires_grad_();
  Tensor tau = tensor({1.3, 2.1}, DType::Float64).requires_grad_();  // (H)
  const ScoreMask m = score_mask(kind, b, h, nq, nk);
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) { return w2_attention_probs(in[0], in[1], in[2], in[3], in[4], m); },
      {mu_q, mu_k, sigma_q, sigma_k, tau});
  EXPECT_TRUE(r.passed) << r.report;
}

INSTANTIATE_TEST_SUITE_P(MaskAndSigma, W2KernelGradcheck,
                         ::testing::Combine(::testing::Values(SigmaMode::Scalar, SigmaMode::Vector),
                                            ::testing::ValuesIn(kScoreMaskKinds)),
                         [](const auto& info) {
                           return std::string(sigma_name(std::get<0>(info.param))) + "_" +
                                  score_mask_name(std::get<1>(info.param));
                         });

// A fully masked query row (P = 0 there) must not disturb tau's gradient,
// which the backward rebuilds from log P.
TEST(W2KernelGradcheckRows, FullyMaskedRowAndNonContiguousInputs) {
  Generator gen(42);
  // (B, H, N, dh) views of (B, N, H, dh) tensors, as the module passes them.
  Tensor mu_q = randn({1, 3, 2, 2}, DType::Float64, &gen).requires_grad_();
  Tensor mu_k = randn({1, 4, 2, 2}, DType::Float64, &gen).requires_grad_();
  Tensor sigma_q = rand({1, 2, 3}, DType::Float64, &gen).requires_grad_();
  Tensor sigma_k = rand({1, 2, 4}, DType::Float64, &gen).requires_grad_();
  Tensor tau = tensor({0.7, 1.9}, DType::Float64).requires_grad_();
  std::vector<bool> keep(12, true);
  for (int j = 0; j < 4; ++j) keep[4 + j] = false;  // query 1 sees nothing
  ScoreMask m;
  m.mask = tensor_bool(keep, {3, 4});
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) {
        return w2_attention_probs(transpose(in[0], 1, 2), transpose(in[1], 1, 2), in[2], in[3], in[4], m);
      },
      {mu_q, mu_k, sigma_q, sigma_k, tau});
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(W2KernelGradcheckRows, CausalWithOffsetOverMoreKeysThanQueries) {
  // Decoding-style: 3 new queries after 2 cached keys, query i sees keys j <= i + 2.
  Generator gen(49);
  Tensor mu_q = randn({1, 2, 3, 3}, DType::Float64, &gen).requires_grad_();
  Tensor mu_k = randn({1, 2, 5, 3}, DType::Float64, &gen).requires_grad_();
  Tensor sigma_q = rand({1, 2, 3, 3}, DType::Float64, &gen).requires_grad_();
  Tensor sigma_k = rand({1, 2, 5, 3}, DType::Float64, &gen).requires_grad_();
  Tensor tau = tensor({0.9, 1.6}, DType::Float64).requires_grad_();
  ScoreMask m;
  m.causal = true;
  m.causal_offset = 2;
  const Tensor p = w2_attention_probs(mu_q, mu_k, sigma_q, sigma_k, tau, m);
  EXPECT_EQ(p.at({0, 1, 0, 3}), 0.0);
  EXPECT_GT(p.at({0, 1, 0, 2}), 0.0);
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) { return w2_attention_probs(in[0], in[1], in[2], in[3], in[4], m); },
      {mu_q, mu_k, sigma_q, sigma_k, tau});
  EXPECT_TRUE(r.passed) << r.report;
}

// An additive mask is a learnable bias in some models (T5's relative bias,
// learned ALiBi slopes). As in PyTorch, and as scaled_dot_product_attention
// does, a float mask that requires grad must receive its gradient.
TEST(W2ModuleGradcheckMask, AdditiveMaskThatRequiresGradReceivesItsGradient) {
  Generator gen(50);
  W2Attention w2(8, 2, make_rope(4, DType::Float64), SigmaMode::Scalar, &gen, DType::Float64);
  Tensor x = randn({1, 3, 8}, DType::Float64, &gen).requires_grad_();
  Tensor bias = randn({2, 3, 3}, DType::Float64, &gen).requires_grad_();  // (H, T, T), broadcast over B
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) {
        AttentionCall call = AttentionCall::bidirectional();
        call.mask = in[1];
        return w2.forward(in[0], call);
      },
      {x, bias});
  EXPECT_TRUE(r.passed) << r.report;
}

class W2ModuleGradcheck : public ::testing::TestWithParam<SigmaMode> {};

TEST_P(W2ModuleGradcheck, InputAndAllParameters) {
  // Built in float32, then converted: the way a model is gradchecked.
  Generator gen(43);
  W2Attention w2(8, 2, make_rope(4, DType::Float32), GetParam(), &gen);  // D = 8, H = 2, dh = 4
  w2.to(DType::Float64);
  std::vector<Tensor> inputs = {randn({2, 4, 8}, DType::Float64, &gen).requires_grad_()};  // (B, T, D)
  for (const Tensor& p : w2.parameters()) {
    EXPECT_EQ(p.dtype(), DType::Float64);
    inputs.push_back(p);  // gradcheck perturbs them in place: the module sees every change
  }
  ASSERT_EQ(inputs.size(), 8u);  // x, q, k, v, o, sigma_q, sigma_k projections and the temperature
  AttentionCall call = AttentionCall::causal();
  call.mask = tensor_bool({true, true, true, true, true, true, true, false}, {2, 1, 1, 4});  // padding
  const GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& in) { return w2.forward(in[0], call); }, inputs);
  EXPECT_TRUE(r.passed) << r.report;
}

INSTANTIATE_TEST_SUITE_P(Sigma, W2ModuleGradcheck, ::testing::Values(SigmaMode::Scalar, SigmaMode::Vector),
                         [](const auto& info) { return std::string(sigma_name(info.param)); });

// ---- 3. behaviour, by hand ---------------------------------------------------------------------------

// mu_q = (1, 0), (0, 2); mu_k = (0, 0), (1, 1), (3, -1) (dh = 2, B = H = 1), tau = 1.5.
// |mu_q - mu_k|^2 = [1, 1, 5]  and  [4, 2, 18].
const std::vector<std::vector<double>> kMuQ = {{1, 0}, {0, 2}}, kMuK = {{0, 0}, {1, 1}, {3, -1}};
const std::vector<std::vector<double>> kDistMu = {{1, 1, 5}, {4, 2, 18}};
constexpr double kTau = 1.5;

Tensor mu_tensor(const std::vector<std::vector<double>>& rows) {
  std::vector<double> flat;
  for (const auto& r : rows) flat.insert(flat.end(), r.begin(), r.end());
  return tensor(flat, {1, 1, static_cast<int64_t>(rows.size()), 2}, DType::Float64);
}

// softmax_n(-(D_mu^2 + D_sigma^2)_mn / (tau + eps)), row m, by hand.
std::vector<double> expected_row(int m, const std::vector<double>& d_sigma) {
  std::vector<double> s;
  for (int n = 0; n < 3; ++n) s.push_back(-(kDistMu[m][n] + d_sigma[n]) / (kTau + kEps));
  return softmax_row(s);
}

TEST(W2Hand, EqualSigmasLeaveTheSoftmaxOfMeanDistances) {
  // Hand check of the table above.
  for (int m = 0; m < 2; ++m)
    for (int n = 0; n < 3; ++n) {
      double d = 0;
      for (int c = 0; c < 2; ++c) d += (kMuQ[m][c] - kMuK[n][c]) * (kMuQ[m][c] - kMuK[n][c]);
      ASSERT_EQ(d, kDistMu[m][n]);
    }
  const Tensor mu_q = mu_tensor(kMuQ), mu_k = mu_tensor(kMuK), tau = tensor({kTau}, DType::Float64);
  // Scalar sigma: the same 0.7 for every token. Vector sigma: the same (0.3, 0.9) for every token.
  const Tensor scalar_p = w2_attention_probs(mu_q, mu_k, full({1, 1, 2}, 0.7, DType::Float64),
                                             full({1, 1, 3}, 0.7, DType::Float64), tau);
  const Tensor vq = tensor({0.3, 0.9, 0.3, 0.9}, {1, 1, 2, 2}, DType::Float64);
  const Tensor vk = tensor({0.3, 0.9, 0.3, 0.9, 0.3, 0.9}, {1, 1, 3, 2}, DType::Float64);
  const Tensor vector_p = w2_attention_probs(mu_q, mu_k, vq, vk, tau);
  for (const Tensor& p : {scalar_p, vector_p}) {
    ASSERT_EQ(p.shape(), (Shape{1, 1, 2, 3}));
    for (int m = 0; m < 2; ++m) {
      const std::vector<double> want = expected_row(m, {0, 0, 0});
      for (int n = 0; n < 3; ++n) EXPECT_NEAR(p.at({0, 0, m, n}), want[n], 1e-15) << m << ", " << n;
    }
  }
  // Row 0 by hand: scores -1/1.500001, -1/1.500001, -5/1.500001.
  const double e = std::exp(-4 / (kTau + kEps));
  EXPECT_NEAR(scalar_p.at({0, 0, 0, 2}), e / (2 + e), 1e-15);
}

TEST(W2Hand, SigmaDistanceIsDhTimesSquaredDifferenceOrTheVectorNorm) {
  const Tensor mu_q = mu_tensor(kMuQ), mu_k = mu_tensor(kMuK), tau = tensor({kTau}, DType::Float64);
  // Scalar: sigma_q = 0.2, 0.5; sigma_k = 0.1, 0.4, 1.0. D_sigma^2 = dh (s_q - s_k)^2, dh = 2.
  const Tensor scalar_p = w2_attention_probs(mu_q, mu_k, tensor({0.2, 0.5}, {1, 1, 2}, DType::Float64),
                                             tensor({0.1, 0.4, 1.0}, {1, 1, 3}, DType::Float64), tau);
  const std::vector<std::vector<double>> scalar_d = {{2 * 0.01, 2 * 0.04, 2 * 0.64},
                                                     {2 * 0.16, 2 * 0.01, 2 * 0.25}};
  // Vector: sigma_q = (0.2, 1), (0.5, 0.5); sigma_k = (0.1, 1), (0.5, 1.5), (1, 0.5).
  const Tensor vector_p =
      w2_attention_probs(mu_q, mu_k, tensor({0.2, 1, 0.5, 0.5}, {1, 1, 2, 2}, DType::Float64),
                         tensor({0.1, 1, 0.5, 1.5, 1, 0.5}, {1, 1, 3, 2}, DType::Float64), tau);
  const std::vector<std::vector<double>> vector_d = {{0.01, 0.09 + 0.25, 0.64 + 0.25}, {0.16 + 0.25, 1.0, 0.25}};
  for (int m = 0; m < 2; ++m) {
    const std::vector<double> want_s = expected_row(m, scalar_d[m]), want_v = expected_row(m, vector_d[m]);
    for (int n = 0; n < 3; ++n) {
      EXPECT_NEAR(scalar_p.at({0, 0, m, n}), want_s[n], 1e-15) << "scalar " << m << ", " << n;
      EXPECT_NEAR(vector_p.at({0, 0, m, n}), want_v[n], 1e-15) << "vector " << m << ", " << n;
    }
  }
}

TEST(W2Hand, TemperatureIsPerHeadAndEpsIsAddedToIt) {
  // Two heads with the same means and no sigma distance; head 1 is twice as hot.
  const Tensor mu_q = cat({mu_tensor(kMuQ), mu_tensor(kMuQ)}, 1),
               mu_k = cat({mu_tensor(kMuK), mu_tensor(kMuK)}, 1);
  const Tensor p = w2_attention_probs(mu_q, mu_k, zeros({1, 2, 2}, DType::Float64),
                                      zeros({1, 2, 3}, DType::Float64), tensor({0.5, 1.0}, DType::Float64));
  for (int h = 0; h < 2; ++h)
    for (int m = 0; m < 2; ++m) {
      std::vector<double> s;
      for (int n = 0; n < 3; ++n) s.push_back(-kDistMu[m][n] / ((h == 0 ? 0.5 : 1.0) + kEps));
      const std::vector<double> want = softmax_row(s);
      for (int n = 0; n < 3; ++n) EXPECT_NEAR(p.at({0, h, m, n}), want[n], 1e-15) << h << m << n;
    }
  // A tiny tau: eps is what keeps the score finite-scaled, -d / (1e-9 + 1e-6).
  const Tensor tiny =
      w2_attention_probs(mu_tensor({{0, 0}}), mu_tensor({{0, 0}, {1e-3, 0}}), zeros({1, 1, 1}, DType::Float64),
                         zeros({1, 1, 2}, DType::Float64), tensor({1e-9}, DType::Float64));
  const std::vector<double> want = softmax_row({0.0, -1e-6 / (1e-9 + kEps)});
  EXPECT_NEAR(tiny.at({0, 0, 0, 1}), want[1], 1e-12);
}

class W2Rope : public ::testing::TestWithParam<SigmaMode> {};

TEST_P(W2Rope, ShiftingAllPositionsLeavesTheWeightsUnchanged) {
  Generator gen(44);
  W2Attention w2(16, 2, make_rope(8, DType::Float64), GetParam(), &gen, DType::Float64);
  const Tensor x = randn({2, 6, 16}, DType::Float64, &gen);
  Tensor w_default, w_shifted;
  AttentionCall a = AttentionCall::bidirectional(), b = AttentionCall::bidirectional();
  a.weights = &w_default;
  b.weights = &w_shifted;
  b.positions = arange(int64_t{9}, int64_t{15});  // 9..14 instead of 0..5
  const Tensor out_a = w2.forward(x, a), out_b = w2.forward(x, b);
  EXPECT_LE(max_abs_diff(w_shifted, w_default), 1e-12);
  EXPECT_LE(max_abs_diff(out_b, out_a), 1e-12);
  // A permutation of the positions does change the weights: RoPE is applied.
  Tensor w_perm;
  AttentionCall c = AttentionCall::bidirectional();
  c.weights = &w_perm;
  c.positions = tensor_i64({3, 0, 5, 1, 4, 2});
  w2.forward(x, c);
  EXPECT_GT(max_abs_diff(w_perm, w_default), 1e-3);
}

TEST_P(W2Rope, SigmaDoesNotDependOnPosition) {
  // With the mean projections zeroed, mu = 0 and the scores come from sigma
  // alone: any positions, even permuted ones, give bit-identical weights. (A
  // RoPE on a vector sigma would change them; a shift would not show that.)
  Generator gen(45);
  W2Attention w2(16, 2, make_rope(8, DType::Float64), GetParam(), &gen, DType::Float64);
  {
    NoGradGuard no_grad;
    zero_(w2.q_proj->weight);
    zero_(w2.k_proj->weight);
  }
  const Tensor x = randn({2, 6, 16}, DType::Float64, &gen);
  Tensor w_default, w_perm;
  AttentionCall a = AttentionCall::bidirectional(), b = AttentionCall::bidirectional();
  a.weights = &w_default;
  b.weights = &w_perm;
  b.positions = tensor_i64({3, 0, 5, 1, 4, 2});
  w2.forward(x, a);
  w2.forward(x, b);
  EXPECT_EQ(max_abs_diff(w_perm, w_default), 0.0);
  // And those weights are not uniform: sigma does contribute.
  EXPECT_GT(max_abs_diff(w_default, full(w_default.shape(), 1.0 / 6, DType::Float64)), 1e-3);
}

INSTANTIATE_TEST_SUITE_P(Sigma, W2Rope, ::testing::Values(SigmaMode::Scalar, SigmaMode::Vector),
                         [](const auto& info) { return std::string(sigma_name(info.param)); });

TEST(W2Module, TemperatureStartsAtSqrtHeadDim) {
  for (auto [d, h] : std::vector<std::pair<int64_t, int64_t>>{{16, 2}, {16, 4}, {12, 3}}) {
    W2Attention w2(d, h, nullptr, SigmaMode::Scalar, nullptr, DType::Float64);
    ASSERT_EQ(w2.temperature.shape(), (Shape{h}));
    const Tensor tau = w2.temperatures();
    for (int64_t i = 0; i < h; ++i) EXPECT_NEAR(tau.at({i}), std::sqrt(static_cast<double>(d / h)), 1e-12);
  }
  W2Attention w32(16, 2);  // float32 by default
  EXPECT_NEAR(w32.temperatures().at({1}), std::sqrt(8.0), 1e-6);
}

TEST(W2Module, ParameterNamesAndShapes) {
  const int64_t d = 16, h = 4;
  W2Attention scalar(d, h, nullptr, SigmaMode::Scalar);
  W2Attention vec(d, h, nullptr, SigmaMode::Vector);
  for (W2Attention* m : {&scalar, &vec}) {
    const bool is_scalar = m == &scalar;
    std::map<std::string, Shape> shapes;
    for (const auto& [name, p] : m->named_parameters()) shapes[name] = p.shape();
    std::vector<std::string> names;
    for (const auto& [name, s] : shapes) names.push_back(name);
    EXPECT_EQ(names, kParamNames);
    for (const char* n : {"q_proj.weight", "k_proj.weight", "v_proj.weight", "output_proj.weight"})
      EXPECT_EQ(shapes[n], (Shape{d, d})) << n;
    const Shape sigma_shape = is_scalar ? Shape{h, d} : Shape{d, d};
    EXPECT_EQ(shapes["sigma_q_proj.weight"], sigma_shape);
    EXPECT_EQ(shapes["sigma_k_proj.weight"], sigma_shape);
    EXPECT_EQ(shapes["temperature"], (Shape{h}));
    EXPECT_EQ(m->num_parameters(), 4 * d * d + 2 * sigma_shape[0] * d + h);
  }
}

TEST(W2Masks, FullyMaskedRowGivesZerosAndZeroGradient) {
  Generator gen(46);
  Tensor mu_q = randn({1, 2, 3, 4}, DType::Float64, &gen).requires_grad_();
  Tensor mu_k = randn({1, 2, 5, 4}, DType::Float64, &gen).requires_grad_();
  Tensor sigma_q = rand({1, 2, 3}, DType::Float64, &gen).requires_grad_();
  Tensor sigma_k = rand({1, 2, 5}, DType::Float64, &gen).requires_grad_();
  Tensor tau = tensor({1.0, 2.0}, DType::Float64).requires_grad_();
  std::vector<bool> keep(15, true);
  std::vector<double> bias(15, 0.0);
  for (int j = 0; j < 5; ++j) {  // query 1 sees nothing
    keep[5 + j] = false;
    bias[5 + j] = -INFINITY;
  }
  for (const Tensor& mask : {tensor_bool(keep, {3, 5}), tensor(bias, {3, 5}, DType::Float64)}) {
    for (Tensor* t : {&mu_q, &mu_k, &sigma_q, &sigma_k, &tau}) t->set_grad(Tensor());
    ScoreMask m;
    m.mask = mask;
    const Tensor p = w2_attention_probs(mu_q, mu_k, sigma_q, sigma_k, tau, m);  // (1, 2, 3, 5)
    ASSERT_TRUE(all_finite(p)) << "NaN or inf, mask " << dtype_name(mask.dtype());
    EXPECT_EQ(max_abs_diff(select(p, 2, 1), zeros({1, 2, 5}, DType::Float64)), 0.0);
    EXPECT_LE(max_abs_diff(sum(select(p, 2, 0), {-1}), ones({1, 2}, DType::Float64)), 1e-15);
    backward(sum(mul(p, randn(p.shape(), DType::Float64, &gen))));
    for (Tensor* t : {&mu_q, &mu_k, &sigma_q, &sigma_k, &tau}) ASSERT_TRUE(all_finite(t->grad()));
    EXPECT_EQ(max_abs_diff(select(mu_q.grad(), 2, 1), zeros({1, 2, 4}, DType::Float64)), 0.0);
    EXPECT_EQ(max_abs_diff(select(sigma_q.grad(), 2, 1), zeros({1, 2}, DType::Float64)), 0.0);
    EXPECT_GT(max_abs_diff(select(mu_q.grad(), 2, 0), zeros({1, 2, 4}, DType::Float64)), 0.0);
  }
  // The module: that query's output row is zero.
  W2Attention w2(8, 2, make_rope(4, DType::Float64), SigmaMode::Vector, &gen, DType::Float64);
  AttentionCall call = AttentionCall::bidirectional();
  call.mask = tensor_bool({true, true, true, false, false, false, true, true, true}, {3, 3});  // (T, T)
  const Tensor out = w2.forward(randn({2, 3, 8}, DType::Float64, &gen), call);
  ASSERT_TRUE(all_finite(out));
  EXPECT_EQ(max_abs_diff(select(out, 1, 1), zeros({2, 8}, DType::Float64)), 0.0);
  EXPECT_GT(max_abs_diff(select(out, 1, 0), zeros({2, 8}, DType::Float64)), 0.0);
}

TEST(W2Masks, CausalRowsSumToOneAndFirstQuerySeesOnlyKeyZero) {
  Generator gen(47);
  const Tensor mu_q = randn({2, 2, 5, 3}, DType::Float64, &gen), mu_k = randn({2, 2, 5, 3}, DType::Float64, &gen);
  ScoreMask m;
  m.causal = true;
  const Tensor p =
      w2_attention_probs(mu_q, mu_k, rand({2, 2, 5}, DType::Float64, &gen), rand({2, 2, 5}, DType::Float64, &gen),
                         tensor({1.0, 3.0}, DType::Float64), m);
  for (int64_t b = 0; b < 2; ++b)
    for (int64_t h = 0; h < 2; ++h)
      for (int64_t i = 0; i < 5; ++i) {
        double row = 0;
        for (int64_t j = 0; j < 5; ++j) {
          if (j > i) {
            EXPECT_EQ(p.at({b, h, i, j}), 0.0);
          }
          row += p.at({b, h, i, j});
        }
        EXPECT_NEAR(row, 1.0, 1e-15);
      }
  EXPECT_EQ(p.at({1, 1, 0, 0}), 1.0);
}

// ---- 4. memory -------------------------------------------------------------------------------------------

// Forward + backward of w2_attention_probs at B = 2, H = 2, T = 64, dh = 16
// (float32). A kernel that formed mu_q - mu_k as a (B, H, T, T, dh) tensor
// would need B H T T dh floats = 1 MiB; the fused one keeps P (B H T T = 64 KiB)
// and the inputs, and its backward works on a few (B, H, T, T) matrices.
class W2Memory : public ::testing::TestWithParam<SigmaMode> {};

TEST_P(W2Memory, BackwardKeepsPAndTheInputsOnly) {
  const int64_t b = 2, h = 2, t = 64, dh = 16, d = h * dh, f = 4;  // f: bytes per float
  const bool scalar = GetParam() == SigmaMode::Scalar;
  Generator gen(48);
  Tensor mu_q = randn({b, h, t, dh}, DType::Float32, &gen).requires_grad_();
  Tensor mu_k = randn({b, h, t, dh}, DType::Float32, &gen).requires_grad_();
  Tensor sigma_q = rand(scalar ? Shape{b, h, t} : Shape{b, h, t, dh}, DType::Float32, &gen).requires_grad_();
  Tensor sigma_k = rand(scalar ? Shape{b, h, t} : Shape{b, h, t, dh}, DType::Float32, &gen).requires_grad_();
  Tensor tau = tensor({4.0, 4.0}, DType::Float32).requires_grad_();
  const Tensor grad_p = randn({b, h, t, t}, DType::Float32, &gen);  // the incoming gradient, an input too
  ScoreMask m;
  m.causal = true;

  reset_peak_memory();
  const int64_t base = memory_stats().current_bytes;
  Tensor p = w2_attention_probs(mu_q, mu_k, sigma_q, sigma_k, tau, m);
  const int64_t kept = memory_stats().current_bytes - base;  // P and what its node saved
  backward(p, grad_p);
  const int64_t peak = memory_stats().peak_bytes - base;
  const int64_t bhtt = b * h * t * t, fifth_dim = bhtt * dh;
  // [mu, c sigma] for queries and keys: dh + 1 columns (scalar) or 2 dh (vector).
  const int64_t augmented = 2 * b * h * t * (scalar ? dh + 1 : 2 * dh);
  std::printf(
      "[ W2 %s ] kept after forward %lld B (P %lld B), peak forward+backward %lld B;"
      " a (B,H,T,T,dh) tensor would be %lld B\n",
      sigma_name(GetParam()), static_cast<long long>(kept), static_cast<long long>(bhtt * f),
      static_cast<long long>(peak), static_cast<long long>(fifth_dim * f));
  // Kept: P plus the augmented inputs (and a little for tau and the graph).
  EXPECT_GE(kept, bhtt * f);
  EXPECT_LE(kept, (bhtt + augmented) * f + 4096);
  // Peak: a few (B, H, T, T) matrices and O(B T D) vectors, far below B H T T dh.
  EXPECT_LT(peak, (4 * bhtt + 16 * b * t * d) * f);
  EXPECT_LT(peak, fifth_dim * f / 3);
  EXPECT_TRUE(mu_q.grad().defined() && tau.grad().defined());
}

INSTANTIATE_TEST_SUITE_P(Sigma, W2Memory, ::testing::Values(SigmaMode::Scalar, SigmaMode::Vector),
                         [](const auto& info) { return std::string(sigma_name(info.param)); });

// ---- 5. bad inputs ------------------------------------------------------------------------------------

struct W2Inputs {
  Tensor mu_q = zeros({2, 2, 5, 4}), mu_k = zeros({2, 2, 6, 4});
  Tensor sq = ones({2, 2, 5}), sk = ones({2, 2, 6}), tau = ones({2});
};

TEST(W2Errors, SigmaShapeMismatch) {
  const W2Inputs in;
  for (const auto& shapes : std::vector<std::pair<Shape, Shape>>{{{2, 2, 4}, {2, 2, 6}},     // Nq wrong
                                                                  {{2, 2, 5}, {2, 2, 6, 4}},  // scalar vs vector
                                                                  {{2, 2, 5, 3}, {2, 2, 6, 3}}}) {  // dh wrong
    const Shape &sq = shapes.first, &sk = shapes.second;
    const std::string msg = error_of([&] { w2_attention_probs(in.mu_q, in.mu_k, ones(sq), ones(sk), in.tau); });
    EXPECT_THAT(msg, HasSubstr("w2_attention"));
    EXPECT_THAT(msg, HasSubstr(shape_str(sq)));
    EXPECT_THAT(msg, HasSubstr(shape_str(sk)));
  }
}

TEST(W2Errors, TauWrongShapeOrDtype) {
  const W2Inputs in;
  for (const Shape& s : {Shape{3}, Shape{1, 2}, Shape{}}) {
    const std::string msg = error_of([&] { w2_attention_probs(in.mu_q, in.mu_k, in.sq, in.sk, ones(s)); });
    EXPECT_THAT(msg, HasSubstr("w2_attention"));
    EXPECT_THAT(msg, HasSubstr("tau"));
    EXPECT_THAT(msg, HasSubstr(shape_str(s)));
  }
  const std::string msg =
      error_of([&] { w2_attention_probs(in.mu_q, in.mu_k, in.sq, in.sk, ones({2}, DType::Float64)); });
  EXPECT_THAT(msg, HasSubstr("w2_attention"));
  EXPECT_THAT(msg, HasSubstr("float64"));
}

TEST(W2Errors, NonPositiveOrNonFiniteTau) {
  const W2Inputs in;
  for (double bad : {0.0, -1.5, std::nan(""), INFINITY * 1.0}) {
    const std::string msg = error_of([&] {
      w2_attention_probs(in.mu_q, in.mu_k, in.sq, in.sk, tensor({1.0, bad}));
    });
    EXPECT_THAT(msg, HasSubstr("w2_attention"));
    EXPECT_THAT(msg, HasSubstr("tau[1]"));
    EXPECT_THAT(msg, HasSubstr("positive"));
  }
  EXPECT_THAT(error_of([&] {
                w2_attention_probs(in.mu_q, in.mu_k, in.sq, in.sk, tensor({1.0, -1.5}));
              }),
              HasSubstr("-1.5"));
}

TEST(W2Errors, MaskThatDoesNotBroadcast) {
  const W2Inputs in;  // scores (B, H, Nq, Nk) = (2, 2, 5, 6)
  for (const Shape& mask_shape : {Shape{5, 5}, Shape{3, 1, 1, 6}, Shape{2, 2, 2, 5, 6}}) {
    ScoreMask m;
    m.mask = ones(mask_shape, DType::Bool);
    const std::string msg = error_of([&] { w2_attention_probs(in.mu_q, in.mu_k, in.sq, in.sk, in.tau, m); });
    EXPECT_THAT(msg, HasSubstr("w2_attention"));
    EXPECT_THAT(msg, HasSubstr(shape_str(mask_shape)));
    EXPECT_THAT(msg, HasSubstr(shape_str({2, 2, 5, 6})));
  }
}

TEST(W2Errors, MeansThatDisagree) {
  const W2Inputs in;
  const std::string msg = error_of([&] {
    w2_attention_probs(in.mu_q, zeros({2, 2, 6, 3}), in.sq, in.sk, in.tau);
  });
  EXPECT_THAT(msg, HasSubstr("w2_attention"));
  EXPECT_THAT(msg, HasSubstr(shape_str({2, 2, 5, 4})));
  EXPECT_THAT(msg, HasSubstr(shape_str({2, 2, 6, 3})));
}

TEST(W2Errors, ModuleRejectsACacheAndBadShapes) {
  W2Attention w2(16, 2);
  KVCache cache;
  AttentionCall call = AttentionCall::causal();
  call.cache = &cache;
  const std::string cached = error_of([&] { w2.forward(zeros({2, 4, 16}), call); });
  EXPECT_THAT(cached, HasSubstr("W2Attention"));
  EXPECT_THAT(cached, HasSubstr("cache"));
  EXPECT_EQ(cache.length(), 0);
  const std::string wrong_d = error_of([&] { w2.forward(zeros({2, 4, 12}), AttentionCall::causal()); });
  EXPECT_THAT(wrong_d, HasSubstr("W2Attention"));
  EXPECT_THAT(wrong_d, HasSubstr(shape_str({2, 4, 12})));
  const std::string heads = error_of([] { W2Attention w(10, 3); });
  EXPECT_THAT(heads, HasSubstr("W2Attention"));
  EXPECT_THAT(heads, HasSubstr("10"));
  const std::string rope = error_of([] { W2Attention w(16, 2, make_rope(4, DType::Float32)); });
  EXPECT_THAT(rope, HasSubstr("W2Attention"));
  EXPECT_THAT(rope, HasSubstr("head_dim 4"));
}
