// ex12-softmax: stable softmax and log_softmax, forward and backward kernels
// (tensor/softmax.cpp).
#include <cmath>

#include "course/checks/check_util.h"
#include "course/checks/ops_fixture.h"

namespace ropegrad::course {
namespace {

// float32 against torch: the bound tests/test_parity.cpp gives these cases.
// K = the case's input size (15 or 24: no row sums more terms) and 3 rounded
// stages (the row's exp-sum, the division or log, the backward's dot product
// and update). The amplification through exp is in the condition numbers.
constexpr F32Bound kSoftmaxBound15{15, 3}, kSoftmaxBound24{24, 3};

OpFn along(Tensor (*op)(const Tensor&, int64_t), int64_t dim) {
  return [op, dim](const OpInputs& in) -> std::vector<Tensor> { return {op(in.at("x"), dim)}; };
}

void softmax_cases(const std::string& dt, Part part) {
  expect_op_parity("softmax_last", dt, along(softmax, -1), kSoftmaxBound15, part);  // (3, 5), rows
  expect_op_parity("softmax_dim0", dt, along(softmax, 0), kSoftmaxBound15, part);   // (3, 5), columns
  expect_op_parity("softmax_mid", dt, along(softmax, 1), kSoftmaxBound24, part);    // (2, 3, 4), the middle dim
}
void log_softmax_cases(const std::string& dt, Part part) {
  expect_op_parity("log_softmax_last", dt, along(log_softmax, -1), kSoftmaxBound15, part);
  expect_op_parity("log_softmax_dim0", dt, along(log_softmax, 0), kSoftmaxBound15, part);
  expect_op_parity("log_softmax_mid", dt, along(log_softmax, 1), kSoftmaxBound24, part);
}
// Logits of size 1000 (x = 1000 * randn) and logits near 1000: exp(1000)
// overflows even float64, so only the stable form gives torch's values.
void large_cases(Part part) {
  expect_op_parity("softmax_large", "f64", along(softmax, 1), {}, part);
  expect_op_parity("softmax_large_close", "f64", along(softmax, -1), {}, part);
  expect_op_parity("log_softmax_large", "f64", along(log_softmax, 1), {}, part);
  expect_op_parity("log_softmax_large_close", "f64", along(log_softmax, -1), {}, part);
}

// The forward first: these run no backward.
TEST(ex12_softmax, softmax_matches_torch_float64) { softmax_cases("f64", Part::Forward); }
TEST(ex12_softmax, log_softmax_matches_torch_float64) { log_softmax_cases("f64", Part::Forward); }
TEST(ex12_softmax, large_logits_match_torch_float64) { large_cases(Part::Forward); }

// Logits at +100 in float32: exp(100) = 2.7e43 is beyond float32's largest
// value (3.4e38), so softmax without subtracting the row's max gives inf / inf.
void expect_stable(Tensor (*op)(const Tensor&, int64_t), const char* name, const std::vector<double>& want) {
  const Tensor x = tensor({100, 101, 102}, {3}, DType::Float32);
  const Tensor y = op(x, 0);
  if (!all_finite(y)) {
    std::string values;
    for (double v : y.to_vector<double>())
      values += (values.empty() ? "" : ", ") + (std::isnan(v) ? std::string("nan") : fmt::format("{}", v));
    ADD_FAILURE() << name << " of float32 logits [100, 101, 102] gave [" << values
                  << "]: exp(100) overflowed float32 (its largest value is 3.4e38); subtract the row's max first, "
                     "exp(x - max(x)) <= 1";
    return;
  }
  const Tensor expected = tensor(want, {3}, DType::Float32);
  // Each value goes through one exp (fast_exp: within 1e-7 relative), a sum
  // of 3 terms and a division (or a log and a subtraction): at most 6
  // roundings of u = 2^-24 = 6e-8 each, so 1e-6 relative bounds the error.
  expect_values(y, expected, Tol{1e-6, 1e-7}, std::string(name) + " of float32 logits [100, 101, 102]");
}

TEST(ex12_softmax, softmax_of_logits_at_plus_100_does_not_overflow) {
  expect_stable(softmax, "softmax", {0.090030573170380462, 0.24472847105479767, 0.66524095577482185});
}
TEST(ex12_softmax, log_softmax_of_logits_at_plus_100_does_not_overflow) {
  expect_stable(log_softmax, "log_softmax", {-2.4076059644443806, -1.4076059644443806, -0.40760596444438035});
}

// A row whose logits are all -inf (every key masked) has no distribution:
// softmax gives zeros (not NaN), log_softmax -inf, as torch does for a
// fully masked attention row once NaN is replaced.
TEST(ex12_softmax, fully_masked_row_gives_zeros_not_nan) {
  const double inf = INFINITY;
  const Tensor x = tensor({1, 2, 3, -inf, -inf, -inf}, {2, 3}, kF64);
  expect_values(softmax(x, -1), tensor({0.090030573170380462, 0.24472847105479767, 0.66524095577482185, 0, 0, 0},
                                       {2, 3}, kF64),
                f64_tol(), "softmax of [[1, 2, 3], [-inf, -inf, -inf]]");
}


// The gradients, once the forward is right.
#define AFTER_SOFTMAX_FORWARD() COURSE_AFTER_FORWARD("softmax_matches_torch_float64", "log_softmax_matches_torch_float64")

TEST(ex12_softmax, gradients_match_torch_float64) {
  AFTER_SOFTMAX_FORWARD();
  softmax_cases("f64", Part::Gradients);
  log_softmax_cases("f64", Part::Gradients);
}
TEST(ex12_softmax, gradients_of_large_logits_match_torch_float64) {
  COURSE_AFTER_FORWARD("large_logits_match_torch_float64");
  large_cases(Part::Gradients);
}
// float32: the bound's condition numbers of the gradients come from the
// backward, so these wait for the forward too.
TEST(ex12_softmax, softmax_and_its_gradient_match_torch_float32) {
  AFTER_SOFTMAX_FORWARD();
  softmax_cases("f32", Part::All);
}
TEST(ex12_softmax, log_softmax_and_its_gradient_match_torch_float32) {
  AFTER_SOFTMAX_FORWARD();
  log_softmax_cases("f32", Part::All);
}

TEST(ex12_softmax, softmax_gradcheck) {
  AFTER_SOFTMAX_FORWARD();
  expect_gradcheck([](const std::vector<Tensor>& x) { return softmax(x[0], 1); }, {randn64({2, 3, 4}, 1)},
                   "softmax over dim 1");
}
TEST(ex12_softmax, log_softmax_gradcheck) {
  AFTER_SOFTMAX_FORWARD();
  expect_gradcheck([](const std::vector<Tensor>& x) { return log_softmax(x[0], -1); }, {randn64({3, 4}, 2)},
                   "log_softmax over the last dim");
}

// d log_softmax: g - softmax * sum(g). With g = 1 everywhere (the gradient of
// sum(log_softmax(x))) sum(g) = 3 per row, so the gradient is 1 - 3 softmax.
TEST(ex12_softmax, log_softmax_backward_scales_softmax_by_the_sum_of_g) {
  AFTER_SOFTMAX_FORWARD();
  const std::vector<double> xs = {0.5, -1, 2};
  Tensor x = param(xs, {3});
  backward(log_softmax(x, 0), ones({3}, kF64));
  if (!x.grad().defined()) {
    ADD_FAILURE() << "log_softmax: no gradient reached x";
    return;
  }
  double z = 0;
  for (double v : xs) z += std::exp(v);
  const std::vector<double> got = x.grad().to_vector<double>();
  for (size_t i = 0; i < xs.size(); ++i) {
    const double p = std::exp(xs[i]) / z, want = 1 - 3 * p;
    if (std::abs(got[i] - want) <= 1e-12 + 1e-10 * std::abs(want)) continue;
    const bool unscaled = std::abs(got[i] - (1 - p)) <= 1e-9;
    ADD_FAILURE() << fmt::format("d sum(log_softmax(x)) / dx[{}] is {:.10g}, expected 1 - 3 softmax = {:.10g}{}", i,
                                 got[i], want,
                                 unscaled ? ": that is g - softmax; the rule is g - softmax * sum(g), and sum(g) = 3 here"
                                          : "");
    return;
  }
}

}  // namespace
}  // namespace ropegrad::course
