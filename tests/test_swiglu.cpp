// nn::SwiGLU (docs/appendix-a-formulas.md, building blocks): FFN(x) = W2 (SiLU(W1 x) * W3 x), no biases, with
// W1, W3 (d_ff, D) and W2 (D, d_ff); d_ff defaults to 8/3 D rounded up to a
// multiple of 64.
//
// Parity: tests/fixtures/make_nn_fixtures.py wrote x (2, 3, 16), the three
// weights (d_ff = 64), (F.silu(x @ W1.T) * (x @ W3.T)) @ W2.T and the gradients
// of sum(out * w) w.r.t. x and every weight with torch 1.13, under
// tests/fixtures/nn/swiglu/. Tolerances: |actual - torch| <= atol + rtol |torch|
// with float64 rtol 1e-10 atol 1e-12, float32 rtol 1e-5 atol 1e-7.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "nn/layers.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::testing;
using ::testing::HasSubstr;

// ---- parity with torch -----------------------------------------------------------------

TEST(SwiGLUParity, Float32) {  // x (2, 3, 16) -> (2, 3, 64) -> (2, 3, 16)
  nn::SwiGLU m(16, 64);
  // float32 stages: three contractions and the gate forward, their mirror backward.
  check_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "swiglu", "f32", /*stages=*/6);
}

TEST(SwiGLUParity, Float64) {
  nn::SwiGLU m(16, 64);
  check_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "swiglu", "f64");
}

// ---- the formula, by hand ----------------------------------------------------------------

TEST(SwiGLU, GatesTheW3BranchWithSiLUOfTheW1Branch) {
  // D = d_ff = 1: W1 = [[1]], W3 = [[2]], W2 = [[3]], x = [1]:
  //   out = 3 * silu(1 * 1) * (2 * 1) = 6 / (1 + e^-1) = 4.3863514717800...
  // (SiLU on the W3 branch instead would give 3 * silu(2) * 1 = 5.2848).
  nn::SwiGLU m(1, 1);
  m.to(DType::Float64);
  m.load_state_dict({{"w1.weight", tensor({1}, {1, 1}, DType::Float64)},
                     {"w2.weight", tensor({3}, {1, 1}, DType::Float64)},
                     {"w3.weight", tensor({2}, {1, 1}, DType::Float64)}});
  const Tensor out = m.forward(tensor({1}, {1}, DType::Float64));
  ASSERT_EQ(shape_str(out.shape()), "[1]");
  EXPECT_NEAR(out.item<double>(), 6.0 / (1.0 + std::exp(-1.0)), 1e-15);
}

TEST(SwiGLU, LeadingBatchDimsActRowByRow) {
  // x (B=2, T=3, D=16) -> (2, 3, 16); each row equals the 1-D forward of that row.
  Generator gen(9);
  nn::SwiGLU m(16, 32, &gen);
  m.to(DType::Float64);
  const Tensor x = randn({2, 3, 16}, DType::Float64, &gen);
  const Tensor y = m.forward(x);
  ASSERT_EQ(shape_str(y.shape()), "[2, 3, 16]");
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t t = 0; t < 3; ++t) {
      const Tensor row = m.forward(select(select(x, 0, b), 0, t));  // (16) -> (16)
      ASSERT_EQ(shape_str(row.shape()), "[16]");
      const std::vector<double> expected = row.to_vector<double>();
      const std::vector<double> got = select(select(y, 0, b), 0, t).to_vector<double>();
      for (size_t i = 0; i < 16; ++i) EXPECT_NEAR(got[i], expected[i], 1e-13 * (1 + std::abs(expected[i])));
    }
  }
}

// ---- gradcheck ----------------------------------------------------------------------------

TEST(SwiGLUGradcheck, Float64InputAndAllThreeWeights) {
  Generator gen(10);
  nn::SwiGLU m(16, 32, &gen);
  m.to(DType::Float64);
  Tensor x = randn({2, 16}, DType::Float64, &gen);
  x.requires_grad_(true);
  std::vector<Tensor> inputs = {x};
  for (const Tensor& p : m.parameters()) inputs.push_back(p);  // w1, w2, w3 weights
  ASSERT_EQ(inputs.size(), 4u);
  const GradcheckResult r = gradcheck([&](const std::vector<Tensor>& in) { return m.forward(in[0]); }, inputs);
  EXPECT_TRUE(r.passed) << r.report;
}

// ---- default d_ff -------------------------------------------------------------------------------

TEST(SwiGLU, DefaultDffIsEightThirdsDRoundedUpToAMultipleOf64) {
  EXPECT_EQ(nn::SwiGLU::default_d_ff(16), 64);      // 42.67 -> 64
  EXPECT_EQ(nn::SwiGLU::default_d_ff(24), 64);      // exactly 64
  EXPECT_EQ(nn::SwiGLU::default_d_ff(25), 128);     // 66.67 -> 128
  EXPECT_EQ(nn::SwiGLU::default_d_ff(64), 192);     // 170.67 -> 192
  EXPECT_EQ(nn::SwiGLU::default_d_ff(512), 1408);   // 1365.33 -> 1408
  EXPECT_EQ(nn::SwiGLU::default_d_ff(768), 2048);   // exactly 2048, not rounded further
  EXPECT_EQ(nn::SwiGLU::default_d_ff(1024), 2752);  // 2730.67 -> 2752
  EXPECT_EQ(nn::SwiGLU::default_d_ff(1600), 4288);  // 4266.67 -> 4288
  // d_ff <= 0 in the constructor picks the default.
  nn::SwiGLU m(512);
  EXPECT_EQ(shape_str(m.w1->weight.shape()), "[1408, 512]");
  nn::SwiGLU explicit_dff(512, 100);
  EXPECT_EQ(shape_str(explicit_dff.w1->weight.shape()), "[100, 512]");
}

// ---- names, shapes, init -------------------------------------------------------------------------

TEST(SwiGLU, ParametersAreW1W2W3WeightsWithCS336Shapes) {
  nn::SwiGLU m(16, 48);
  EXPECT_EQ(m.type_name(), "SwiGLU");
  const auto params = m.named_parameters();
  ASSERT_EQ(params.size(), 3u);
  EXPECT_EQ(params[0].first, "w1.weight");
  EXPECT_EQ(shape_str(params[0].second.shape()), "[48, 16]");  // (d_ff, D)
  EXPECT_EQ(params[1].first, "w2.weight");
  EXPECT_EQ(shape_str(params[1].second.shape()), "[16, 48]");  // (D, d_ff)
  EXPECT_EQ(params[2].first, "w3.weight");
  EXPECT_EQ(shape_str(params[2].second.shape()), "[48, 16]");  // (d_ff, D)
  EXPECT_TRUE(params[1].second.is_same(m.w2->weight));
  EXPECT_EQ(m.num_parameters(), 3 * 16 * 48);
  const nn::StateDict state = m.state_dict();
  std::vector<std::string> keys;
  for (const auto& [k, v] : state) keys.push_back(k);
  EXPECT_EQ(keys, (std::vector<std::string>{"w1.weight", "w2.weight", "w3.weight"}));
  const auto children = m.named_children();
  ASSERT_EQ(children.size(), 3u);
  EXPECT_EQ(children[0].second->type_name(), "Linear");
}

TEST(SwiGLUInit, EachLinearHasStdSqrt2OverFanSum) {
  // All three are (d_ff, D) or (D, d_ff), so sigma = sqrt(2 / (D + d_ff)) for
  // each; cut at 3 sigma, the sample std is 0.98658 sigma.
  Generator gen(12);
  const int64_t d = 64, d_ff = 192;
  nn::SwiGLU m(d, 0, &gen);
  const double sigma = std::sqrt(2.0 / (d + d_ff));
  for (const auto& [name, p] : m.named_parameters()) {
    const std::vector<double> w = p.to_vector<double>();
    ASSERT_EQ(w.size(), static_cast<size_t>(d * d_ff)) << name;
    const double n = static_cast<double>(w.size());
    double mean = 0, sq = 0, max_abs = 0;
    for (double v : w) mean += v / n;
    for (double v : w) sq += (v - mean) * (v - mean) / n, max_abs = std::max(max_abs, std::abs(v));
    EXPECT_NEAR(mean, 0.0, 0.05 * sigma) << name;  // ~5 standard errors for n = 12288
    EXPECT_NEAR(std::sqrt(sq), 0.98658 * sigma, 0.035 * sigma) << name;
    EXPECT_LE(max_abs, 3 * sigma) << name;
  }
  // Three different draws, not one weight copied three times.
  EXPECT_NE(m.w1->weight.to_vector<double>(), m.w3->weight.to_vector<double>());
}

// ---- bad input ----------------------------------------------------------------------------------

TEST(SwiGLUErrors, WrongInputSizeNamesLinearAndShapes) {
  nn::SwiGLU m(16, 64);
  const std::string msg = error_of([&] { m.forward(zeros({2, 15})); });
  EXPECT_THAT(msg, HasSubstr("Linear"));
  EXPECT_THAT(msg, HasSubstr("[2, 15]"));
  EXPECT_THAT(msg, HasSubstr("[64, 16]"));  // w1's weight
}

// ---- the fused gate silu_mul -----------------------------------------------------------

TEST(SiluMul, EqualsSiluTimesTheOtherBranchWithBroadcasting) {
  const Tensor a = tensor({-30.0, -2.0, -0.5, 0.0, 0.5, 3.0, 40.0}, DType::Float64);  // (7)
  const Tensor b = tensor({1.5}, DType::Float64);                                      // (1), broadcast
  const std::vector<double> got = nn::silu_mul(a, b).to_vector<double>();
  const std::vector<double> av = a.to_vector<double>();
  for (size_t i = 0; i < av.size(); ++i) {
    const double expected = av[i] / (1.0 + std::exp(-av[i])) * 1.5;  // SiLU(a) b by hand
    EXPECT_NEAR(got[i], expected, 1e-15 * std::max(1.0, std::abs(expected))) << "a = " << av[i];
  }
}

TEST(SiluMul, Float32MatchesTheSeparateOpsToAFewUlp) {
  Generator gen(3);
  const Tensor a = randn({64, 48}, DType::Float32, &gen) * 4.0;
  const Tensor b = randn({64, 48}, DType::Float32, &gen);
  const Tensor fused = nn::silu_mul(a, b);
  const Tensor separate = silu(a) * b;  // libm exp in SiLU, the fused op's fast_exp
  EXPECT_TRUE(all_close(fused, separate, Tol{1e-6, 1e-7}));
}

// The gate's fast form (its vectorisable sigmoid and one-pass backward) is
// tested against this plain form in tests/test_fast_forms.cpp.

TEST(SiluMulErrors, MixedDtypesAndUnbroadcastableShapesNameTheOp) {
  EXPECT_RG_ERROR(nn::silu_mul(ones({3}, DType::Float32), ones({3}, DType::Float64)), "silu_mul", "float32",
                  "float64");
  EXPECT_RG_ERROR(nn::silu_mul(ones({3}), ones({4})), "[3]", "[4]");
  EXPECT_RG_ERROR(nn::silu_mul(ones({3}, DType::Int64), ones({3}, DType::Int64)), "silu_mul", "int64");
}
