// nn::RMSNorm and nn::rms_norm (docs/appendix-a-formulas.md, building blocks): over the last dim,
//   y = x / sqrt(mean(x^2) + eps) * g,    eps inside the root, g starts at 1,
// a fused op whose backward is derived by hand in nn/rmsnorm.cpp.
//
// Parity: tests/fixtures/make_nn_fixtures.py wrote x, g, y (the CS336 formula
// written with torch ops; torch 1.13 has no nn.RMSNorm) and the gradients of
// sum(y * w) w.r.t. x and g with torch 1.13, under tests/fixtures/nn/rmsnorm*/.
// Tolerances: |actual - torch| <= atol + rtol |torch| with float64 rtol 1e-10
// atol 1e-12, float32 rtol 1e-5 atol 1e-7.
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

TEST(RMSNormParity, Float32) {  // x (2, 3, 8), random gain (8), eps 1e-5
  nn::RMSNorm m(8);
  // float32 stages: mean of squares, root, scale; the backward's row dot.
  check_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "rmsnorm", "f32", /*stages=*/4);
}

TEST(RMSNormParity, Float64) {
  nn::RMSNorm m(8);
  check_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "rmsnorm", "f64");
}

TEST(RMSNormParity, SmallInputsWhereEpsMattersFloat32) {  // x ~ 1e-2: mean(x^2) ~ 1e-4, eps 1e-3
  nn::RMSNorm m(8, 1e-3);
  ASSERT_EQ(nn_fixture("rmsnorm_eps", "f64", "eps").item<double>(), 1e-3);
  // float32 stages: mean of squares, root, scale; the backward's row dot.
  check_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "rmsnorm_eps", "f32", /*stages=*/4);
}

TEST(RMSNormParity, SmallInputsWhereEpsMattersFloat64) {
  nn::RMSNorm m(8, 1e-3);
  check_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "rmsnorm_eps", "f64");
}

// ---- the formula, by hand ----------------------------------------------------------------

TEST(RMSNorm, DividesByTheRootMeanSquare) {
  // x = [3, 4, 0, 0] (float64, eps 0): mean(x^2) = 25/4, rms = 2.5, y = x / 2.5.
  nn::RMSNorm m(4, 0.0);
  m.to(DType::Float64);
  const Tensor x = tensor({3, 4, 0, 0}, {4}, DType::Float64);
  const std::vector<double> y = m.forward(x).to_vector<double>();
  const std::vector<double> expected = {1.2, 1.6, 0, 0};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(y[i], expected[i], 1e-15) << i;
  // The gain scales each feature: g = [1, 2, -1, 5].
  m.load_state_dict({{"weight", tensor({1, 2, -1, 5}, {4}, DType::Float64)}});
  const std::vector<double> yg = m.forward(x).to_vector<double>();
  const std::vector<double> expected_g = {1.2, 3.2, 0, 0};
  for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(yg[i], expected_g[i], 1e-15) << i;
}

TEST(RMSNorm, EpsGoesInsideTheSquareRoot) {
  // x = 1e-3 everywhere, eps = 1e-5: y = 1e-3 / sqrt(1e-6 + 1e-5) = 0.3015113...
  // (eps outside the root, x / (rms + eps), would give 0.990).
  nn::RMSNorm m(4, 1e-5);
  m.to(DType::Float64);
  const std::vector<double> y = m.forward(full({4}, 1e-3, DType::Float64)).to_vector<double>();
  for (double v : y) EXPECT_NEAR(v, 1e-3 / std::sqrt(1.1e-5), 1e-15);
  // With eps = 0 the same row normalises to exactly 1.
  nn::RMSNorm no_eps(4, 0.0);
  no_eps.to(DType::Float64);
  for (double v : no_eps.forward(full({4}, 1e-3, DType::Float64)).to_vector<double>()) EXPECT_NEAR(v, 1.0, 1e-15);
}

TEST(RMSNorm, ARowOfZerosGivesZerosAndFiniteGradients) {
  // x = 0: y = 0 / sqrt(0 + eps) = 0, and dL/dx = g dy / sqrt(eps) (the second
  // term of the backward carries a factor x = 0); dL/dg = dy x r = 0.
  nn::RMSNorm m(4, 1e-5);
  m.to(DType::Float64);
  Tensor x = zeros({2, 4}, DType::Float64);  // row 0 all zeros, row 1 too
  x.requires_grad_(true);
  const Tensor y = m.forward(x);
  EXPECT_EQ(y.to_vector<double>(), std::vector<double>(8, 0.0));
  backward(sum(mul(y, tensor({1, 2, 3, 4, -1, -2, -3, -4}, {2, 4}, DType::Float64))));
  const std::vector<double> dx = x.grad().to_vector<double>();
  const std::vector<double> dy = {1, 2, 3, 4, -1, -2, -3, -4};
  for (size_t i = 0; i < 8; ++i) EXPECT_NEAR(dx[i], dy[i] / std::sqrt(1e-5), 1e-10) << i;
  EXPECT_EQ(m.weight.grad().to_vector<double>(), std::vector<double>(4, 0.0));
}

TEST(RMSNorm, ZerosInFloat32HaveNoNaN) {
  nn::RMSNorm m(3);
  Tensor x = zeros({3});
  x.requires_grad_(true);
  const Tensor y = m.forward(x);
  backward(sum(y));
  for (double v : y.to_vector<double>()) EXPECT_EQ(v, 0.0);
  for (double v : x.grad().to_vector<double>()) EXPECT_TRUE(std::isfinite(v)) << v;
}

TEST(RMSNorm, ScaleInvariantWithoutEps) {
  // eps = 0: y(c x) = y(x) for c > 0, the point of normalising.
  Generator gen(4);
  nn::RMSNorm m(16, 0.0);
  m.to(DType::Float64);
  const Tensor x = randn({3, 16}, DType::Float64, &gen);
  const std::vector<double> y = m.forward(x).to_vector<double>();
  const std::vector<double> y_scaled = m.forward(mul(x, 1000.0)).to_vector<double>();
  for (size_t i = 0; i < y.size(); ++i) EXPECT_NEAR(y_scaled[i], y[i], 1e-12 * (1 + std::abs(y[i])));
}

TEST(RMSNorm, LeadingBatchDimsActRowByRow) {
  // x (B=2, T=3, D=8) -> (2, 3, 8); each row equals the 1-D forward of that row.
  Generator gen(5);
  nn::RMSNorm m(8);
  m.load_state_dict({{"weight", randn({8}, DType::Float32, &gen)}});
  const Tensor x = randn({2, 3, 8}, DType::Float32, &gen);
  const Tensor y = m.forward(x);
  ASSERT_EQ(shape_str(y.shape()), "[2, 3, 8]");
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t t = 0; t < 3; ++t) {
      const Tensor row = m.forward(select(select(x, 0, b), 0, t));  // (8) -> (8)
      ASSERT_EQ(shape_str(row.shape()), "[8]");
      EXPECT_EQ(select(select(y, 0, b), 0, t).to_vector<double>(), row.to_vector<double>());
    }
  }
  // A non-contiguous input (a transposed view, rows strided by 1, features by 6)
  // gives the same rows as its contiguous copy.
  const Tensor view = transpose(randn({8, 6}, DType::Float32, &gen), 0, 1);  // (6, 8)
  ASSERT_FALSE(view.is_contiguous());
  EXPECT_EQ(m.forward(view).to_vector<double>(), m.forward(contiguous(view)).to_vector<double>());
}

// ---- gradcheck ----------------------------------------------------------------------------

TEST(RMSNormGradcheck, Float64InputAndGain) {
  Generator gen(6);
  nn::RMSNorm m(16);
  m.to(DType::Float64);
  // A gain other than ones, so a backward that ignores g in dL/dx is caught.
  m.load_state_dict({{"weight", add(randn({16}, DType::Float64, &gen), 1.0)}});
  Tensor x = randn({2, 3, 16}, DType::Float64, &gen);
  x.requires_grad_(true);
  const GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& in) { return m.forward(in[0]); }, {x, m.weight});
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(RMSNormGradcheck, Float64SmallInputsWithLargeEps) {
  Generator gen(8);
  nn::RMSNorm m(16, 1e-2);
  m.to(DType::Float64);
  Tensor x = mul(randn({3, 16}, DType::Float64, &gen), 0.1);
  x.requires_grad_(true);
  const GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& in) { return m.forward(in[0]); }, {x, m.weight});
  EXPECT_TRUE(r.passed) << r.report;
}

// ---- init, names, shapes ----------------------------------------------------------------------

TEST(RMSNormInit, GainIsOnesNamedWeight) {
  nn::RMSNorm m(6);
  EXPECT_EQ(m.type_name(), "RMSNorm");
  EXPECT_EQ(m.eps, 1e-5);  // the CS336 default
  const auto params = m.named_parameters();
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params[0].first, "weight");
  EXPECT_EQ(shape_str(params[0].second.shape()), "[6]");
  EXPECT_EQ(dtype_name(params[0].second.dtype()), "float32");
  EXPECT_EQ(m.weight.to_vector<double>(), std::vector<double>(6, 1.0));
  EXPECT_TRUE(m.weight.requires_grad());
}

// ---- bad input ----------------------------------------------------------------------------------

TEST(RMSNormErrors, LastDimOtherThanDNamesRmsNormAndShapes) {
  nn::RMSNorm m(8);
  const std::string msg = error_of([&] { m.forward(zeros({2, 5})); });
  EXPECT_THAT(msg, HasSubstr("rms_norm"));
  EXPECT_THAT(msg, HasSubstr("[8]"));     // the gain
  EXPECT_THAT(msg, HasSubstr("[2, 5]"));  // the input
}

TEST(RMSNormErrors, DtypeMismatchNamesBothDtypes) {
  nn::RMSNorm m(4);  // float32 gain
  const std::string msg = error_of([&] { m.forward(zeros({4}, DType::Float64)); });
  EXPECT_THAT(msg, HasSubstr("rms_norm"));
  EXPECT_THAT(msg, HasSubstr("float64"));
  EXPECT_THAT(msg, HasSubstr("float32"));
}

TEST(RMSNormErrors, NegativeEpsIsRejected) {
  const std::string msg = error_of([] { nn::rms_norm(ones({4}), ones({4}), -1.0); });
  EXPECT_THAT(msg, HasSubstr("rms_norm"));
  EXPECT_THAT(msg, HasSubstr("eps"));
  EXPECT_THAT(msg, HasSubstr("-1"));
}

TEST(RMSNormErrors, NonPositiveDimIsRejected) {
  const std::string msg = error_of([] { nn::RMSNorm m(0); });
  EXPECT_THAT(msg, HasSubstr("RMSNorm"));
  EXPECT_THAT(msg, HasSubstr("0"));
}
