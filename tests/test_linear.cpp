// nn::Linear (docs/appendix-a-formulas.md, building blocks): y = x W^T with W of shape (d_out, d_in), no bias.
//
// Parity: tests/fixtures/make_nn_fixtures.py wrote x, W, y = x @ W.T and the
// gradients of sum(y * w) (w a fixed random tensor) with torch 1.13, in
// float32 and float64, under tests/fixtures/nn/linear*/.
// Tolerances: |actual - torch| <= atol + rtol |torch| with
// float64 rtol 1e-10 atol 1e-12, float32 rtol 1e-5 atol 1e-7.
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

TEST(LinearParity, BatchedFloat32) {  // x (2, 3, 5), W (4, 5) -> y (2, 3, 4)
  nn::Linear m(5, 4);
  // float32 stages: one contraction forward, one backward.
  check_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "linear", "f32", /*stages=*/2);
}

TEST(LinearParity, BatchedFloat64) {
  nn::Linear m(5, 4);
  check_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "linear", "f64");
}

TEST(LinearParity, VectorInputFloat32) {  // x (5) -> y (4)
  nn::Linear m(5, 4);
  // float32 stages: one contraction forward, one backward.
  check_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "linear_1d", "f32", /*stages=*/2);
}

TEST(LinearParity, VectorInputFloat64) {
  nn::Linear m(5, 4);
  check_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "linear_1d", "f64");
}

// ---- the formula, by hand ----------------------------------------------------------------

TEST(Linear, ComputesXTimesWTransposedByHand) {
  // W (d_out=3, d_in=2) = [[1, 2], [3, 4], [5, 6]], x = [2, 1]: y_i = sum_j W_ij x_j.
  nn::Linear m(2, 3);
  m.load_state_dict({{"weight", tensor({1, 2, 3, 4, 5, 6}, {3, 2})}});
  const Tensor y = m.forward(tensor({2, 1}, {2}));
  EXPECT_EQ(shape_str(y.shape()), "[3]");
  EXPECT_EQ(y.to_vector<double>(), (std::vector<double>{4, 10, 16}));
  // dL/dW = outer(dy, x), dL/dx = W^T dy, for L = sum(y * dy) with dy = [1, 0, -1].
  Tensor x = tensor({2, 1}, {2});
  x.requires_grad_(true);
  backward(sum(mul(m.forward(x), tensor({1, 0, -1}, {3}))));
  EXPECT_EQ(m.weight.grad().to_vector<double>(), (std::vector<double>{2, 1, 0, 0, -2, -1}));
  EXPECT_EQ(x.grad().to_vector<double>(), (std::vector<double>{-4, -4}));
}

TEST(Linear, LeadingBatchDimsActRowByRow) {
  // x (B=2, T=3, D=6) -> (2, 3, 4); each row equals the 1-D forward of that row.
  Generator gen(7);
  nn::Linear m(6, 4, &gen);
  const Tensor x = randn({2, 3, 6}, DType::Float32, &gen);
  const Tensor y = m.forward(x);
  ASSERT_EQ(shape_str(y.shape()), "[2, 3, 4]");
  for (int64_t b = 0; b < 2; ++b) {
    for (int64_t t = 0; t < 3; ++t) {
      const Tensor row = m.forward(select(select(x, 0, b), 0, t));  // (6) -> (4)
      ASSERT_EQ(shape_str(row.shape()), "[4]");
      const std::vector<double> expected = row.to_vector<double>();
      const std::vector<double> got = select(select(y, 0, b), 0, t).to_vector<double>();
      for (size_t i = 0; i < 4; ++i) EXPECT_NEAR(got[i], expected[i], 1e-6 * (1 + std::abs(expected[i])));
    }
  }
  // Extra leading dims (2, 1, 3, 6) keep their shape too.
  EXPECT_EQ(shape_str(m.forward(reshape(x, {2, 1, 3, 6})).shape()), "[2, 1, 3, 4]");
}

// ---- gradcheck ----------------------------------------------------------------------------

TEST(LinearGradcheck, Float64InputAndWeight) {
  Generator gen(1);
  nn::Linear m(16, 8, &gen);
  m.to(DType::Float64);
  ASSERT_EQ(dtype_name(m.weight.dtype()), "float64");
  Tensor x = randn({2, 3, 16}, DType::Float64, &gen);
  x.requires_grad_(true);
  const GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& in) { return m.forward(in[0]); }, {x, m.weight});
  EXPECT_TRUE(r.passed) << r.report;
}

// ---- init ------------------------------------------------------------------------------------

TEST(LinearInit, TruncatedNormalWithStdSqrt2OverFanSum) {
  // CS336: W ~ N(0, 2 / (d_in + d_out)) cut at +-3 sigma. The cut removes the
  // tails, so the sample std is sigma * sqrt(1 - 6 phi(3) / (2 Phi(3) - 1)) = 0.98658 sigma.
  Generator gen(123);
  const int64_t d_in = 256, d_out = 128;
  nn::Linear m(d_in, d_out, &gen);
  ASSERT_EQ(shape_str(m.weight.shape()), "[128, 256]");
  EXPECT_EQ(dtype_name(m.weight.dtype()), "float32");
  const double sigma = std::sqrt(2.0 / (d_in + d_out));  // 0.0722
  const std::vector<double> w = m.weight.to_vector<double>();
  const double n = static_cast<double>(w.size());
  double mean = 0, sq = 0, max_abs = 0;
  for (double v : w) mean += v / n;
  for (double v : w) sq += (v - mean) * (v - mean) / n, max_abs = std::max(max_abs, std::abs(v));
  EXPECT_NEAR(mean, 0.0, 0.03 * sigma);  // ~5 standard errors for n = 32768
  EXPECT_NEAR(std::sqrt(sq), 0.98658 * sigma, 0.02 * sigma);
  EXPECT_LE(max_abs, 3 * sigma);
  EXPECT_GT(max_abs, 2.5 * sigma);  // the tails up to the cut are really drawn
  EXPECT_TRUE(m.weight.requires_grad());
  EXPECT_TRUE(m.weight.is_leaf());
}

TEST(LinearInit, SameSeedSameWeights) {
  Generator a(5), b(5);
  nn::Linear m1(8, 4, &a), m2(8, 4, &b);
  EXPECT_EQ(m1.weight.to_vector<double>(), m2.weight.to_vector<double>());
}

// ---- names, shapes, conversion ---------------------------------------------------------------

TEST(Linear, OneParameterNamedWeightOfShapeDOutDIn) {
  nn::Linear m(5, 4);
  EXPECT_EQ(m.type_name(), "Linear");
  EXPECT_EQ(m.d_in, 5);
  EXPECT_EQ(m.d_out, 4);
  const auto params = m.named_parameters();
  ASSERT_EQ(params.size(), 1u);
  EXPECT_EQ(params[0].first, "weight");
  EXPECT_EQ(shape_str(params[0].second.shape()), "[4, 5]");
  EXPECT_TRUE(params[0].second.is_same(m.weight));
  EXPECT_EQ(m.num_parameters(), 20);
  const nn::StateDict state = m.state_dict();
  ASSERT_EQ(state.size(), 1u);
  EXPECT_EQ(state.begin()->first, "weight");
}

TEST(Linear, ToFloat64KeepsValuesAndTheSameParameter) {
  Generator gen(3);
  nn::Linear m(3, 2, &gen);
  const Tensor before = m.weight;
  const std::vector<double> values = m.weight.to_vector<double>();
  m.to(DType::Float64);
  EXPECT_TRUE(m.weight.is_same(before));  // an optimizer holding it still sees the model's weight
  EXPECT_EQ(dtype_name(m.weight.dtype()), "float64");
  EXPECT_EQ(m.weight.to_vector<double>(), values);  // float32 -> float64 is exact
  EXPECT_EQ(dtype_name(m.forward(ones({3}, DType::Float64)).dtype()), "float64");
}

TEST(Linear, ToFloat64ConvertsAnExistingGradientToo) {
  // torch's module.double() converts param.grad along with the parameter, so a
  // gradient accumulated before the conversion is kept (as float64), not lost.
  nn::Linear m(3, 2);
  backward(sum(m.forward(ones({3}))));  // dL/dW = ones (2, 3)
  ASSERT_TRUE(m.weight.grad().defined());
  m.to(DType::Float64);
  ASSERT_TRUE(m.weight.grad().defined()) << "Module::to dropped the parameter's .grad";
  EXPECT_EQ(dtype_name(m.weight.grad().dtype()), "float64");
  EXPECT_EQ(m.weight.grad().to_vector<double>(), std::vector<double>(6, 1.0));
}

// ---- bad input ----------------------------------------------------------------------------------

TEST(LinearErrors, InputWhoseLastDimIsNotDInNamesLinearAndShapes) {
  nn::Linear m(5, 4);
  const std::string msg = error_of([&] { m.forward(zeros({2, 3})); });
  EXPECT_THAT(msg, HasSubstr("Linear"));
  EXPECT_THAT(msg, HasSubstr("[2, 3]"));  // the input
  EXPECT_THAT(msg, HasSubstr("5"));       // d_in
  EXPECT_THAT(msg, HasSubstr("[4, 5]"));  // the weight
}

TEST(LinearErrors, ZeroDimInputNamesLinear) {
  nn::Linear m(1, 4);
  const std::string msg = error_of([&] { m.forward(scalar_tensor(1.0)); });
  EXPECT_THAT(msg, HasSubstr("Linear"));
  EXPECT_THAT(msg, HasSubstr("[]"));
}

TEST(LinearErrors, LoadingATransposedWeightNamesTheKeyAndBothShapes) {
  nn::Linear m(5, 4);
  const std::string msg = error_of([&] { m.load_state_dict({{"weight", zeros({5, 4})}}); });
  EXPECT_THAT(msg, HasSubstr("load_state_dict"));
  EXPECT_THAT(msg, HasSubstr("weight"));
  EXPECT_THAT(msg, HasSubstr("[5, 4]"));
  EXPECT_THAT(msg, HasSubstr("[4, 5]"));
}

TEST(LinearErrors, NonPositiveSizesAreRejected) {
  const std::string msg = error_of([] { nn::Linear m(0, 4); });
  EXPECT_THAT(msg, HasSubstr("linear_weight"));
  EXPECT_THAT(msg, HasSubstr("d_in=0"));
}
