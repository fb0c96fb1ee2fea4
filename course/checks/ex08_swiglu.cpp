// ex08-swiglu: the fused gate silu_mul(a, b) = SiLU(a) b, forward and backward
// (nn/swiglu_gate.cpp), and SwiGLU through it against PyTorch
// (tests/fixtures/nn/swiglu: x (2, 3, 16), d_ff = 64, three weights).
#include <cmath>

#include "course/checks/check_util.h"
#include "nn/layers.h"

namespace ropegrad::course {
namespace {

double sigmoid_of(double x) { return 1 / (1 + std::exp(-x)); }

TEST(ex08_swiglu, swiglu_forward_and_gradients_match_torch_float64) {
  nn::SwiGLU m(16, 64);
  expect_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "swiglu", "f64");
}

TEST(ex08_swiglu, swiglu_forward_matches_torch_float32) {
  // out = W2 u, u = silu(a) b, a = W1 x, b = W3 x. The condition of out
  // (sum over leaves of |d out / d leaf| |leaf|), bounded in float64 through
  // the composition: a and b each have 2 |W||x| (every term is linear in W and
  // in x), u has |silu'(a) b| c_a + |silu(a)| c_b, and out |W2| (c_u + |u|).
  // K = 64 (d_ff, the longest contraction); stages: the two first
  // contractions, the gate, the last contraction.
  nn::SwiGLU m(16, 64, nullptr, DType::Float32);
  m.load_state_dict({{"w1.weight", nn_fixture("swiglu", "f32", "w1.weight")},
                     {"w2.weight", nn_fixture("swiglu", "f32", "w2.weight")},
                     {"w3.weight", nn_fixture("swiglu", "f32", "w3.weight")}});
  const Tensor got = m.forward(nn_fixture("swiglu", "f32", "x"));
  const auto f64 = [](const std::string& n) { return to(nn_fixture("swiglu", "f32", n), DType::Float64); };
  const Tensor x = f64("x"), w1 = f64("w1.weight"), w2 = f64("w2.weight"), w3 = f64("w3.weight");
  const auto t = [](const Tensor& w) { return transpose(abs(w), 0, 1); };
  const Tensor a = matmul(x, transpose(w1, 0, 1)), b = matmul(x, transpose(w3, 0, 1));
  const Tensor c_a = mul(matmul(abs(x), t(w1)), 2.0), c_b = mul(matmul(abs(x), t(w3)), 2.0);
  const Tensor s = sigmoid(a), silu_a = mul(a, s);
  const Tensor d_silu = mul(s, add(mul(a, sub(ones_like(s), s)), 1.0));
  const Tensor c_u = add(mul(abs(mul(d_silu, b)), c_a), mul(abs(silu_a), c_b));
  const Tensor c_out = matmul(add(c_u, abs(mul(silu_a, b))), t(w2));
  const auto r = within_f32_bound(got, nn_fixture("swiglu", "f32", "out"), c_out, {64, 4});
  if (!r) ADD_FAILURE() << "out: " << r.message();
}

TEST(ex08_swiglu, silu_is_x_times_sigmoid_x) {
  const std::vector<double> xs = {-30, -2, -0.5, 0, 0.5, 3, 30};
  std::vector<double> want;
  for (double x : xs) want.push_back(x * sigmoid_of(x));
  const Tensor a = tensor(xs, {7}, DType::Float64);
  expect_values(nn::silu_mul(a, ones({7}, DType::Float64)), tensor(want, {7}, DType::Float64), f64_tol(),
                "silu(x) (b = 1)");
}

TEST(ex08_swiglu, the_derivative_of_silu_has_both_terms) {
  COURSE_AFTER_FORWARD("silu_is_x_times_sigmoid_x", "swiglu_forward_matches_torch_float32");
  // d silu / dx = s + x s (1 - s), s = sigmoid(x).
  const std::vector<double> xs = {-2, -0.5, 1, 3};
  std::vector<double> want, only_s;
  for (double x : xs) {
    const double s = sigmoid_of(x);
    want.push_back(s * (1 + x * (1 - s)));
    only_s.push_back(s);
  }
  Tensor a = tensor(xs, {4}, DType::Float64).requires_grad_();
  backward(nn::silu_mul(a, ones({4}, DType::Float64)), ones({4}, DType::Float64));  // d sum(silu(a))
  if (!a.grad().defined()) {
    ADD_FAILURE() << "d a: no gradient";
    return;
  }
  const std::vector<double> got = a.grad().to_vector<double>();
  if (std::abs(got[2] - only_s[2]) < 1e-9)
    ADD_FAILURE() << "d silu(x) is sigmoid(x) alone (" << got[2] << " at x = 1, expected " << want[2]
                  << "): the term x sigmoid(x) (1 - sigmoid(x)) is missing";
  else
    expect_values(a.grad(), tensor(want, {4}, DType::Float64), f64_tol(), "d silu(x)");
}

TEST(ex08_swiglu, gradients_of_the_gate_pass_gradcheck) {
  COURSE_AFTER_FORWARD("silu_is_x_times_sigmoid_x", "swiglu_forward_matches_torch_float32");
  Generator gen(8);
  expect_gradcheck([](const std::vector<Tensor>& in) { return nn::silu_mul(in[0], in[1]); },
                   {randn({3, 4}, DType::Float64, &gen).requires_grad_(),
                    randn({3, 4}, DType::Float64, &gen).requires_grad_()},
                   "silu_mul");
}

TEST(ex08_swiglu, a_broadcast_operand_gets_its_gradient_summed_back) {  // a (3, 4), b (4)
  COURSE_AFTER_FORWARD("silu_is_x_times_sigmoid_x", "swiglu_forward_matches_torch_float32");
  Generator gen(9);
  expect_gradcheck([](const std::vector<Tensor>& in) { return nn::silu_mul(in[0], in[1]); },
                   {randn({3, 4}, DType::Float64, &gen).requires_grad_(),
                    randn({4}, DType::Float64, &gen).requires_grad_()},
                   "silu_mul with b broadcast");
}

}  // namespace
}  // namespace ropegrad::course
