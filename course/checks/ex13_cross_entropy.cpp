// ex13-cross-entropy: nn::cross_entropy, the mean of -log softmax(z)[t] over
// the targets that are not ignore_index, and its fused backward
// (nn/cross_entropy.cpp), against F.cross_entropy (tests/fixtures/nn/ce_*: the
// gradient is that of loss * w, w a random scalar).
#include <cmath>

#include "course/checks/check_util.h"
#include "nn/functional.h"

namespace ropegrad::course {
namespace {

NamedTensors ce_run(const std::string& c, const Tensor& logits_in, const Tensor& w) {
  const Tensor targets = nn_fixture(c, "f64", "targets");
  Tensor logits = logits_in.detach().requires_grad_();
  const Tensor loss = nn::cross_entropy(logits, targets, nn_fixture(c, "f64", "ignore_index").item<int64_t>());
  backward(mul(loss, to(w, logits_in.dtype())));
  return {{"out", loss.detach()}, {"grad_logits", logits.grad()}};
}

void expect_f64_case(const std::string& c) {
  for (const auto& [n, t] : ce_run(c, nn_fixture(c, "f64", "logits"), nn_fixture(c, "f64", "w")))
    expect_values(t, nn_fixture(c, "f64", n), f64_tol(), n == "out" ? "loss" : n);
}

TEST(ex13_cross_entropy, random_logits_match_torch_float64) { expect_f64_case("ce_basic"); }  // (6, 10)

TEST(ex13_cross_entropy, random_logits_match_torch_float32) {
  // K = 10: the longest sum (the V classes of a row's exp sum; the N = 6
  // targets of the mean); stages: max, exp and sum, log, the mean, and the
  // backward's softmax.
  const Tensor w = nn_fixture("ce_basic", "f64", "w");
  const ParityRun run = [&](const std::vector<Tensor>& ls) { return ce_run("ce_basic", ls[0], w); };
  const NamedTensors got = run({nn_fixture("ce_basic", "f32", "logits")});
  const NamedTensors cond = condition_numbers(run, {nn_fixture("ce_basic", "f64", "logits")});
  for (size_t i = 0; i < got.size(); ++i) {
    const auto r = within_f32_bound(got[i].second, nn_fixture("ce_basic", "f32", got[i].first), cond[i].second, {10, 5});
    if (!r) ADD_FAILURE() << got[i].first << ": " << r.message();
  }
}

TEST(ex13_cross_entropy, logits_of_magnitude_1e30_stay_finite) {  // exp overflows unless the max is subtracted first
  expect_f64_case("ce_huge");
}

TEST(ex13_cross_entropy, ignored_targets_are_left_out_of_the_mean) {  // ce_ignore: two of six targets are -100
  const NamedTensors got = ce_run("ce_ignore", nn_fixture("ce_ignore", "f64", "logits"), nn_fixture("ce_ignore", "f64", "w"));
  const std::vector<int64_t> t = nn_fixture("ce_ignore", "f64", "targets").to_vector<int64_t>();
  double kept = 0;
  for (int64_t v : t) kept += v != -100;
  const double loss = got[0].second.item<double>(), want = nn_fixture("ce_ignore", "f64", "out").item<double>();
  if (std::abs(loss - want * kept / static_cast<double>(t.size())) < 1e-9 * std::abs(want))
    ADD_FAILURE() << "the mean counts the ignored targets: loss " << loss << " = " << kept << "/" << t.size()
                  << " x the expected " << want << " (divide by the " << kept << " targets that are not ignored)";
  else
    for (const auto& [n, v] : got) expect_values(v, nn_fixture("ce_ignore", "f64", n), f64_tol(), n == "out" ? "loss" : n);
}

TEST(ex13_cross_entropy, an_ignore_index_that_is_a_class_is_ignored) { expect_f64_case("ce_ignore_class"); }

TEST(ex13_cross_entropy, logits_b_t_v_match_torch_float64) { expect_f64_case("ce_3d"); }  // (2, 3, 11), one pad

TEST(ex13_cross_entropy, the_gradient_passes_gradcheck) {  // (4, 5) logits, row 1's target ignored
  Generator gen(13);
  const Tensor targets = tensor_i64({3, -100, 0, 4}, {4});
  expect_gradcheck([&](const std::vector<Tensor>& in) { return nn::cross_entropy(in[0], targets); },
                   {randn({4, 5}, DType::Float64, &gen).requires_grad_()}, "cross_entropy");
}

}  // namespace
}  // namespace ropegrad::course
