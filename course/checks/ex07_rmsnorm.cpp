// ex07-rmsnorm: the fused RMSNorm, forward and hand-derived backward
// (nn/rmsnorm.cpp: rms_norm_forward, rms_norm_backward), against the CS336
// formula in PyTorch (tests/fixtures/nn/rmsnorm: x (2, 3, 8), eps 1e-5;
// nn/rmsnorm_eps: x ~ 1e-2, eps 1e-3, where eps is as large as mean(x^2)).
#include <cmath>

#include "course/checks/check_util.h"
#include "nn/layers.h"

namespace ropegrad::course {
namespace {

// Forward checks first: the gradient checks below are skipped when one of
// these fails (a wrong forward, e.g. computed in float32 on float64 input,
// corrupts the numerical Jacobian the gradcheck compares with).
TEST(ex07_rmsnorm, forward_matches_torch_float64) {
  nn::RMSNorm m(8);
  expect_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "rmsnorm", "f64", 0, Part::Forward);
}

TEST(ex07_rmsnorm, eps_goes_inside_the_root) {
  // x = 1e-3 everywhere, eps = 1e-5: y = x / sqrt(mean(x^2) + eps) = 1e-3 / sqrt(1.1e-5) = 0.30151...
  // while x / (sqrt(mean(x^2)) + eps) would give 1e-3 / 1.01e-3 = 0.990.
  const double x = 1e-3, eps = 1e-5;
  const double want = x / std::sqrt(x * x + eps), outside = x / (std::sqrt(x * x) + eps);
  const Tensor y = nn::rms_norm(full({4}, x, DType::Float64), ones({4}, DType::Float64), eps);
  const double got = y.to_vector<double>()[0];
  if (std::abs(got - outside) < 1e-9)
    ADD_FAILURE() << "eps added outside the root: y = " << got << " = x / (sqrt(mean(x^2)) + eps), expected x / sqrt(mean(x^2) + eps) = " << want;
  else
    expect_values(y, full({4}, want, DType::Float64), f64_tol(), "y");
}

TEST(ex07_rmsnorm, gradients_match_torch_float64) {
  COURSE_AFTER_FORWARD("forward_matches_torch_float64", "eps_goes_inside_the_root");
  nn::RMSNorm m(8);
  expect_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "rmsnorm", "f64", 0, Part::Gradients);
}

TEST(ex07_rmsnorm, forward_and_gradients_match_torch_float32) {
  COURSE_AFTER_FORWARD("forward_matches_torch_float64", "eps_goes_inside_the_root");
  nn::RMSNorm m(8);
  // K = 6 rows (the gain's gradient sums over B T) or D = 8 (a row's mean of
  // squares and the backward's row dot); stages: mean of squares, root, scale,
  // and the backward's dot.
  expect_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "rmsnorm", "f32", 4);
}

TEST(ex07_rmsnorm, small_inputs_where_eps_matters_match_torch_float64) {
  COURSE_AFTER_FORWARD("forward_matches_torch_float64", "eps_goes_inside_the_root");
  nn::RMSNorm m(8, nn_fixture("rmsnorm_eps", "f64", "eps").item<double>());  // 1e-3
  expect_module_parity(m, [&](const Tensor& x) { return m.forward(x); }, "rmsnorm_eps", "f64");
}

TEST(ex07_rmsnorm, gradients_of_input_and_gain_pass_gradcheck) {
  COURSE_AFTER_FORWARD("forward_matches_torch_float64", "eps_goes_inside_the_root");
  Generator gen(2);
  expect_gradcheck([](const std::vector<Tensor>& in) { return nn::rms_norm(in[0], in[1], 1e-5); },
                   {randn({3, 5}, DType::Float64, &gen).requires_grad_(),
                    randn({5}, DType::Float64, &gen).requires_grad_()},
                   "rms_norm");
}

TEST(ex07_rmsnorm, a_row_of_zeros_gives_zeros_and_finite_gradients) {
  // y = 0 / sqrt(0 + eps) = 0; dL/dx = g dy / sqrt(eps) (the mean's term carries x = 0).
  Tensor x = zeros({4}, DType::Float64).requires_grad_();
  const Tensor y = nn::rms_norm(x, ones({4}, DType::Float64), 1e-4);
  expect_values(y, zeros({4}, DType::Float64), {0, 0}, "y");
  backward(y, ones({4}, DType::Float64));  // d sum(y) / dx
  expect_values(x.grad(), full({4}, 100.0, DType::Float64), f64_tol(), "d x (1 / sqrt(eps) = 100)");
}

}  // namespace
}  // namespace ropegrad::course
