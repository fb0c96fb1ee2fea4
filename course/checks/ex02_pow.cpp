// ex02-pow: the backward rules of pow, x ** p and x ** y (autograd/ops_elementwise.cpp).
#include <cmath>

#include "course/checks/check_util.h"
#include "course/checks/ops_fixture.h"

namespace ropegrad::course {
namespace {

// float32 against torch: the bound tests/test_parity.cpp gives these cases.
// K = the case's largest input (8, 12 or 15 elements; no result sums more
// terms: the exponent of x ** y is broadcast over 3 rows) and 3 rounded
// stages: the forward power, then the backward's power and its products.
constexpr F32Bound kSmallBound{8, 3}, kFracBound{12, 3}, kTensorBound{15, 3};

// In [lo, lo + width]: where a real power of x is smooth.
Tensor uniform64(Shape shape, double lo, double width, uint64_t seed) {
  Generator gen(seed);
  return add(mul(rand(std::move(shape), DType::Float64, &gen), width), lo).detach().requires_grad_();
}

// x ** 2, 3, 0, 1 on x with negatives and an exact 0.
const OpFn kIntPowers = [](const OpInputs& in) -> std::vector<Tensor> {
  const Tensor& x = in.at("x");
  return {pow(x, 2), pow(x, 3), pow(x, 0), pow(x, 1)};
};
const OpFn kNegPowers = [](const OpInputs& in) -> std::vector<Tensor> { return {pow(in.at("x"), -2), pow(in.at("x"), -1)}; };
const OpFn kFracPowers = [](const OpInputs& in) -> std::vector<Tensor> {
  const Tensor& x = in.at("x");
  return {pow(x, 0.5), pow(x, -1.5), pow(x, 2.7)};
};
// a (3, 5) ** b (5): b broadcast over the rows.
const OpFn kTensorPow = [](const OpInputs& in) -> std::vector<Tensor> { return {pow(in.at("a"), in.at("b"))}; };

TEST(ex02_pow, integer_exponents_match_torch_float64) { expect_op_parity("pow_scalar_int", "f64", kIntPowers); }
TEST(ex02_pow, integer_exponents_match_torch_float32) {
  expect_op_parity("pow_scalar_int", "f32", kIntPowers, kSmallBound);
}
TEST(ex02_pow, negative_and_fractional_exponents_match_torch_float64) {
  expect_op_parity("pow_scalar_neg", "f64", kNegPowers);
  expect_op_parity("pow_scalar_frac", "f64", kFracPowers);
}
TEST(ex02_pow, negative_and_fractional_exponents_match_torch_float32) {
  expect_op_parity("pow_scalar_neg", "f32", kNegPowers, kSmallBound);
  expect_op_parity("pow_scalar_frac", "f32", kFracPowers, kFracBound);
}
TEST(ex02_pow, tensor_exponent_matches_torch_float64) { expect_op_parity("pow_tensor", "f64", kTensorPow); }
TEST(ex02_pow, tensor_exponent_matches_torch_float32) {
  expect_op_parity("pow_tensor", "f32", kTensorPow, kTensorBound);
}

TEST(ex02_pow, cube_gradcheck) {
  expect_gradcheck([](const std::vector<Tensor>& x) { return pow(x[0], 3); }, {randn64({3, 4}, 1)}, "x ** 3");
}
TEST(ex02_pow, fractional_negative_exponent_gradcheck) {
  expect_gradcheck([](const std::vector<Tensor>& x) { return pow(x[0], -1.5); }, {uniform64({3, 4}, 0.5, 2, 2)},
                   "x ** -1.5");
}
TEST(ex02_pow, tensor_exponent_gradcheck_broadcast_summed_back) {  // (3, 4) ** (4): the exponent is used 3 times
  expect_gradcheck([](const std::vector<Tensor>& x) { return pow(x[0], x[1]); },
                   {uniform64({3, 4}, 0.5, 2, 3), uniform64({4}, -1.5, 3, 4)}, "x ** y");
}

// d(x^p)/dx = p x^(p-1): at x = 2, p = 3 that is 12 (p x^p would say 24).
TEST(ex02_pow, power_rule_values) {
  const std::vector<double> xs = {2, -1.5, 0.5};
  Tensor x = param(xs, {3});
  backward(pow(x, 3), ones({3}, kF64));
  if (!x.grad().defined()) {
    ADD_FAILURE() << "x ** 3: no gradient reached x";
    return;
  }
  const std::vector<double> got = x.grad().to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double want = 3 * xs[i] * xs[i];
    if (std::abs(got[i] - want) <= 1e-12 + 1e-10 * std::abs(want)) continue;
    const bool p_x_p = std::abs(got[i] - 3 * std::pow(xs[i], 3)) <= 1e-9;
    ADD_FAILURE() << fmt::format("d(x^3)/dx at x = {} is {:.10g}, expected 3 x^2 = {:.10g}{}", xs[i], got[i], want,
                                 p_x_p ? ": that is p x^p; the power rule is p x^(p-1)" : "");
    return;
  }
}

// x^0 = 1 everywhere: its gradient is 0, also at x = 0 (not 0 * 0^-1 = NaN).
TEST(ex02_pow, zero_exponent_has_zero_gradient_at_zero) {
  Tensor x = param({0, -2, 3}, {3});
  backward(pow(x, 0), ones({3}, kF64));
  expect_values(x.grad(), zeros({3}, kF64), Tol{0, 0}, "d(x^0)/dx");
}

// At x = 0 with y >= 0, x^y ln x has the limit 0 (torch gives 0, not NaN);
// and where y = 0 the x-gradient is 0.
TEST(ex02_pow, tensor_exponent_at_zero_base_has_finite_gradients) {
  // x = 0 with y = 2, 0, 1.5, 1, and x = 2 with y = 0 and 3. The base's gradient y x^(y - 1) is 0 where y = 0
  // (torch defines it so: 0 x 0^-1) and 1 at x = 0, y = 1 (0^0 = 1): the edge case is y = 0, not x = 0.
  Tensor a = param({0, 0, 0, 2, 0, 2}, {6}), b = param({2, 0, 1.5, 0, 1, 3}, {6});
  backward(pow(a, b), ones({6}, kF64));
  const std::vector<double> da = a.grad().defined() ? a.grad().to_vector<double>() : std::vector<double>();
  const std::vector<double> right_elsewhere = {0, 0, 0, 0, 1, 12};
  bool only_x0_y1 = da.size() == 6 && da[4] == 0;
  for (size_t i = 0; i < 6 && only_x0_y1; ++i) only_x0_y1 = i == 4 || std::abs(da[i] - right_elsewhere[i]) <= 1e-12;
  if (only_x0_y1)
    ADD_FAILURE() << "d(x^y)/dx at x = 0, y = 1 is 0, expected y x^(y - 1) = 1 x 0^0 = 1, and right at the five "
                     "other points (x = 0 with y = 2, 0, 1.5; x = 2 with y = 0, 3): the base's gradient is 0 where "
                     "y = 0, not wherever x = 0";
  else
    expect_values(a.grad(), tensor(right_elsewhere, {6}, kF64), Tol{0, 1e-12}, "d(x^y)/dx");
  expect_values(b.grad(), tensor({0, 0, 0, std::log(2.0), 0, 8 * std::log(2.0)}, {6}, kF64), f64_tol(), "d(x^y)/dy");
}

// Where ln x is not a real number the exponent's gradient x^y ln x is not
// one either, and torch says so: at x = 0 with y < 0 it is x^y ln x = inf x
// -inf = -inf, at a negative base nan. Only x = 0 with y >= 0 is defined as 0.
TEST(ex02_pow, exponent_gradient_where_ln_x_is_not_real) {
  COURSE_REQUIRES("tensor_exponent_matches_torch_float64");
  Tensor a = param({0, -2, -1.5, 0}, {4}), b = param({-1, 2, 0.5, -0.5}, {4});
  backward(pow(a, b), ones({4}, kF64));
  const std::vector<double> db = b.grad().defined() ? b.grad().to_vector<double>() : std::vector<double>(4, 0.0);
  const char* at[] = {"x = 0, y = -1", "x = -2, y = 2", "x = -1.5, y = 0.5", "x = 0, y = -0.5"};
  const char* want[] = {"-inf (inf x ln 0 = inf x -inf)", "nan (4 x ln(-2))", "nan (nan x ln(-1.5))",
                        "-inf (inf x ln 0)"};
  std::string wrong;
  for (size_t i = 0; i < 4; ++i) {
    const bool right = i == 0 || i == 3 ? db[i] == -INFINITY : std::isnan(db[i]);
    if (!right) wrong += fmt::format("{}at {}: {} (expected {})", wrong.empty() ? "" : "; ", at[i], db[i], want[i]);
  }
  if (!wrong.empty())
    ADD_FAILURE() << "d(x^y)/dy = g x^y ln x where ln x is not a real number: " << wrong
                  << " (torch's values; only x = 0 with y >= 0 has the gradient 0)";
}

// A float32 base with a float64 exponent: the output and its gradient are
// float64, and each input gets its gradient in its own dtype (torch's type
// promotion): the backward works on the saved inputs in the gradient's dtype.
TEST(ex02_pow, a_float32_base_with_a_float64_exponent) {
  COURSE_REQUIRES("tensor_exponent_matches_torch_float64");
  Tensor a = tensor({1.5, 2, 0.5}, {3}, DType::Float32).requires_grad_();
  Tensor b = tensor({2, -1, 0.5}, {3}, DType::Float64).requires_grad_();
  try {
    const Tensor out = pow(a, b);
    backward(out, ones(out.shape(), out.dtype()));
  } catch (const NotImplemented&) {
    throw;
  } catch (const Error& e) {
    ADD_FAILURE() << "pow(x, y) with x float32 and y float64 (x = 1.5, 2, 0.5; y = 2, -1, 0.5), backward raised an "
                  << "error (with both float64 it runs: check 'tensor exponent matches torch float64' passes): "
                  << e.what();
    return;
  }
  const std::vector<double> xs = {1.5, 2, 0.5}, ys = {2, -1, 0.5};
  std::vector<double> da, db;
  for (size_t i = 0; i < 3; ++i) {
    da.push_back(ys[i] * std::pow(xs[i], ys[i] - 1));
    db.push_back(std::pow(xs[i], ys[i]) * std::log(xs[i]));
  }
  expect_values(to(a.grad(), DType::Float64), tensor(da, {3}, kF64), Tol{1e-6, 1e-7}, "float32 x: d(x^y)/dx");
  expect_values(b.grad(), tensor(db, {3}, kF64), Tol{1e-6, 1e-7}, "float64 y: d(x^y)/dy");
}

}  // namespace
}  // namespace ropegrad::course
