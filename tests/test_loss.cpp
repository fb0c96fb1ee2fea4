// nn::cross_entropy (docs/appendix-a-formulas.md, building blocks): the mean over rows whose target is not
// ignore_index of -log softmax(logits)[target], a fused op with the backward
//   d loss / d z_n = (softmax(z_n) - onehot(t_n)) / N,   0 for ignored rows.
//
// Parity: tests/fixtures/make_nn_fixtures.py wrote logits, targets,
// F.cross_entropy(logits.view(-1, V), targets.view(-1), ignore_index=...) and
// the gradient of loss * w (w a fixed random scalar) with torch 1.13, under
// tests/fixtures/nn/ce_*/: random logits, logits of magnitude 1e4 and 1e30,
// ignore_index -100 and a class index, and 3-D (B, T, V) logits.
// Tolerances: |actual - torch| <= atol + rtol |torch| with float64 rtol 1e-10
// atol 1e-12, float32 rtol 1e-5 atol 1e-7.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "autograd/gradcheck.h"
#include "autograd/ops.h"
#include "nn/functional.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::testing;
using ::testing::HasSubstr;

namespace {

void check_parity(const std::string& c, const std::string& dt) {
  const Tensor targets = nn_fixture(c, dt, "targets");
  const int64_t ignore_index = nn_fixture(c, dt, "ignore_index").item<int64_t>();
  // leaves: logits (N, V) or (B, T, V), and the 0-d upstream weight w.
  const ParityRun run = [&](const std::vector<Tensor>& ls) {
    Tensor logits = ls[0];
    logits.requires_grad_(true);
    const Tensor loss = nn::cross_entropy(logits, targets, ignore_index);
    EXPECT_EQ(loss.dim(), 0);
    backward(mul(loss, ls[1]));
    return NamedTensors{{"out", loss.detach()}, {"grad_logits", logits.grad()}};
  };
  const std::vector<Tensor> leaves = {nn_fixture(c, dt, "logits"), nn_fixture(c, dt, "w")};
  const auto expected = [&](const std::string& n) { return nn_fixture(c, dt, n); };
  if (dt == "f64") {
    for (const auto& [n, t] : run(leaves)) expect_nn_close(t, expected(n), c + "/" + dt + " " + n);
    return;
  }
  // K: the longest sum, over the V classes or the N targets (both <= 11 here);
  // stages: max, exp and sum, log, the mean, and the backward's softmax.
  expect_f32_parity(run, leaves, expected, {11, 5}, c + "/f32");
}

// The loss written with unfused ops: -mean_n log_softmax(z_n)[t_n], z (N, V), t (N).
Tensor cross_entropy_by_ops(const Tensor& z, const Tensor& t) {
  const Tensor log_probs = log_softmax(z, -1);                     // (N, V)
  const Tensor picked = gather(log_probs, 1, unsqueeze(t, 1));     // (N, 1)
  return neg(mean(picked));
}

}  // namespace

// ---- parity with torch -----------------------------------------------------------------

TEST(CrossEntropyParity, RandomLogitsFloat32) { check_parity("ce_basic", "f32"); }  // (6, 10)
TEST(CrossEntropyParity, RandomLogitsFloat64) { check_parity("ce_basic", "f64"); }
TEST(CrossEntropyParity, LogitsOfMagnitude1e4Float32) { check_parity("ce_large", "f32"); }
TEST(CrossEntropyParity, LogitsOfMagnitude1e4Float64) { check_parity("ce_large", "f64"); }
TEST(CrossEntropyParity, LogitsOfMagnitude1e30Float32) { check_parity("ce_huge", "f32"); }
TEST(CrossEntropyParity, LogitsOfMagnitude1e30Float64) { check_parity("ce_huge", "f64"); }
TEST(CrossEntropyParity, IgnoreIndexMinus100Float32) { check_parity("ce_ignore", "f32"); }
TEST(CrossEntropyParity, IgnoreIndexMinus100Float64) { check_parity("ce_ignore", "f64"); }
TEST(CrossEntropyParity, IgnoreIndexIsAClassFloat32) { check_parity("ce_ignore_class", "f32"); }
TEST(CrossEntropyParity, IgnoreIndexIsAClassFloat64) { check_parity("ce_ignore_class", "f64"); }
TEST(CrossEntropyParity, LogitsBTVFloat32) { check_parity("ce_3d", "f32"); }  // (2, 3, 11), one pad
TEST(CrossEntropyParity, LogitsBTVFloat64) { check_parity("ce_3d", "f64"); }

// ---- what the loss is ---------------------------------------------------------------------

TEST(CrossEntropy, EqualsMinusMeanOfLogSoftmaxAtTheTargets) {
  // The fused op is the three-line definition, value and gradient.
  Generator gen(3);
  Tensor z1 = randn({5, 7}, DType::Float64, &gen);
  z1.requires_grad_(true);
  Tensor z2 = z1.detach();
  z2.requires_grad_(true);
  const Tensor t = tensor_i64({6, 0, 3, 3, 1});
  const Tensor fused = nn::cross_entropy(z1, t);
  const Tensor by_ops = cross_entropy_by_ops(z2, t);
  EXPECT_NEAR(fused.item<double>(), by_ops.item<double>(), 1e-14);
  backward(fused);
  backward(by_ops);
  const std::vector<double> g1 = z1.grad().to_vector<double>(), g2 = z2.grad().to_vector<double>();
  for (size_t i = 0; i < g1.size(); ++i) EXPECT_NEAR(g1[i], g2[i], 1e-15) << i;
}

TEST(CrossEntropy, UniformLogitsCostLogV) {
  // Equal logits: every class has probability 1/V, so the loss is log V for any
  // targets, and the gradient is (1/V - onehot) / N.
  Tensor z = zeros({4, 10}, DType::Float64);
  z.requires_grad_(true);
  const Tensor loss = nn::cross_entropy(z, tensor_i64({0, 9, 5, 5}));
  EXPECT_NEAR(loss.item<double>(), std::log(10.0), 1e-15);
  backward(loss);
  EXPECT_NEAR(z.grad().at<double>({0, 0}), (0.1 - 1) / 4, 1e-16);
  EXPECT_NEAR(z.grad().at<double>({0, 1}), 0.1 / 4, 1e-16);
}

TEST(CrossEntropy, GradientRowsSumToZero) {
  // softmax sums to 1 and onehot sums to 1: each row of the gradient sums to 0.
  Generator gen(4);
  Tensor z = randn({6, 9}, DType::Float64, &gen);
  z.requires_grad_(true);
  backward(nn::cross_entropy(z, randint(0, 9, {6}, &gen)));
  const std::vector<double> row_sums = sum(z.grad(), {1}).to_vector<double>();
  for (double s : row_sums) EXPECT_NEAR(s, 0.0, 1e-16);
}

TEST(CrossEntropy, LogitsBTVEqualTheFlattenedBTxV) {
  // CS336 flattens (B, T, V) logits to (B*T, V) and targets to (B*T).
  Generator gen(5);
  const Tensor z = randn({2, 3, 5}, DType::Float64, &gen);
  const Tensor t = randint(0, 5, {2, 3}, &gen);
  EXPECT_EQ(nn::cross_entropy(z, t).item<double>(),
            nn::cross_entropy(reshape(z, {6, 5}), reshape(t, {6})).item<double>());
  // A single row: logits (V), target 0-d.
  const Tensor row = tensor({1, 2, 3}, {3}, DType::Float64);
  const double expected = std::log(std::exp(1.0) + std::exp(2.0) + std::exp(3.0)) - 2.0;
  EXPECT_NEAR(nn::cross_entropy(row, reshape(tensor_i64({1}), {})).item<double>(), expected, 1e-15);
}

// ---- stability ----------------------------------------------------------------------------

TEST(CrossEntropy, LogitsOf1e4AreFiniteAndExact) {
  // exp(1e4) overflows; subtracting the row max first keeps everything finite.
  //   row 0: z = [1e4, 0, -1e4], t = 0: loss = log(1 + e^-1e4 + e^-2e4) = 0 exactly
  //   row 1: z = [0, 1e4, 2e4],  t = 0: loss = 2e4 - 0 + log(1 + ...) = 2e4
  // mean = 1e4; the softmax is one-hot, so the gradient is exactly
  // (onehot(argmax) - onehot(t)) / 2.
  for (DType dt : {DType::Float32, DType::Float64}) {
    SCOPED_TRACE(dtype_name(dt));
    Tensor z = tensor({1e4, 0, -1e4, 0, 1e4, 2e4}, {2, 3}, dt);
    z.requires_grad_(true);
    const Tensor loss = nn::cross_entropy(z, tensor_i64({0, 0}));
    EXPECT_EQ(loss.item<double>(), 1e4);
    backward(loss);
    EXPECT_EQ(z.grad().to_vector<double>(), (std::vector<double>{0, 0, 0, -0.5, 0, 0.5}));
  }
}

TEST(CrossEntropy, HugeFloat32LogitsStayFinite) {
  // z = [3e38, -3e38]: z - max = [0, -inf after rounding]; exp gives [1, 0]; the
  // loss of the winning class is 0 and its gradient is 0, with no NaN.
  Tensor z = tensor({3e38, -3e38, 1e38, 2e38}, {2, 2}, DType::Float32);
  z.requires_grad_(true);
  const Tensor loss = nn::cross_entropy(z, tensor_i64({0, 1}));
  EXPECT_EQ(loss.item<double>(), 0.0);
  backward(loss);
  for (double g : z.grad().to_vector<double>()) EXPECT_EQ(g, 0.0);
}

// ---- ignore_index --------------------------------------------------------------------------

TEST(CrossEntropy, IgnoredRowsGetZeroGradientAndDoNotCount) {
  // Rows 1 and 3 are ignored: the loss is the mean over rows 0, 2 only, and
  // their gradient rows are exactly 0.
  Generator gen(6);
  Tensor z = randn({4, 5}, DType::Float64, &gen);
  z.requires_grad_(true);
  const Tensor loss = nn::cross_entropy(z, tensor_i64({2, -100, 4, -100}));
  const Tensor kept = index_select(z.detach(), 0, tensor_i64({0, 2}));
  EXPECT_NEAR(loss.item<double>(), nn::cross_entropy(kept, tensor_i64({2, 4})).item<double>(), 1e-15);
  backward(loss);
  for (int64_t j = 0; j < 5; ++j) {
    EXPECT_EQ(z.grad().at<double>({1, j}), 0.0);
    EXPECT_EQ(z.grad().at<double>({3, j}), 0.0);
  }
  // The kept rows are divided by 2 (the number counted), not by 4.
  const double p02 = std::exp(log_softmax(z.detach(), -1).at<double>({0, 2}));
  EXPECT_NEAR(z.grad().at<double>({0, 2}), (p02 - 1) / 2, 1e-15);
}

TEST(CrossEntropy, CustomIgnoreIndex) {
  // ignore_index = 0 (a padding class): targets equal to 0 are skipped.
  const Tensor z = tensor({0, 0, 5, 0}, {2, 2}, DType::Float64);
  const Tensor loss = nn::cross_entropy(z, tensor_i64({0, 1}), /*ignore_index=*/0);
  EXPECT_NEAR(loss.item<double>(), std::log(1 + std::exp(5.0)), 1e-14);  // row 1 only
}

// ---- gradcheck ----------------------------------------------------------------------------

TEST(CrossEntropyGradcheck, Float64WithAnIgnoredRow) {
  Generator gen(7);
  Tensor z = randn({4, 6}, DType::Float64, &gen);
  z.requires_grad_(true);
  const Tensor t = tensor_i64({5, -100, 0, 3});
  const GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& in) { return nn::cross_entropy(in[0], t); }, {z});
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(CrossEntropyGradcheck, Float64LogitsBTV) {
  Generator gen(8);
  Tensor z = randn({2, 3, 5}, DType::Float64, &gen);
  z.requires_grad_(true);
  const Tensor t = tensor_i64({4, 0, 1, 1, 2, 3}, {2, 3});
  const GradcheckResult r =
      gradcheck([&](const std::vector<Tensor>& in) { return nn::cross_entropy(in[0], t); }, {z});
  EXPECT_TRUE(r.passed) << r.report;
}

TEST(CrossEntropyGradcheck, Float64ScaledLossThroughOtherOps) {
  // The fused node receives an upstream gradient other than 1 (loss * 3 + ...).
  Generator gen(9);
  Tensor z = randn({3, 4}, DType::Float64, &gen);
  z.requires_grad_(true);
  const Tensor t = tensor_i64({1, 2, 3});
  const GradcheckResult r = gradcheck(
      [&](const std::vector<Tensor>& in) {
        const Tensor l = nn::cross_entropy(mul(in[0], 2.0), t);
        return mul(l, l);
      },
      {z});
  EXPECT_TRUE(r.passed) << r.report;
}

// ---- bad input ----------------------------------------------------------------------------------

TEST(CrossEntropyErrors, AllTargetsIgnoredIsAnError) {
  const std::string msg =
      error_of([] { nn::cross_entropy(zeros({3, 4}), tensor_i64({-100, -100, -100})); });
  EXPECT_THAT(msg, HasSubstr("cross_entropy"));
  EXPECT_THAT(msg, HasSubstr("ignore_index"));
  EXPECT_THAT(msg, HasSubstr("-100"));
}

TEST(CrossEntropyErrors, TargetEqualToVNamesTheTarget) {
  const std::string msg = error_of([] { nn::cross_entropy(zeros({3, 4}), tensor_i64({0, 4, 1})); });
  EXPECT_THAT(msg, HasSubstr("cross_entropy"));
  EXPECT_THAT(msg, HasSubstr("target 4"));
  EXPECT_THAT(msg, HasSubstr("4 classes"));
}

TEST(CrossEntropyErrors, NegativeTargetOtherThanIgnoreIndexNamesTheTarget) {
  const std::string msg = error_of([] { nn::cross_entropy(zeros({3, 4}), tensor_i64({0, -1, 1})); });
  EXPECT_THAT(msg, HasSubstr("cross_entropy"));
  EXPECT_THAT(msg, HasSubstr("target -1"));
  EXPECT_THAT(msg, HasSubstr("out of range"));
}

TEST(CrossEntropyErrors, FloatTargetsNameTheDtype) {
  const std::string msg = error_of([] { nn::cross_entropy(zeros({3, 4}), tensor({0, 1, 2}, {3})); });
  EXPECT_THAT(msg, HasSubstr("cross_entropy"));
  EXPECT_THAT(msg, HasSubstr("int64"));
  EXPECT_THAT(msg, HasSubstr("float32"));
}

TEST(CrossEntropyErrors, TargetsOfTheWrongShapeNameBothShapes) {
  const std::string msg = error_of([] { nn::cross_entropy(zeros({3, 4}), tensor_i64({0, 1, 2, 3})); });
  EXPECT_THAT(msg, HasSubstr("cross_entropy"));
  EXPECT_THAT(msg, HasSubstr("[4]"));     // the targets
  EXPECT_THAT(msg, HasSubstr("[3, 4]"));  // the logits
  EXPECT_THAT(msg, HasSubstr("[3]"));     // what was expected
  // (B, T, V) logits want (B, T) targets, not flattened ones.
  const std::string flat =
      error_of([] { nn::cross_entropy(zeros({2, 3, 4}), tensor_i64({0, 1, 2, 3, 0, 1})); });
  EXPECT_THAT(flat, HasSubstr("[2, 3]"));
}

TEST(CrossEntropyErrors, IntegerLogitsNameTheDtype) {
  const std::string msg = error_of([] { nn::cross_entropy(tensor_i64({1, 2, 3, 4}, {2, 2}), tensor_i64({0, 1})); });
  EXPECT_THAT(msg, HasSubstr("cross_entropy"));
  EXPECT_THAT(msg, HasSubstr("int64"));
}
