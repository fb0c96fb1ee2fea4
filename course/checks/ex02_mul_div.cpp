// ex02-mul-div: the backward rules of mul and div (autograd/ops_elementwise.cpp).
#include <tuple>

#include "course/checks/check_util.h"
#include "course/checks/linear_form.h"

namespace ropegrad::course {
namespace {

// Away from zero, for divisors: |x| in [0.5, 1.5].
Tensor divisor64(Shape shape, uint64_t seed) {
  Generator gen(seed);
  Tensor u = rand(std::move(shape), DType::Float64, &gen);
  return add(u, 0.5).detach().requires_grad_();
}

// Each rule measured alone: op(a, b) on eight elements of distinct a, b (|b|
// in [0.5, 2]) and output gradient g, same shapes (no broadcasting). A wrong
// gradient is said as the one combination of at most two of the quantities a
// rule could be made of that gives all eight (linear_form.h); its values
// otherwise.
// The right gradients: sign x one of the terms below, for a and for b.
struct RightRule {
  double sign;
  size_t term;
};

void expect_rule_at_eight_points(Tensor (*op)(const Tensor&, const Tensor&), const char* name, RightRule right_a,
                                 RightRule right_b) {
  const std::vector<double> av = {1.3, -0.7, 2.1, 0.4, -1.8, 0.9, -0.3, 1.6},
                            bv = {0.8, -1.5, 1.2, -0.6, 1.9, 0.55, -1.1, 1.4},
                            gv = {0.5, 1.7, -0.9, 1.1, 0.35, -1.4, 2.2, -0.6};
  Tensor a = param(av, {8}), b = param(bv, {8});
  backward(op(a, b), tensor(gv, {8}, kF64));
  std::vector<FormTerm> terms = {{"g b", {}},     {"g a", {}},         {"g / b", {}},   {"g a / b^2", {}},
                                 {"g", {}},       {"b", {}},           {"a", {}},       {"1 / b", {}},
                                 {"a / b^2", {}}, {"b / g", {}},       {"g / a", {}},   {"g b / a^2", {}},
                                 {"g^2", {}},     {"g a b", {}},       {"g b^2", {}},   {"g a^2", {}},
                                 {"g / b^2", {}}, {"g a / b", {}},     {"g b / a", {}}, {"g a^2 / b^2", {}}};
  for (size_t i = 0; i < 8; ++i) {
    const double x = av[i], y = bv[i], g = gv[i];
    const double values[] = {g * y, g * x, g / y, g * x / (y * y), g, y, x, 1 / y, x / (y * y), y / g,
                             g / x, g * y / (x * x), g * g, g * x * y, g * y * y, g * x * x, g / (y * y), g * x / y,
                             g * y / x, g * x * x / (y * y)};
    for (size_t t = 0; t < terms.size(); ++t) terms[t].values.push_back(values[t]);
  }
  const std::tuple<const Tensor*, const char*, RightRule> inputs[] = {{&a, "a", right_a}, {&b, "b", right_b}};
  for (const auto& [t, input, rule] : inputs) {
    const std::string right = (rule.sign < 0 ? "-" : "") + terms[rule.term].name;
    if (!t->grad().defined()) {
      ADD_FAILURE() << name << "(a, b) with both needing a gradient: no gradient reached " << input;
      continue;
    }
    const std::vector<double> got = t->grad().to_vector<double>();
    bool same = true, to_float = true;
    double worst = 0;
    for (size_t i = 0; i < 8; ++i) {
      const double want = rule.sign * terms[rule.term].values[i], off = std::abs(got[i] - want);
      same = same && off <= 1e-12 + 1e-10 * std::abs(want);
      to_float = to_float && off <= 1e-6 * std::abs(want);  // float32 keeps 24 bits: 6e-8 per rounding
      worst = std::max(worst, off / std::abs(want));
    }
    if (same) continue;
    if (to_float) {
      ADD_FAILURE() << name << "'s gradient for " << input << " (float64 tensors), at eight points: it is " << right
                    << " to float32 precision only (relative differences up to " << fmt::format("{:.2g}", worst)
                    << ", where float64 gives 1e-16): the rule computes in float somewhere";
      continue;
    }
    const std::string form = linear_form(got, terms, 2);
    ADD_FAILURE() << name << "'s gradient for " << input << ", at eight points of distinct a, b and g: "
                  << (form.empty() ? fmt::format("{:.6g}, {:.6g}, {:.6g}, ... (no combination of two of a, b, g's "
                                                 "simple products fits all eight)",
                                                 got[0], got[1], got[2])
                                   : "it is " + form + " at every point")
                  << ", where " << right << " belongs";
  }
}

TEST(ex02_mul_div, each_rule_at_eight_points) {
  expect_rule_at_eight_points(mul, "mul", {1, 0}, {1, 1});     // g b, g a
  expect_rule_at_eight_points(div, "div", {1, 2}, {-1, 3});    // g / b, -g a / b^2
}

TEST(ex02_mul_div, mul_gradient_values) {  // d(a*b)/da = b, d(a*b)/db = a
  Tensor a = param({1, 2, 3}, {3}), b = param({4, 5, 6}, {3});
  backward(sum(mul(a, b)));
  expect_values(a.grad(), tensor({4, 5, 6}, {3}, kF64), f64_tol(), "grad a");
  expect_values(b.grad(), tensor({1, 2, 3}, {3}, kF64), f64_tol(), "grad b");
}

TEST(ex02_mul_div, mul_gradcheck_same_shapes) {  // (3, 4) * (3, 4)
  expect_gradcheck([](const std::vector<Tensor>& x) { return mul(x[0], x[1]); },
                   {randn64({3, 4}, 1), randn64({3, 4}, 2)}, "mul");
}

TEST(ex02_mul_div, mul_gradcheck_broadcast_summed_back) {  // (2, 1, 3) * (4, 1): both broadcast
  expect_gradcheck([](const std::vector<Tensor>& x) { return mul(x[0], x[1]); },
                   {randn64({2, 1, 3}, 3), randn64({4, 1}, 4)}, "mul with broadcasting");
}

constexpr const char* kMulSaves = "saves a only when b requires a gradient, and b only when a does";
constexpr const char* kDivSaves = "saves a only when b requires a gradient, and b always";

// op(a, b) with only input `which` requiring a gradient (check_util.h's
// expect_one_needs_grad); `saves`: which inputs the op saves when (outside
// the exercise's region), said when the backward read an undefined tensor.
void expect_one_needs_grad(Tensor (*op)(const Tensor&, const Tensor&), const std::string& name, const char* saves,
                           int which,
                           const std::vector<double>& a_values, const std::vector<double>& b_values,
                           const std::vector<double>& want) {
  const Shape shape{static_cast<int64_t>(a_values.size())};
  OneNeedsGrad c{fmt::format("{}(a, b)", name), {"a", "b"}, op, a_values, b_values, shape, shape};
  c.explain = [&](const std::string& msg) {
    return msg.find("undefined tensor") != std::string::npos ? fmt::format(" ({} {})", name, saves) : std::string();
  };
  course::expect_one_needs_grad(c, which, want);
}

// One input a constant: only the other gets a gradient.
TEST(ex02_mul_div, mul_only_a_needs_grad) {
  expect_one_needs_grad(mul, "mul", kMulSaves, 0, {1, -2, 3}, {3, -1, 0.5}, {3, -1, 0.5});
}
TEST(ex02_mul_div, mul_only_b_needs_grad) {
  expect_one_needs_grad(mul, "mul", kMulSaves, 1, {1, -2, 3}, {3, -1, 0.5}, {1, -2, 3});
}

TEST(ex02_mul_div, div_gradient_values) {  // d(a/b)/da = 1/b, d(a/b)/db = -a/b^2
  Tensor a = param({1, 2}, {2}), b = param({2, 4}, {2});
  backward(sum(div(a, b)));
  expect_values(a.grad(), tensor({0.5, 0.25}, {2}, kF64), f64_tol(), "grad a");
  expect_values(b.grad(), tensor({-0.25, -0.125}, {2}, kF64), f64_tol(), "grad b");
}

TEST(ex02_mul_div, div_only_a_needs_grad) {  // b a constant: d(a/b)/da = 1/b
  expect_one_needs_grad(div, "div", kDivSaves, 0, {1, -2, 3}, {2, 4, -0.5}, {0.5, 0.25, -2});
}
TEST(ex02_mul_div, div_only_b_needs_grad) {  // a a constant: d(a/b)/db = -a/b^2
  expect_one_needs_grad(div, "div", kDivSaves, 1, {1, -2, 3}, {2, 4, -0.5}, {-0.25, 0.125, -12});
}

TEST(ex02_mul_div, div_gradcheck_same_shapes) {
  expect_gradcheck([](const std::vector<Tensor>& x) { return div(x[0], x[1]); },
                   {randn64({3, 4}, 5), divisor64({3, 4}, 6)}, "div");
}

TEST(ex02_mul_div, div_gradcheck_broadcast_summed_back) {  // (3, 4) / (4): the divisor is used 3 times
  expect_gradcheck([](const std::vector<Tensor>& x) { return div(x[0], x[1]); },
                   {randn64({3, 4}, 7), divisor64({4}, 8)}, "div with broadcasting");
}

// Inputs of two dtypes, each way round (a float64 and b float32, then a
// float32 and b float64): the output is float64 (type promotion), and each
// gradient is computed in the output's dtype and reaches its input in that
// input's dtype: exactly the all-float64 gradients, the float32 input's rounded
// to float32 once.
void expect_mixed_dtypes(Tensor (*op)(const Tensor&, const Tensor&), const char* name, bool a_is_float32) {
  const std::vector<double> av = {1.3, -0.7, 2.1, 0.4}, bv = {0.8, -1.5, 1.2, -0.6};
  const DType a_dtype = a_is_float32 ? DType::Float32 : kF64, b_dtype = a_is_float32 ? kF64 : DType::Float32;
  // The values as the narrow input holds them, so that both runs see the same numbers.
  const Tensor a_in = tensor(av, {4}, a_dtype), b_in = tensor(bv, {4}, b_dtype);
  Tensor a = clone(a_in).requires_grad_(), b = clone(b_in).requires_grad_();
  Tensor a64 = to(a_in, kF64).detach().requires_grad_(), b64 = to(b_in, kF64).detach().requires_grad_();
  const Tensor g = tensor({0.5, 1.7, -0.9, 1.1}, {4}, kF64);
  const std::string label = fmt::format("{}(a {}, b {})", name, dtype_name(a_dtype), dtype_name(b_dtype));
  try {
    backward(op(a, b), g);
  } catch (const NotImplemented&) {
    throw;
  } catch (const Error& e) {
    ADD_FAILURE() << label << ": backward raised an error (with both float64 it runs): " << e.what();
    return;
  }
  backward(op(a64, b64), g);
  expect_values(a.grad(), to(a64.grad(), a_dtype), {0, 0},
                label + fmt::format(": grad a (expected: the all-float64 one, in a's {})", dtype_name(a_dtype)));
  expect_values(b.grad(), to(b64.grad(), b_dtype), {0, 0},
                label + fmt::format(": grad b (expected: the all-float64 one, in b's {})", dtype_name(b_dtype)));
}

TEST(ex02_mul_div, inputs_of_two_dtypes) {
  for (const bool a_is_float32 : {false, true}) {
    expect_mixed_dtypes(mul, "mul", a_is_float32);
    expect_mixed_dtypes(div, "div", a_is_float32);
  }
}

}  // namespace
}  // namespace ropegrad::course
