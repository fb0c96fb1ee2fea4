// ex06-linear: Linear's forward and its initialisation (nn/layers.cpp, nn/init.cpp).
#include <cmath>
#include <memory>

#include "course/checks/check_util.h"
#include "nn/layers.h"

namespace ropegrad::course {
namespace {

// The module with the fixture's weight (nn/linear/<dt>/weight.npy, (4, 5)).
std::unique_ptr<nn::Linear> fixture_linear(const std::string& dt) {
  auto m = std::make_unique<nn::Linear>(5, 4, nullptr, dt == "f64" ? DType::Float64 : DType::Float32);
  m->load_state_dict({{"weight", nn_fixture("linear", dt, "weight")}});
  return m;
}

TEST(ex06_linear, forward_matches_torch_float64) {  // x (2, 3, 5) -> (2, 3, 4)
  const auto m = fixture_linear("f64");
  expect_values(m->forward(nn_fixture("linear", "f64", "x")), nn_fixture("linear", "f64", "out"), f64_tol(), "y");
}

TEST(ex06_linear, forward_matches_torch_float32) {
  const auto m = fixture_linear("f32");
  // Each output sums d_in = 5 products: float32 within 2 gamma(5) sum |x_k w_k| + 2u |y|,
  // bounded here by the tensor's largest |y| times 5 (|x|, |w| < 3 in the fixture).
  const Tensor x = nn_fixture("linear", "f32", "x"), want = nn_fixture("linear", "f32", "out");
  const Tensor terms = matmul(abs(to(x, DType::Float64)), transpose(abs(to(m->weight, DType::Float64)), 0, 1));
  if (!within_f32_bound(m->forward(x), want, mul(terms, 2.0), {5, 1}))
    ADD_FAILURE() << "y: " << within_f32_bound(m->forward(x), want, mul(terms, 2.0), {5, 1}).message();
}

TEST(ex06_linear, gradients_of_weight_and_input_pass_gradcheck) {
  Generator gen(1);
  expect_gradcheck(
      [](const std::vector<Tensor>& in) {
        nn::Linear m(3, 2, nullptr, DType::Float64);
        m.weight = in[1];  // the leaf itself, so the gradient reaches it (load_state_dict copies)
        return m.forward(in[0]);
      },
      {randn({4, 3}, DType::Float64, &gen).requires_grad_(), randn({2, 3}, DType::Float64, &gen).requires_grad_()},
      "Linear");
}

TEST(ex06_linear, a_vector_input_gives_a_vector) {  // x (5) -> (4), as torch
  const auto m = fixture_linear("f64");
  const Tensor y = m->forward(nn_fixture("linear_1d", "f64", "x"));
  if (y.shape() != Shape{4}) ADD_FAILURE() << "y has shape " << shape_str(y.shape()) << ", expected [4]";
}

TEST(ex06_linear, init_is_a_truncated_normal_with_variance_two_over_fan_in_plus_fan_out) {
  Generator gen(7);
  const nn::Linear m(300, 200, &gen, DType::Float64);  // 60000 draws
  const std::vector<double> w = m.weight.to_vector<double>();
  const double sigma = std::sqrt(2.0 / 500.0);
  double sum = 0, sum_sq = 0, largest = 0;
  for (double v : w) sum += v, sum_sq += v * v, largest = std::max(largest, std::abs(v));
  const double mean = sum / w.size(), var = sum_sq / w.size() - mean * mean;
  // A normal truncated at +-3 sigma has variance 0.9733 sigma^2; 60000 draws
  // estimate it within about 1 % (3 standard errors).
  if (std::abs(mean) > 3 * sigma / std::sqrt(60000.0)) ADD_FAILURE() << "init: mean " << mean << " is not ~0";
  if (std::abs(var / (0.9733 * sigma * sigma) - 1) > 0.02)
    ADD_FAILURE() << "init: variance " << var << ", expected 0.9733 x 2 / (d_in + d_out) = " << 0.9733 * sigma * sigma;
  if (largest > 3 * sigma) ADD_FAILURE() << "init: " << largest << " lies beyond 3 sigma = " << 3 * sigma;
}

}  // namespace
}  // namespace ropegrad::course
