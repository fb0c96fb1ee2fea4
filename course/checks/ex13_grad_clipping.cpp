// ex13-grad-clipping: nn::clip_grad_norm_ (optim/optim.cpp) against
// torch.nn.utils.clip_grad_norm_ (tests/fixtures/optim/clip_*).
#include "course/checks/check_util.h"
#include "optim/optim.h"

namespace ropegrad::course {
namespace {

// Parameters with the fixture's gradients g0 (3, 4), g1 (5), g2 (2, 2, 2), and one without a gradient.
std::vector<Tensor> params_of(const std::string& prefix) {
  const std::vector<Shape> shapes = {{3, 4}, {5}, {2, 2, 2}};
  std::vector<Tensor> params;
  for (size_t i = 0; i < shapes.size(); ++i) {
    params.push_back(zeros(shapes[i], DType::Float64).requires_grad_());
    params.back().set_grad(load_fixture("optim/" + prefix + "_g" + std::to_string(i) + "_in"));
  }
  params.push_back(zeros({2}, DType::Float64).requires_grad_());  // no gradient: skipped
  return params;
}

void check_case(const std::string& c) {
  const std::string prefix = "clip_f64_" + c;
  const std::vector<double> norm = load_fixture("optim/" + prefix + "_norm").to_vector<double>();  // torch, exact, max
  std::vector<Tensor> params = params_of(prefix);
  const double returned = nn::clip_grad_norm_(params, norm[2]);
  if (std::abs(returned - norm[1]) > 1e-12 * norm[1])
    ADD_FAILURE() << "returned norm " << returned << ", expected the norm before clipping " << norm[1];
  for (size_t i = 0; i < 3; ++i)
    expect_values(params[i].grad(), load_fixture("optim/" + prefix + "_g" + std::to_string(i) + "_out"), f64_tol(),
                  "gradient " + std::to_string(i));
  if (params[3].grad().defined()) ADD_FAILURE() << "a parameter without a gradient got one";
}

TEST(ex13_grad_clipping, above_max_norm_every_gradient_is_scaled_together) { check_case("above"); }
TEST(ex13_grad_clipping, below_max_norm_nothing_changes) { check_case("below"); }

}  // namespace
}  // namespace ropegrad::course
