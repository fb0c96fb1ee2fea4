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
TEST(ex02_sum_mean, mean_gradients_match_torch_float64) { mean_cases("f64"); }
TEST(ex02_sum_mean, mean_gradients_match_torch_float32) { mean_cases("f32"); }

TEST(ex02_sum_mean, sum_gradcheck_dropping_the_dims) {  // (2, 3, 4) -> (3)
  expect_gradcheck([](const std::vector<Tensor>& x) { return sum(x[0], {0, 2}); }, {randn64({2, 3, 4}, 1)},
                   "sum over dims 0 and 2");
}
TEST(ex02_sum_mean, sum_gradcheck_keepdim) {  // (2, 3, 4) -> (2, 1, 4)
  expect_gradcheck([](const std::vector<Tensor>& x) { return sum(x[0], {1}, true); }, {randn64({2, 3, 4}, 2)},
                   "sum over dim 1, keepdim");
}
TEST(ex02_sum_mean, mean_gradcheck) {  // (2, 3, 4) -> (2, 4): each element gets 1/3 of its output's gradient
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
    ADD_FAILURE() << label << ": broadcast not summed back: the result has shape " << shape_str(got.shape())
                  << " (sum over the leading dims broadcasting added and over every dim where " << shape_str(shape)
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
  expect_gradcheck(
      [](const std::vector<Tensor>& x) { return mean(reshape(add(x[0], x[1]), {2, 12}), {1}); },
      {randn64({2, 3, 4}, 9), randn64({4}, 10)}, "mean(reshape(x + b, (2, 12)), 1)");
}

}  // namespace
}  // namespace ropegrad::course
