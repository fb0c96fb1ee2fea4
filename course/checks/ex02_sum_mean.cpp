// ex02-sum-mean: the backward of sum and mean (autograd/ops_reduce.cpp) and
// kernels::sum_to, broadcasting run backwards (tensor/reduce.cpp).
#include "course/checks/check_util.h"
#include "course/checks/ops_fixture.h"

namespace ropegrad::course {
namespace {

// float32 against torch: the bound tests/test_parity.cpp gives these cases.
// K = the case's input size (15 or 24 elements: the forward sums at most that
// many) and 3 rounded stages (the forward sum, the division by the count, the
// backward's scaling).
constexpr F32Bound kBound15{15, 3}, kBound24{24, 3};


OpFn reduce_fn(Tensor (*op)(const Tensor&, const std::vector<int64_t>&, bool), std::vector<int64_t> dims,
               bool keepdim) {
  return [op, dims, keepdim](const OpInputs& in) -> std::vector<Tensor> { return {op(in.at("x"), dims, keepdim)}; };
}

void sum_cases(const std::string& dt) {
  expect_op_parity("sum_all", dt, reduce_fn(sum, {}, false), kBound15);           // (3, 5) -> ()
  expect_op_parity("sum_dim0", dt, reduce_fn(sum, {0}, false), kBound15);         // (3, 5) -> (5)
  expect_op_parity("sum_dim1_keepdim", dt, reduce_fn(sum, {1}, true), kBound15);  // (3, 5) -> (3, 1)
  expect_op_parity("sum_dims02", dt, reduce_fn(sum, {0, 2}, false), kBound24);    // (2, 3, 4) -> (3)
  expect_op_parity("sum_dim_neg", dt, reduce_fn(sum, {-1}, false), kBound24);     // (2, 3, 4) -> (2, 3)
}
void mean_cases(const std::string& dt) {
  expect_op_parity("mean_all", dt, reduce_fn(mean, {}, false), kBound15);                  // (3, 5) -> ()
  expect_op_parity("mean_dim0", dt, reduce_fn(mean, {0}, false), kBound15);                // (3, 5) -> (5)
  expect_op_parity("mean_dims12_keepdim", dt, reduce_fn(mean, {1, 2}, true), kBound24);    // -> (2, 1, 1)
  expect_op_parity("mean_dim_neg", dt, reduce_fn(mean, {-2}, false), kBound24);            // -> (2, 4)
}

TEST(ex02_sum_mean, sum_gradients_match_torch_float64) { sum_cases("f64"); }
TEST(ex02_sum_mean, sum_gradients_match_torch_float32) { sum_cases("f32"); }

// mean over `dims` of x of shape `shape`: every element of x gets its
// output's gradient times s = 1 / (the number of elements averaged). The
// output gradient has distinct values, so a gradient sent to the wrong
// elements shows.
struct MeanCase {
  Shape shape;
  std::vector<int64_t> dims;
  bool keepdim;
};

std::string fraction_text(double s) {
  if (s != 0 && std::abs(1 / s - std::round(1 / s)) < 1e-9 && std::abs(s) < 1)
    return fmt::format("{}1/{}", s < 0 ? "-" : "", std::abs(std::round(1 / s)));
  if (std::abs(s - std::round(s)) < 1e-9) return fmt::format("{}", std::round(s));
  return fmt::format("{:.6g}", s);
}

// Three shapes where the count averaged (c), x's number of elements (n) and
// the output's (m) all differ: when each element's scale is one number s per
// case, s is compared with each of these counts (and their inverses) in every
// case; one that fits all three is named, never one that fits only some.
TEST(ex02_sum_mean, mean_gradient_on_three_shapes) {
  const std::vector<MeanCase> cases = {{{3, 5}, {0}, false}, {{2, 3, 4}, {0, 2}, true}, {{2, 3, 4}, {-1}, false}};
  std::vector<double> scales, counts, sizes, out_sizes, reduced_dims;
  std::vector<std::string> names;
  for (size_t k = 0; k < cases.size(); ++k) {
    const MeanCase& mc = cases[k];
    std::string dims_text;
    for (int64_t d : mc.dims) dims_text += (dims_text.empty() ? "" : ", ") + std::to_string(d);
    const std::string name = fmt::format("{} over dim{} {}{}", shape_str(mc.shape), mc.dims.size() > 1 ? "s" : "",
                                         dims_text, mc.keepdim ? ", keepdim" : "");
    Tensor x = randn64(mc.shape, 20 + k);
    const Tensor out = mean(x, mc.dims, mc.keepdim);
    // Which dims are averaged, and each input element's output (flat index).
    const auto rank = static_cast<int64_t>(mc.shape.size());
    std::vector<bool> reduced(mc.shape.size(), false);
    for (int64_t d : mc.dims) reduced[static_cast<size_t>(d < 0 ? d + rank : d)] = true;
    const int64_t n = numel_of(mc.shape);
    int64_t m = 1;
    for (size_t d = 0; d < mc.shape.size(); ++d)
      if (!reduced[d]) m *= mc.shape[d];
    const int64_t c = n / m;
    std::vector<double> g_values(static_cast<size_t>(m));
    for (int64_t j = 0; j < m; ++j) g_values[static_cast<size_t>(j)] = 0.5 + 0.25 * static_cast<double>(j);
    if (out.numel() != m) {
      ADD_FAILURE() << "mean of " << name << ": the output has shape " << shape_str(out.shape()) << " ("
                    << out.numel() << " elements, expected " << m << ")";
      return;
    }
    try {
      backward(out, reshape(tensor(g_values, {m}, kF64), out.shape()));
    } catch (const NotImplemented&) {
      throw;
    } catch (const Error& e) {
      ADD_FAILURE() << "mean of " << name << ": backward raised an error: " << e.what();
      return;
    }
    const Tensor grad = x.grad();
    if (!grad.defined() || grad.shape() != mc.shape) {
      ADD_FAILURE() << "mean of " << name << ": "
                    << (grad.defined() ? "the gradient has shape " + shape_str(grad.shape()) : "x got no gradient");
      return;
    }
    const std::vector<double> got = grad.to_vector<double>();
    std::vector<double> want(got.size()), upstream(got.size());
    for (size_t i = 0; i < got.size(); ++i) {
      int64_t flat = static_cast<int64_t>(i), j = 0, stride = 1;
      for (size_t d = mc.shape.size(); d-- > 0;) {
        const int64_t idx = flat % mc.shape[d];
        flat /= mc.shape[d];
        if (!reduced[d]) j += idx * stride, stride *= mc.shape[d];
      }
      upstream[i] = g_values[static_cast<size_t>(j)];
      want[i] = upstream[i] / static_cast<double>(c);
    }
    // The scale of every element, when it is one number for the case.
    double s = got[0] / upstream[0];
    for (size_t i = 0; i < got.size(); ++i)
      if (!(std::abs(got[i] / upstream[i] - s) <= 1e-9 * std::max(1.0, std::abs(s)))) s = NAN;
    if (std::isnan(s)) {  // not one scale: say where and how it differs
      expect_values(grad, tensor(want, mc.shape, kF64), f64_tol(),
                    "mean of " + name + " (output gradient 0.5, 0.75, 1, ... by output element): grad x");
      return;
    }
    scales.push_back(s);
    reduced_dims.push_back(static_cast<double>(std::count(reduced.begin(), reduced.end(), true)));
    counts.push_back(static_cast<double>(c));
    sizes.push_back(static_cast<double>(n));
    out_sizes.push_back(static_cast<double>(m));
    names.push_back(name);
  }
  bool right = true;
  for (size_t k = 0; k < scales.size(); ++k)
    right = right && std::abs(scales[k] * counts[k] - 1) <= 1e-10;
  if (right) return;
  // The counts each scale is compared with, in every case.
  struct Candidate {
    const char* text;
    std::function<double(double c, double n, double m)> value;
  };
  const std::vector<Candidate> candidates = {
      {"1 in each case: the output gradient unscaled", [](double, double, double) { return 1.0; }},
      {"-1 / (the number of elements averaged) in each case: the sign flipped",
       [](double c, double, double) { return -1 / c; }},
      {"the number of elements averaged in each case (not its inverse)", [](double c, double, double) { return c; }},
      {"1 / (x's number of elements) in each case, not 1 / (the number averaged)",
       [](double, double n, double) { return 1 / n; }},
      {"1 / (the output's number of elements) in each case, not 1 / (the number averaged)",
       [](double, double, double m) { return 1 / m; }},
      {"x's number of elements in each case", [](double, double n, double) { return n; }},
      {"the output's number of elements in each case", [](double, double, double m) { return m; }},
      {"1 / (the number of elements averaged)^2 in each case", [](double c, double, double) { return 1 / (c * c); }},
  };
  std::string fits;
  for (const Candidate& cand : candidates) {
    bool all = true;
    for (size_t k = 0; k < scales.size(); ++k) {
      const double v = cand.value(counts[k], sizes[k], out_sizes[k]);
      all = all && std::abs(scales[k] - v) <= 1e-9 * std::abs(v);
    }
    if (all) fits = cand.text;
  }
  bool per_dim = true;  // 1 / (the number of dims reduced), a count of dims, not of elements
  for (size_t k = 0; k < scales.size(); ++k) per_dim = per_dim && std::abs(scales[k] * reduced_dims[k] - 1) <= 1e-10;
  if (per_dim) fits = "1 / (the number of dims reduced: 1, 2, 1) in each case, not 1 / (the number of elements averaged)";
  std::string shown, averaged;
  for (size_t k = 0; k < scales.size(); ++k) {
    shown += fmt::format("{}{} ({})", k ? ", " : "", fraction_text(scales[k]), names[k]);
    averaged += fmt::format("{}{}", k ? ", " : "", counts[k]);
  }
  ADD_FAILURE() << "mean's gradient: every element of x gets its output's gradient times s, with s = " << shown
                << (fits.empty() ? ": no count of these shapes fits all three" : ": s = " + fits)
                << "; mean's s is 1 / (the number of elements averaged: " << averaged << ")";
}
TEST(ex02_sum_mean, mean_gradients_match_torch_float64) {
  COURSE_REQUIRES("mean_gradient_on_three_shapes");
  mean_cases("f64");
}
TEST(ex02_sum_mean, mean_gradients_match_torch_float32) {
  COURSE_REQUIRES("mean_gradient_on_three_shapes");
  mean_cases("f32");
}

TEST(ex02_sum_mean, sum_gradcheck_dropping_the_dims) {  // (2, 3, 4) -> (3)
  expect_gradcheck([](const std::vector<Tensor>& x) { return sum(x[0], {0, 2}); }, {randn64({2, 3, 4}, 1)},
                   "sum over dims 0 and 2");
}
TEST(ex02_sum_mean, sum_gradcheck_keepdim) {  // (2, 3, 4) -> (2, 1, 4)
  expect_gradcheck([](const std::vector<Tensor>& x) { return sum(x[0], {1}, true); }, {randn64({2, 3, 4}, 2)},
                   "sum over dim 1, keepdim");
}
TEST(ex02_sum_mean, mean_gradcheck) {  // (2, 3, 4) -> (2, 4): each element gets 1/3 of its output's gradient
  COURSE_REQUIRES("mean_gradient_on_three_shapes");
  expect_gradcheck([](const std::vector<Tensor>& x) { return mean(x[0], {1}); }, {randn64({2, 3, 4}, 3)},
                   "mean over dim 1");
}

// sum_to(t, shape): t's shape is a broadcast of `shape`; sum over the dims
// broadcasting added in front and over those where `shape` has size 1.
void expect_sum_to(const Tensor& t, const Shape& shape, const Tensor& want) {
  const std::string label = "sum_to " + shape_str(t.shape()) + " -> " + shape_str(shape);
  Tensor got;
  try {
    got = kernels::sum_to(t, shape);
  } catch (const NotImplemented&) {
    throw;
  } catch (const Error& e) {
    ADD_FAILURE() << label << ": raised an error: " << e.what();
    return;
  }
  if (got.shape() != shape) {
    // The right sums in another shape (the size-1 dims left in, or kept dims dropped): only the shape is wrong.
    if (got.numel() == want.numel() && static_cast<bool>(all_close(reshape(got, shape), want, f64_tol()))) {
      ADD_FAILURE() << label << ": the values are the right sums, but the result has shape " << shape_str(got.shape())
                    << ", not " << shape_str(shape) << ": the sums are right and the final shape is not";
      return;
    }
    ADD_FAILURE() << label << ": broadcast not summed back: the result has shape " << shape_str(got.shape())
                  << ", not " << shape_str(shape) << " (sum over the leading dims broadcasting added and over every dim where " << shape_str(shape)
                  << " has size 1, keeping it)";
    return;
  }
  expect_values(got, want, f64_tol(), label);
}

TEST(ex02_sum_mean, sum_to_sums_leading_and_size_one_dims) {
  const Tensor t = reshape(arange(0.0, 24.0, 1.0, kF64), {2, 3, 4});  // t[i, j, k] = 12 i + 4 j + k
  expect_sum_to(t, {3, 1}, tensor({60, 92, 124}, {3, 1}, kF64));
  expect_sum_to(t, {1, 4}, tensor({60, 66, 72, 78}, {1, 4}, kF64));
  expect_sum_to(t, {4}, tensor({60, 66, 72, 78}, {4}, kF64));
  expect_sum_to(t, {2, 1, 4}, tensor({12, 15, 18, 21, 48, 51, 54, 57}, {2, 1, 4}, kF64));
  expect_sum_to(t, {}, scalar_tensor(276, kF64));
}

// The gradient of a broadcast operand: expand (3, 1) -> (2, 3, 4), then
// every one of the 8 copies of an element adds its gradient.
TEST(ex02_sum_mean, expand_gradcheck_summed_back) {
  expect_gradcheck([](const std::vector<Tensor>& x) { return expand(x[0], {2, 3, 4}); }, {randn64({3, 1}, 4)},
                   "expand (3, 1) -> (2, 3, 4)");
}
TEST(ex02_sum_mean, add_with_broadcasting_gradcheck) {  // (2, 1, 4) + (3, 1): both broadcast
  expect_gradcheck([](const std::vector<Tensor>& x) { return add(x[0], x[1]); },
                   {randn64({2, 1, 4}, 5), randn64({3, 1}, 6)}, "add with broadcasting");
}

// The hard case (minitorch's): a broadcast difference, reshaped, then reduced.
// x (2, 3, 4) - b (3, 1) -> (2, 3, 4) -> reshape (6, 4) -> sum over dim 0 -> (1, 4).
// Backward: the sum's gradient expanded to (6, 4) (a stride-0 view), reshaped
// back to (2, 3, 4) (a copy: no view can), then summed to b's (3, 1), negated.
// (A difference, not a product: mul's rule is the next exercise's.)
TEST(ex02_sum_mean, sum_over_a_reshape_of_a_broadcast_gradcheck) {
  expect_gradcheck(
      [](const std::vector<Tensor>& x) { return sum(reshape(sub(x[0], x[1]), {6, 4}), {0}, true); },
      {randn64({2, 3, 4}, 7), randn64({3, 1}, 8)}, "sum(reshape(x - b, (6, 4)), 0, keepdim)");
}
// mean over a reshape of a broadcast sum: b (4) is added to every row, then
// (2, 3, 4) -> (2, 12) -> mean over dim 1 -> (2).
TEST(ex02_sum_mean, mean_over_a_reshape_of_a_broadcast_gradcheck) {
  COURSE_REQUIRES("mean_gradient_on_three_shapes");
  expect_gradcheck(
      [](const std::vector<Tensor>& x) { return mean(reshape(add(x[0], x[1]), {2, 12}), {1}); },
      {randn64({2, 3, 4}, 9), randn64({4}, 10)}, "mean(reshape(x + b, (2, 12)), 1)");
}

}  // namespace
}  // namespace ropegrad::course
