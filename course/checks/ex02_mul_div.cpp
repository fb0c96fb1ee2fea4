// ex02-mul-div: the backward rules of mul and div (autograd/ops_elementwise.cpp).
#include "course/checks/check_util.h"

namespace ropegrad::course {
namespace {

// Away from zero, for divisors: |x| in [0.5, 1.5].
Tensor divisor64(Shape shape, uint64_t seed) {
  Generator gen(seed);
  Tensor u = rand(std::move(shape), DType::Float64, &gen);
  return add(u, 0.5).detach().requires_grad_();
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

}  // namespace
}  // namespace ropegrad::course
