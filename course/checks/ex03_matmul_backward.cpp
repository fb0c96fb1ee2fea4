// ex03-matmul-backward: the gradients of C = A B for both operands, batched
// and with broadcast batch dims (autograd/ops_matmul.cpp).
#include "course/checks/check_util.h"
#include "course/checks/ops_fixture.h"

namespace ropegrad::course {
namespace {

// float32 against torch: the bound tests/test_parity.cpp gives these cases.
// K = the case's largest input (at most 40 elements), which bounds every sum:
// the forward sums k = 4 products, dA = g B^T sums n products and dB = A^T g
// sums (batch x m) products, both at most an operand's size; 3 rounded stages
// (the forward GEMM, the backward GEMM, the sum over broadcast batch dims).
constexpr F32Bound kBound{40, 3};

const OpFn kMatmul = [](const OpInputs& in) -> std::vector<Tensor> { return {matmul(in.at("a"), in.at("b"))}; };

void cases(const std::vector<std::string>& names, const std::string& dt) {
  for (const std::string& c : names) expect_op_parity(c, dt, kMatmul, kBound);
}

const std::vector<std::string> kTwoD = {"matmul_2d_2d"};                                 // (3, 4) @ (4, 5)
const std::vector<std::string> kBatched = {"matmul_batched"};                            // (2, 3, 4) @ (2, 4, 5)
const std::vector<std::string> kBroadcast = {"matmul_bcast_batch",                       // (2, 1, 3, 4) @ (3, 4, 2)
                                             "matmul_nd_2d",                             // (2, 3, 4) @ (4, 5)
                                             "matmul_2d_nd"};                            // (3, 4) @ (2, 4, 5)
const std::vector<std::string> kVectors = {"matmul_1d_1d", "matmul_1d_2d", "matmul_2d_1d",  // [4] @ [4], ...
                                           "matmul_1d_3d", "matmul_3d_1d"};

TEST(ex03_matmul_backward, two_d_gradients_match_torch_float64) { cases(kTwoD, "f64"); }
TEST(ex03_matmul_backward, two_d_gradients_match_torch_float32) { cases(kTwoD, "f32"); }
TEST(ex03_matmul_backward, batched_gradients_match_torch_float64) { cases(kBatched, "f64"); }
TEST(ex03_matmul_backward, batched_gradients_match_torch_float32) { cases(kBatched, "f32"); }
TEST(ex03_matmul_backward, broadcast_batch_gradients_match_torch_float64) { cases(kBroadcast, "f64"); }
TEST(ex03_matmul_backward, broadcast_batch_gradients_match_torch_float32) { cases(kBroadcast, "f32"); }
TEST(ex03_matmul_backward, vector_operand_gradients_match_torch_float64) { cases(kVectors, "f64"); }
TEST(ex03_matmul_backward, vector_operand_gradients_match_torch_float32) { cases(kVectors, "f32"); }

// Transposed views as operands: A^T B^T with A (4, 3), B (5, 4).
const OpFn kTransposedViews = [](const OpInputs& in) -> std::vector<Tensor> {
  return {matmul(transpose(in.at("a"), 0, 1), transpose(in.at("b"), 0, 1))};
};
TEST(ex03_matmul_backward, transposed_view_operands_match_torch_float64) {
  expect_op_parity("matmul_transposed_views", "f64", kTransposedViews);
}
TEST(ex03_matmul_backward, transposed_view_operands_match_torch_float32) {
  expect_op_parity("matmul_transposed_views", "f32", kTransposedViews, kBound);
}

// C = A B with only operand `which` (0: A, 1: B) requiring a gradient, the
// other a constant (a frozen weight, a layer's input): check_util.h's
// expect_one_needs_grad.
void expect_one_needs_grad(int which, const std::vector<double>& want) {
  const OneNeedsGrad c{"matmul(A, B), A (2, 3), B (3, 2)", {"A", "B"}, [](const Tensor& a, const Tensor& b) {
                         return matmul(a, b);
                       },
                       {1, -2, 3, 0.5, 2.5, -1}, {2, -1, 0.5, 3, -2, 1.5}, {2, 3}, {3, 2}};
  course::expect_one_needs_grad(c, which, want);
}

// One operand a constant: only the other gets a gradient. d sum(A B)/dA[i, k]
// = sum_j B[k, j] (B's row sums), d sum(A B)/dB[k, j] = sum_i A[i, k] (A's column sums).
TEST(ex03_matmul_backward, only_a_needs_grad) { expect_one_needs_grad(0, {1, 3.5, -0.5, 1, 3.5, -0.5}); }
TEST(ex03_matmul_backward, only_b_needs_grad) { expect_one_needs_grad(1, {1.5, 1.5, 0.5, 0.5, 2, 2}); }

void gradcheck_matmul(Shape a, Shape b, uint64_t seed, const std::string& label) {
  expect_gradcheck([](const std::vector<Tensor>& x) { return matmul(x[0], x[1]); },
                   {randn64(std::move(a), seed), randn64(std::move(b), seed + 1)}, label);
}

TEST(ex03_matmul_backward, two_d_gradcheck) { gradcheck_matmul({3, 4}, {4, 5}, 1, "(3, 4) @ (4, 5)"); }
TEST(ex03_matmul_backward, square_gradcheck) { gradcheck_matmul({3, 3}, {3, 3}, 3, "(3, 3) @ (3, 3)"); }
TEST(ex03_matmul_backward, batched_gradcheck) { gradcheck_matmul({2, 3, 4}, {2, 4, 2}, 5, "(2, 3, 4) @ (2, 4, 2)"); }
// B's batch dim is broadcast over A's first dim: B's gradient sums over it.
TEST(ex03_matmul_backward, broadcast_batch_gradcheck_summed_back) {
  gradcheck_matmul({2, 1, 3, 4}, {3, 4, 2}, 7, "(2, 1, 3, 4) @ (3, 4, 2)");
}
// (2, 3, 4) @ (4, 2) with A's gradient right and B's one of four look-alikes
// of sum_b A[b]^T g[b] (each computed here by loops): which, or "".
std::string shared_weight_form() {
  const Tensor a = randn64({2, 3, 4}, 21), b = randn64({4, 2}, 22), g = randn64({2, 3, 2}, 23);
  try {
    backward(matmul(a, b), g);
  } catch (const Error&) {
    return "";  // gradcheck below reports the error itself
  }
  const std::vector<double> av = a.to_vector<double>(), bv = b.to_vector<double>(), gv = g.to_vector<double>();
  std::vector<double> want_a(24, 0.0), per_batch[2] = {std::vector<double>(8, 0.0), std::vector<double>(8, 0.0)},
                                       reshaped(8, 0.0);
  for (int bt = 0; bt < 2; ++bt)
    for (int i = 0; i < 3; ++i)
      for (int k = 0; k < 4; ++k)
        for (int j = 0; j < 2; ++j) {
          want_a[(bt * 3 + i) * 4 + k] += gv[(bt * 3 + i) * 2 + j] * bv[k * 2 + j];
          per_batch[bt][k * 2 + j] += av[(bt * 3 + i) * 4 + k] * gv[(bt * 3 + i) * 2 + j];
        }
  // A's memory, (6, 4) row-major, read as a (4, 6) matrix R: R[k][r] = A_flat[k * 6 + r].
  for (int k = 0; k < 4; ++k)
    for (int r = 0; r < 6; ++r)
      for (int j = 0; j < 2; ++j) reshaped[k * 2 + j] += av[k * 6 + r] * gv[r * 2 + j];
  const auto matches = [](const Tensor& t, const std::vector<double>& want) {
    const std::vector<double> v = t.to_vector<double>();
    for (size_t i = 0; i < v.size(); ++i)
      if (!(std::abs(v[i] - want[i]) <= 1e-10 * (1 + std::abs(want[i])))) return false;
    return true;
  };
  if (!a.grad().defined() || !b.grad().defined() || b.grad().numel() != 8 || !matches(a.grad(), want_a)) return "";
  std::vector<double> sum(8), mean(8);
  for (int e = 0; e < 8; ++e) sum[e] = per_batch[0][e] + per_batch[1][e], mean[e] = sum[e] / 2;
  if (matches(b.grad(), sum)) return "";
  const std::pair<const std::vector<double>*, const char*> forms[] = {
      {&reshaped, "A's (batch x rows, k) = (6, 4) matrix reshaped to (4, 6) and multiplied by g's (6, 2): a reshape "
                  "where its transpose belongs (a reshape keeps the memory's order; a transpose swaps the indices)"},
      {&per_batch[0], "batch 0's share alone, A[0]^T g[0]: the other batch's share is missing"},
      {&per_batch[1], "the last batch's share alone, A[1]^T g[1]: the other batch's share is missing"},
      {&mean, "the mean of the batches' shares A[b]^T g[b], where their sum belongs"}};
  for (const auto& [form, text] : forms)
    if (matches(b.grad(), *form)) return "(2, 3, 4) @ (4, 2): A's gradient is right; B's is exactly " + std::string(text);
  return "";
}

// One weight for every row of a batch, as in a Linear layer.
TEST(ex03_matmul_backward, shared_weight_gradcheck) {
  // The form first, when one fits; gradcheck's own report after it.
  if (const std::string form = shared_weight_form(); !form.empty()) ADD_FAILURE() << form;
  gradcheck_matmul({2, 3, 4}, {4, 2}, 9, "(2, 3, 4) @ (4, 2)");
}
// The shared weight again, its batched operand a transposed view X^T (X
// (2, 4, 3)): its memory cannot be viewed as one (batch x rows, k) matrix,
// so flattening it for one GEMM over every row needs a copy.
TEST(ex03_matmul_backward, shared_weight_with_a_transposed_batched_operand_gradcheck) {
  expect_gradcheck([](const std::vector<Tensor>& x) { return matmul(transpose(x[0], 1, 2), x[1]); },
                   {randn64({2, 4, 3}, 15), randn64({4, 2}, 16)},
                   "transpose(X, 1, 2) @ W, X (2, 4, 3) (a non-contiguous (2, 3, 4) view), W (4, 2)");
}
TEST(ex03_matmul_backward, vector_operands_gradcheck) {
  gradcheck_matmul({4}, {4, 3}, 11, "[4] @ (4, 3)");
  gradcheck_matmul({2, 3, 4}, {4}, 13, "(2, 3, 4) @ [4]");
}

// B's batch dim of size 1 stretched over A's 3: B's gradient sums over it, keeping the dim.
TEST(ex03_matmul_backward, a_size_one_batch_dim_gradcheck_summed_back) {
  gradcheck_matmul({3, 2, 4}, {1, 4, 5}, 19, "(3, 2, 4) @ (1, 4, 5)");
}

// The shared weight under two batch dims, (B, H, T, k) @ (k, n): every batch dim flattens into the rows.
TEST(ex03_matmul_backward, shared_weight_with_two_batch_dims_gradcheck) {
  COURSE_REQUIRES("shared_weight_gradcheck");  // one batch dim first: this one only adds a second
  gradcheck_matmul({2, 2, 3, 4}, {4, 2}, 17, "(2, 2, 3, 4) @ (4, 2)");
}

}  // namespace
}  // namespace ropegrad::course
