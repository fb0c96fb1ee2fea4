// ex02-exp-log-tanh: the backward rules of exp, log and tanh (autograd/ops_elementwise.cpp).
#include <cmath>

#include "course/checks/check_util.h"
#include "course/checks/ops_fixture.h"

namespace ropegrad::course {
namespace {

// float32 against torch: the bound tests/test_parity.cpp gives these cases.
// K = 15 (the case's 15 inputs; no result sums more terms) and 3 rounded
// stages: the forward op, then at most two rounded steps in the backward
// (tanh: 1 - y*y, then times g).
constexpr F32Bound kUnaryBound{15, 3};

OpFn one(Tensor (*op)(const Tensor&)) {
  return [op](const OpInputs& in) -> std::vector<Tensor> { return {op(in.at("x"))}; };
}

// In [0.2, 3]: where log is smooth.
Tensor positive64(Shape shape, uint64_t seed) {
  Generator gen(seed);
  return add(mul(rand(std::move(shape), DType::Float64, &gen), 2.8), 0.2).detach().requires_grad_();
}

TEST(ex02_exp_log_tanh, exp_gradient_matches_torch_float64) { expect_op_parity("exp", "f64", one(exp)); }
TEST(ex02_exp_log_tanh, exp_gradient_matches_torch_float32) { expect_op_parity("exp", "f32", one(exp), kUnaryBound); }
TEST(ex02_exp_log_tanh, log_gradient_matches_torch_float64) { expect_op_parity("log", "f64", one(log)); }
TEST(ex02_exp_log_tanh, log_gradient_matches_torch_float32) { expect_op_parity("log", "f32", one(log), kUnaryBound); }
// The tanh case holds -25, 0 and 25 too: saturated, gradient 0.
TEST(ex02_exp_log_tanh, tanh_gradient_matches_torch_float64) { expect_op_parity("tanh", "f64", one(tanh)); }
TEST(ex02_exp_log_tanh, tanh_gradient_matches_torch_float32) { expect_op_parity("tanh", "f32", one(tanh), kUnaryBound); }

TEST(ex02_exp_log_tanh, exp_gradcheck) {
  expect_gradcheck([](const std::vector<Tensor>& x) { return exp(x[0]); }, {randn64({3, 4}, 1)}, "exp");
}
TEST(ex02_exp_log_tanh, log_gradcheck) {
  expect_gradcheck([](const std::vector<Tensor>& x) { return log(x[0]); }, {positive64({3, 4}, 2)}, "log");
}
TEST(ex02_exp_log_tanh, tanh_gradcheck) {
  expect_gradcheck([](const std::vector<Tensor>& x) { return tanh(x[0]); }, {randn64({3, 4}, 3)}, "tanh");
}

// d tanh(x)/dx = 1 - tanh(x)^2 = 1 - y^2 with y the saved output. Far from 0
// a rule written with the input x instead (1 - x^2) is off by hundreds.
TEST(ex02_exp_log_tanh, tanh_gradient_is_one_minus_the_output_squared) {
  const std::vector<double> xs = {-25, -3, -0.5, 0, 2, 25};
  Tensor x = param(xs, {6});
  backward(tanh(x), ones({6}, kF64));
  if (!x.grad().defined()) {
    ADD_FAILURE() << "tanh: no gradient reached x";
    return;
  }
  const std::vector<double> got = x.grad().to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = 1 - std::tanh(xs[i]) * std::tanh(xs[i]);
    if (std::abs(got[i] - want) <= 1e-12 + 1e-10 * std::abs(want)) continue;
    const bool from_input = std::abs(got[i] - (1 - xs[i] * xs[i])) <= 1e-9 * (1 + xs[i] * xs[i]);
    ADD_FAILURE() << fmt::format("d tanh(x)/dx at x = {} is {:.10g}, expected 1 - tanh(x)^2 = {:.10g}{}", xs[i], got[i],
                                 want,
                                 from_input ? ": that is 1 - x^2, from the input x; the rule is 1 - y^2 with y = "
                                              "tanh(x), the saved output"
                                            : "");
    return;
  }
}

// d log(x)/dx = 1/x: large near 0, and the gradient g is divided, not multiplied.
TEST(ex02_exp_log_tanh, log_gradient_is_one_over_x) {
  const std::vector<double> xs = {1e-3, 0.5, 4};
  Tensor x = param(xs, {3});
  backward(log(x), tensor({2, 2, 2}, {3}, kF64));
  const std::vector<double> got = x.grad().defined() ? x.grad().to_vector<double>() : std::vector<double>();
  if (got.size() == 3) {
    // The denominator the rule used at each point, g / grad: x plus one constant c at all three?
    std::vector<double> c(3);
    for (size_t i = 0; i < 3; ++i) c[i] = 2 / got[i] - xs[i];
    const bool one_c = std::isfinite(c[0]) && c[0] != 0 && std::abs(c[0]) < 0.1 &&
                       std::abs(c[1] - c[0]) <= 1e-9 * (xs[1] + std::abs(c[0])) &&
                       std::abs(c[2] - c[0]) <= 1e-9 * (xs[2] + std::abs(c[0]));
    if (one_c) {
      ADD_FAILURE() << "d log(x) with g = 2 at x = 1e-3, 0.5, 4 is " << fmt::format("{:.10g}, {:.10g}, {:.10g}", got[0], got[1], got[2])
                    << ": g / (x + c) with the same c = " << fmt::format("{:.3g}", c[0])
                    << " at all three, where g / x belongs (the smaller x, the larger the difference)";
      return;
    }
  }
  expect_values(x.grad(), tensor({2000, 4, 0.5}, {3}, kF64), f64_tol(), "d log(x) with g = 2");
}

}  // namespace
}  // namespace ropegrad::course
