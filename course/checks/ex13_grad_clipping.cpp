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

// Each gradient's one factor (after / before, the same for every element), NaN when it has none.
std::vector<double> factors_of(const std::vector<Tensor>& params, const std::string& prefix) {
  std::vector<double> out;
  for (size_t i = 0; i < 3; ++i) {
    const std::vector<double> before = load_fixture("optim/" + prefix + "_g" + std::to_string(i) + "_in").to_vector<double>();
    const std::vector<double> after =
        params[i].grad().defined() ? params[i].grad().to_vector<double>() : std::vector<double>(before.size(), NAN);
    double c = after[0] / before[0];
    for (size_t j = 1; j < before.size(); ++j)
      if (!(std::abs(after[j] - c * before[j]) <= 1e-12 * std::abs(before[j]))) c = NAN;
    out.push_back(c);
  }
  return out;
}

// What scaling the gradients got, against torch's one factor max_norm / (norm + 1e-6) (1 when norm <= max_norm).
std::string scaling_text(const std::vector<double>& c, double norm, double max_norm) {
  const double torch = norm > max_norm ? max_norm / (norm + 1e-6) : 1.0;
  const std::string expected = norm > max_norm
      ? fmt::format("torch's one factor is max_norm / (norm + 1e-6) = {:.9g} (norm {:.9g}, max_norm {:g})", torch, norm, max_norm)
      : fmt::format("the norm {:.9g} is at most max_norm {:g}: torch leaves the gradients as they are", norm, max_norm);
  if (std::isnan(c[0]) || std::isnan(c[1]) || std::isnan(c[2])) return "";
  if (std::abs(c[0] - c[1]) > 1e-12 * std::abs(c[0]) || std::abs(c[0] - c[2]) > 1e-12 * std::abs(c[0]))
    return fmt::format("each gradient is its input times a factor of its own ({:.9g}, {:.9g}, {:.9g}), where one "
                       "factor scales them all together; {}", c[0], c[1], c[2], expected);
  if (std::abs(c[0] - 1) <= 1e-12)
    return "every gradient is as it was before the call (factor 1): the parameters' .grad were not changed; " + expected;
  std::string as_if = fmt::format(" = max_norm / {:.9g}", max_norm / c[0]);
  if (std::abs(c[0] - max_norm / norm) <= 1e-12 * c[0]) as_if += " = max_norm / norm, without torch's + 1e-6";
  return fmt::format("every gradient is its input times one factor {:.9g}{}; {}", c[0], as_if, expected);
}

// What a wrong returned norm equals: the square of the norm, the sum of the
// gradients' own norms, the largest of them, or max_norm; "" otherwise.
std::string norm_look_alike(const std::string& prefix, double returned, double norm, double max_norm) {
  double sum_of_norms = 0, largest = 0, sum_abs = 0;
  for (size_t i = 0; i < 3; ++i) {
    const std::vector<double> g = load_fixture("optim/" + prefix + "_g" + std::to_string(i) + "_in").to_vector<double>();
    double sq = 0;
    for (double x : g) sq += x * x, sum_abs += std::abs(x);
    sum_of_norms += std::sqrt(sq), largest = std::max(largest, std::sqrt(sq));
  }
  const std::pair<double, const char*> forms[] = {
      {norm * norm, "the norm squared, the sum of the squares without its square root"},
      {sum_of_norms, "the sum of the three gradients' own norms, where the norm of all their elements together belongs"},
      {largest, "the largest of the three gradients' own norms"},
      {sum_abs, "the sum of every element's absolute value (an L1 norm)"},
      {max_norm, "max_norm"}};
  for (const auto& [value, text] : forms) {
    if (std::abs(returned - value) <= 1e-10 * std::max(1.0, std::abs(value))) return fmt::format(": {} is {}", returned, text);
  }
  return "";
}

void check_case(const std::string& c) {
  const std::string prefix = "clip_f64_" + c;
  const std::vector<double> norm = load_fixture("optim/" + prefix + "_norm").to_vector<double>();  // torch, exact, max
  std::vector<Tensor> params = params_of(prefix);
  const double returned = nn::clip_grad_norm_(params, norm[2]);
  if (std::abs(returned - norm[1]) > 1e-12 * norm[1])
    ADD_FAILURE() << "returned norm " << returned << ", expected the norm before clipping " << norm[1]
                  << " (the norm of all the gradients together, sqrt of the sum of every element's square)"
                  << norm_look_alike(prefix, returned, norm[1], norm[2]);
  bool right = true;
  for (size_t i = 0; i < 3; ++i)
    right = right && all_close(params[i].grad(), load_fixture("optim/" + prefix + "_g" + std::to_string(i) + "_out"),
                               f64_tol());
  if (!right) {
    if (const std::string s = scaling_text(factors_of(params, prefix), norm[1], norm[2]); !s.empty()) {
      ADD_FAILURE() << s;
    } else {
      for (size_t i = 0; i < 3; ++i)
        expect_values(params[i].grad(), load_fixture("optim/" + prefix + "_g" + std::to_string(i) + "_out"),
                      f64_tol(), "gradient " + std::to_string(i));
    }
  }
  if (params[3].grad().defined()) ADD_FAILURE() << "a parameter without a gradient got one";
}

TEST(ex13_grad_clipping, above_max_norm_every_gradient_is_scaled_together) { check_case("above"); }
TEST(ex13_grad_clipping, below_max_norm_nothing_changes) { check_case("below"); }

}  // namespace
}  // namespace ropegrad::course
