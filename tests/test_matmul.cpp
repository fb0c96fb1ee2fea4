// Step "matmul": torch.matmul semantics (1-D, 2-D, batched, broadcast batch dims)
// checked against a naive triple loop in double, views handed to BLAS without
// copies, zero-size dims, bad input, and OpenBLAS kept to one thread.
#include <cblas.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "autograd/ops.h"
#include "tests/support/test_util.h"

using namespace ropegrad;
using namespace ropegrad::testing;

namespace {

// torch.matmul by its definition: promote 1-D operands to a row / column,
// broadcast the batch dims, then out[..., i, j] = sum_p a[..., i, p] b[..., p, j]
// in double. Returns the values row-major and sets `shape`.
std::vector<double> naive_matmul(const Tensor& a_in, const Tensor& b_in, Shape& shape) {
  Shape sa = a_in.shape(), sb = b_in.shape();
  if (sa.size() == 1) sa.insert(sa.begin(), 1);
  if (sb.size() == 1) sb.push_back(1);
  const std::vector<double> av = a_in.to_vector<double>(), bv = b_in.to_vector<double>();
  const Shape stride_a = contiguous_strides(sa), stride_b = contiguous_strides(sb);
  const int64_t m = sa[sa.size() - 2], k = sa.back(), n = sb.back();
  EXPECT_EQ(k, sb[sb.size() - 2]);
  // Batch shape: the two batch shapes aligned from the right.
  const size_t nb = std::max(sa.size(), sb.size()) - 2;
  Shape batch(nb, 1);
  for (size_t d = 0; d < nb; ++d) {
    const int64_t da = d + sa.size() - 2 >= nb ? sa[d + sa.size() - 2 - nb] : 1;
    const int64_t db = d + sb.size() - 2 >= nb ? sb[d + sb.size() - 2 - nb] : 1;
    batch[d] = da == 1 ? db : da;
  }
  std::vector<double> out;
  const int64_t batches = numel_of(batch);
  for (int64_t flat = 0; flat < batches; ++flat) {
    // Offsets of this batch entry in a and b (index 0 along their size-1 dims).
    int64_t off_a = 0, off_b = 0, rest = flat;
    for (size_t d = nb; d-- > 0;) {
      const int64_t idx = rest % batch[d];
      rest /= batch[d];
      const int64_t ia = static_cast<int64_t>(d + sa.size() - 2) - static_cast<int64_t>(nb);
      const int64_t ib = static_cast<int64_t>(d + sb.size() - 2) - static_cast<int64_t>(nb);
      if (ia >= 0 && sa[ia] != 1) off_a += idx * stride_a[ia];
      if (ib >= 0 && sb[ib] != 1) off_b += idx * stride_b[ib];
    }
    for (int64_t i = 0; i < m; ++i) {
      for (int64_t j = 0; j < n; ++j) {
        double acc = 0;
        for (int64_t p = 0; p < k; ++p) {
          acc += av[off_a + i * k + p] * bv[off_b + p * n + j];
        }
        out.push_back(acc);
      }
    }
  }
  shape = batch;
  if (a_in.dim() > 1) shape.push_back(m);
  if (b_in.dim() > 1) shape.push_back(n);
  return out;
}

// matmul(a, b) has torch's shape and the naive product's values.
void expect_matches_naive(const Tensor& a, const Tensor& b, const Shape& expected_shape) {
  Shape naive_shape;
  const std::vector<double> expected = naive_matmul(a, b, naive_shape);
  ASSERT_EQ(naive_shape, expected_shape) << "the reference disagrees with the test's shape";
  const Tensor y = matmul(a, b);
  ASSERT_EQ(y.shape(), expected_shape);
  EXPECT_EQ(y.dtype(), a.dtype());
  const std::vector<double> got = y.to_vector<double>();
  ASSERT_EQ(got.size(), expected.size());
  // float32 GEMM rounds each partial sum; float64 agrees to rounding.
  const double tol = a.dtype() == DType::Float64 ? 1e-12 : 1e-4;
  for (size_t i = 0; i < got.size(); ++i) {
    EXPECT_NEAR(got[i], expected[i], tol * std::max(1.0, std::abs(expected[i])))
        << "at flat index " << i;
  }
}

Tensor rnd(const Shape& shape, DType dtype, uint64_t seed) {
  Generator g(seed);
  return randn(shape, dtype, &g);
}

// Runs a case in float64 and float32.
void for_both_dtypes(const std::function<void(DType)>& f) {
  for (DType d : {DType::Float64, DType::Float32}) {
    SCOPED_TRACE(std::string(dtype_name(d)));
    f(d);
  }
}

// Bytes allocated at the peak of `f` beyond what was live before it, counting
// what `f` keeps alive: a copied operand would show up here.
int64_t peak_extra_bytes(const std::function<Tensor()>& f, Tensor& keep) {
  const int64_t before = memory_stats().current_bytes;
  reset_peak_memory();
  keep = f();
  return memory_stats().peak_bytes - before;
}

}  // namespace

// ---- shapes and values ----------------------------------------------------------------

TEST(Matmul, HandWorkedTwoByTwo) {
  const Tensor a = tensor({1, 2, 3, 4}, {2, 2}, DType::Float64);
  const Tensor b = tensor({5, 6, 7, 8}, {2, 2}, DType::Float64);
  // [[1*5 + 2*7, 1*6 + 2*8], [3*5 + 4*7, 3*6 + 4*8]]
  EXPECT_EQ(matmul(a, b).to_vector<double>(), (std::vector<double>{19, 22, 43, 50}));
}

TEST(Matmul, TwoD) {
  for_both_dtypes([](DType d) { expect_matches_naive(rnd({3, 4}, d, 1), rnd({4, 5}, d, 2), {3, 5}); });
  // Larger than any blocking inside the BLAS.
  expect_matches_naive(rnd({67, 129}, DType::Float64, 3), rnd({129, 33}, DType::Float64, 4), {67, 33});
}

TEST(Matmul, VectorDotVectorIsZeroDim) {
  const Tensor dot = matmul(tensor({1, 2, 3}), tensor({4, 5, 6}));
  EXPECT_EQ(dot.dim(), 0);
  EXPECT_EQ(dot.item(), 32.0);  // 4 + 10 + 18
  for_both_dtypes([](DType d) { expect_matches_naive(rnd({7}, d, 5), rnd({7}, d, 6), {}); });
}

TEST(Matmul, VectorTimesMatrix) {
  for_both_dtypes([](DType d) { expect_matches_naive(rnd({4}, d, 7), rnd({4, 5}, d, 8), {5}); });
}

TEST(Matmul, MatrixTimesVector) {
  for_both_dtypes([](DType d) { expect_matches_naive(rnd({3, 4}, d, 9), rnd({4}, d, 10), {3}); });
}

TEST(Matmul, VectorWithBatched) {
  for_both_dtypes([](DType d) {
    expect_matches_naive(rnd({4}, d, 11), rnd({2, 4, 5}, d, 12), {2, 5});
    expect_matches_naive(rnd({2, 3, 4}, d, 13), rnd({4}, d, 14), {2, 3});
  });
}

TEST(Matmul, BatchedThreeD) {
  for_both_dtypes([](DType d) {
    expect_matches_naive(rnd({2, 3, 4}, d, 15), rnd({2, 4, 5}, d, 16), {2, 3, 5});
  });
}

TEST(Matmul, BroadcastBatchDims) {
  for_both_dtypes([](DType d) {
    expect_matches_naive(rnd({2, 1, 3, 4}, d, 17), rnd({5, 4, 2}, d, 18), {2, 5, 3, 2});
    expect_matches_naive(rnd({1, 3, 4}, d, 19), rnd({6, 4, 2}, d, 20), {6, 3, 2});
  });
}

TEST(Matmul, NDimTimesSharedWeight) {
  for_both_dtypes([](DType d) {
    expect_matches_naive(rnd({2, 3, 3, 4}, d, 21), rnd({4, 5}, d, 22), {2, 3, 3, 5});
    // Same with a non-contiguous left operand.
    expect_matches_naive(transpose(rnd({3, 2, 4}, d, 23), 0, 1), rnd({4, 5}, d, 24), {2, 3, 5});
  });
}

TEST(Matmul, TwoDTimesNDim) {
  for_both_dtypes([](DType d) {
    expect_matches_naive(rnd({3, 4}, d, 25), rnd({2, 4, 5}, d, 26), {2, 3, 5});
    expect_matches_naive(rnd({3, 4}, d, 27), rnd({2, 2, 4, 1}, d, 28), {2, 2, 3, 1});
  });
}

TEST(Matmul, TransposedViewsEitherOrBothSides) {
  for_both_dtypes([](DType d) {
    const Tensor at = transpose(rnd({4, 3}, d, 29), 0, 1);  // [3, 4], strides [1, 3]
    const Tensor bt = transpose(rnd({5, 4}, d, 30), 0, 1);  // [4, 5], strides [1, 4]
    const Tensor a = rnd({3, 4}, d, 31), b = rnd({4, 5}, d, 32);
    expect_matches_naive(at, b, {3, 5});
    expect_matches_naive(a, bt, {3, 5});
    expect_matches_naive(at, bt, {3, 5});
    // Batched: transpose the last two dims of each operand.
    const Tensor bat = transpose(rnd({2, 4, 3}, d, 33), -1, -2);  // [2, 3, 4]
    const Tensor bbt = transpose(rnd({2, 5, 4}, d, 34), -1, -2);  // [2, 4, 5]
    expect_matches_naive(bat, bbt, {2, 3, 5});
    // Linear layer: x @ W^T with W [out, in].
    expect_matches_naive(rnd({2, 3, 4}, d, 35), transpose(rnd({6, 4}, d, 36), 0, 1), {2, 3, 6});
  });
}

// The transposed operand is read through a BLAS transpose flag: at the peak,
// only the output has been allocated.
TEST(Matmul, TransposedOperandsAreNotCopied) {
  const Tensor a_store = rnd({40, 30}, DType::Float32, 37);
  const Tensor b_store = rnd({50, 40}, DType::Float32, 38);
  const Tensor at = transpose(a_store, 0, 1);  // [30, 40]
  const Tensor bt = transpose(b_store, 0, 1);  // [40, 50]
  const int64_t out_bytes = 30 * 50 * 4;
  Tensor y;
  EXPECT_EQ(peak_extra_bytes([&] { return matmul(at, bt); }, y), out_bytes);
  EXPECT_EQ(y.shape(), (Shape{30, 50}));
  EXPECT_EQ(peak_extra_bytes([&] { return matmul(at, a_store); }, y), 30 * 30 * 4);

  // Batched transposed operand and a shared transposed weight (x @ W^T).
  const Tensor batch_t = transpose(rnd({3, 40, 30}, DType::Float32, 39), -1, -2);  // [3, 30, 40]
  EXPECT_EQ(peak_extra_bytes([&] { return matmul(batch_t, bt); }, y), 3 * 30 * 50 * 4);
  const Tensor x = rnd({2, 7, 40}, DType::Float32, 40);
  const Tensor w = rnd({16, 40}, DType::Float32, 41);
  EXPECT_EQ(peak_extra_bytes([&] { return matmul(x, transpose(w, 0, 1)); }, y), 2 * 7 * 16 * 4);
  // Control: the measure does see a copy. A column-strided operand (stride 2 in
  // its last dim) cannot go to BLAS as is, so it is copied next to the output.
  const Tensor strided = slice(b_store, 1, 0, 40, 2);  // [50, 20], strides [40, 2]
  EXPECT_GE(peak_extra_bytes([&] { return matmul(strided, rnd({20, 10}, DType::Float32, 42)); }, y),
            50 * 10 * 4 + 50 * 20 * 4 + 20 * 10 * 4);
  // The copy-free result is still right.
  expect_matches_naive(x, transpose(w, 0, 1), {2, 7, 16});
}

TEST(Matmul, NarrowedAndStridedViews) {
  for_both_dtypes([](DType d) {
    // Columns 1..4 of a [3, 6]: rows have stride 6 (a BLAS leading dimension).
    const Tensor a = narrow(rnd({3, 6}, d, 42), 1, 1, 4);
    const Tensor b = narrow(rnd({7, 5}, d, 43), 0, 2, 4);  // rows 2..5 of a [7, 5]
    expect_matches_naive(a, b, {3, 5});
    // Every other column: stride 2 in the last dim.
    const Tensor s = slice(rnd({3, 8}, d, 44), 1, 0, 8, 2);  // [3, 4], strides [8, 2]
    expect_matches_naive(s, b, {3, 5});
    // A strided 1-D operand on either side.
    const Tensor v = slice(rnd({8}, d, 45), 0, 1, 8, 2);  // [4], stride 2
    expect_matches_naive(v, b, {5});
    expect_matches_naive(a, v, {3});
    // A row and a column picked out of matrices.
    expect_matches_naive(select(rnd({4, 3}, d, 46), 1, 2), b, {5});
  });
  // The row-strided narrow needs no copy either.
  const Tensor a = narrow(rnd({30, 60}, DType::Float32, 47), 1, 10, 40);  // [30, 40]
  const Tensor b = rnd({40, 20}, DType::Float32, 48);
  Tensor y;
  EXPECT_EQ(peak_extra_bytes([&] { return matmul(a, b); }, y), 30 * 20 * 4);
}

TEST(Matmul, ExpandedOperands) {
  for_both_dtypes([](DType d) {
    // A weight expanded over the batch (stride 0 on the batch dim).
    const Tensor w = expand(rnd({1, 4, 5}, d, 49), {3, 4, 5});
    expect_matches_naive(rnd({3, 2, 4}, d, 50), w, {3, 2, 5});
    // Stride 0 inside the matrix: every row of a is the same.
    const Tensor rows = expand(rnd({1, 4}, d, 51), {3, 4});
    const Tensor b = rnd({4, 2}, d, 52);
    expect_matches_naive(rows, b, {3, 2});
    // An expanded 1-D operand.
    expect_matches_naive(expand(scalar_tensor(2.0, d), {4}), b, {2});
  });
}

TEST(Matmul, ZeroSizeDims) {
  for_both_dtypes([](DType d) {
    // k = 0: an empty sum is zero.
    const Tensor k0 = matmul(zeros({3, 0}, d), zeros({0, 2}, d));
    EXPECT_EQ(k0.shape(), (Shape{3, 2}));
    EXPECT_EQ(k0.to_vector<double>(), std::vector<double>(6, 0.0));
    const Tensor k0b = matmul(ones({2, 3, 0}, d), ones({2, 0, 4}, d));
    EXPECT_EQ(k0b.shape(), (Shape{2, 3, 4}));
    EXPECT_EQ(k0b.to_vector<double>(), std::vector<double>(24, 0.0));
    EXPECT_EQ(matmul(zeros({0}, d), zeros({0}, d)).item(), 0.0);
    // m = 0, n = 0, batch = 0: empty results of the right shape.
    EXPECT_EQ(matmul(zeros({0, 4}, d), ones({4, 2}, d)).shape(), (Shape{0, 2}));
    EXPECT_EQ(matmul(ones({3, 4}, d), zeros({4, 0}, d)).shape(), (Shape{3, 0}));
    EXPECT_EQ(matmul(zeros({0, 3, 4}, d), ones({4, 2}, d)).shape(), (Shape{0, 3, 2}));
    EXPECT_EQ(matmul(zeros({2, 0, 4}, d), ones({2, 4, 2}, d)).shape(), (Shape{2, 0, 2}));
  });
}

TEST(Matmul, Float32AndFloat64AgreeOnSameInputs) {
  const Tensor a = rnd({5, 6}, DType::Float64, 53), b = rnd({6, 4}, DType::Float64, 54);
  const Tensor y64 = matmul(a, b);
  const Tensor y32 = matmul(to(a, DType::Float32), to(b, DType::Float32));
  EXPECT_EQ(y32.dtype(), DType::Float32);
  // Rounding a and b to float32 moves each term a_ik b_kj by at most 2u of
  // itself, and the float32 sum of K = 6 terms adds gamma(6): within
  // (gamma(6) + 2u) sum_k |a_ik| |b_kj| of the float64 product (u = 2^-24).
  const Tensor terms = matmul(abs(a), abs(b));
  const auto v64 = y64.to_vector<double>(), v32 = y32.to_vector<double>(), s = terms.to_vector<double>();
  const double bound = ropegrad::testing::gamma32(6) + 2 * ropegrad::testing::kUnitRoundoff32;
  for (size_t i = 0; i < v64.size(); ++i) EXPECT_LE(std::abs(v32[i] - v64[i]), bound * s[i]) << i;
}

// ---- bad input ------------------------------------------------------------------------

TEST(MatmulBadInput, ZeroDimOperand) {
  EXPECT_RG_ERROR(matmul(scalar_tensor(2.0), ones({3})), "matmul", "[]", "[3]");
  EXPECT_RG_ERROR(matmul(ones({3, 2}), scalar_tensor(2.0)), "matmul", "[3, 2]", "[]");
}

// The message shows the shapes the user passed ([3], not the internal row [1, 3]).
TEST(MatmulBadInput, InnerDimMismatch) {
  EXPECT_RG_ERROR(matmul(ones({2, 3}), ones({4, 5})), "matmul", "[2, 3]", "[4, 5]", "3 != 4");
  EXPECT_RG_ERROR(matmul(ones({3}), ones({4})), "matmul", "[3]", "[4]");
  EXPECT_RG_ERROR(matmul(ones({3}), ones({2, 4, 5})), "matmul", "[3]", "[2, 4, 5]");
  EXPECT_RG_ERROR(matmul(ones({2, 3, 4}), ones({5})), "matmul", "[2, 3, 4]", "[5]");
  EXPECT_RG_ERROR(matmul(ones({2, 3, 4}), ones({3, 5})), "matmul", "[2, 3, 4]", "[3, 5]");
}

TEST(MatmulBadInput, MixedDtypes) {
  EXPECT_RG_ERROR(matmul(ones({2, 3}), ones({3, 2}, DType::Float64)), "matmul", "float32",
                  "float64");
  EXPECT_RG_ERROR(matmul(ones({3}, DType::Float64), ones({3})), "matmul", "float64", "float32");
}

TEST(MatmulBadInput, Int64Operands) {
  const Tensor i = tensor_i64({1, 2, 3, 4}, {2, 2});
  EXPECT_RG_ERROR(matmul(i, i), "matmul", "int64");
  EXPECT_RG_ERROR(matmul(tensor_bool({true, false}), tensor_bool({true, true})), "matmul", "bool");
}

TEST(MatmulBadInput, UnbroadcastableBatchDims) {
  EXPECT_RG_ERROR(matmul(ones({2, 3, 4}), ones({3, 4, 5})), "matmul", "[2]", "[3]");
  EXPECT_RG_ERROR(matmul(ones({2, 2, 3, 4}), ones({3, 1, 4, 5})), "matmul", "[2, 2]", "[3, 1]");
}

// ---- OpenBLAS's own threads ------------------------------------------------------------

int threads_in_this_process() {
  int n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/task")) ++n;
  return n;
}

// A program that raised OpenBLAS's thread count (the benchmarks' raw sgemm
// reference does) gets one BLAS thread back at its next matmul, and
// OpenBLAS's idle workers, which would poll on the cores ropegrad's pool runs
// on, are stopped (kernels::use_single_threaded_blas).
TEST(MatmulBlasThreads, OneBlasThreadAndNoIdleWorkersAfterAMatmul) {
  if (dlsym(RTLD_DEFAULT, "blas_thread_shutdown_") == nullptr) {
    GTEST_SKIP() << "this OpenBLAS build has no worker pool to stop (not the pthreads build)";
  }
  const Tensor a = randn({64, 64}), b = randn({64, 64});
  const Tensor warm = matmul(a, b);  // ropegrad's own pool, if any, is up from here on
  openblas_set_num_threads(2);
  const int n = 512;
  std::vector<float> x(n * n, 1.0f), y(n * n, 1.0f), z(n * n);
  cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, 1.0f, x.data(), n, y.data(), n, 0.0f, z.data(), n);
  EXPECT_EQ(z[0], static_cast<float>(n));
  const int with_workers = threads_in_this_process();
  const Tensor c = matmul(a, b);
  EXPECT_EQ(openblas_get_num_threads(), 1);
  EXPECT_LT(threads_in_this_process(), with_workers) << "OpenBLAS's worker threads are still there";
  EXPECT_EQ(max_abs_diff(c, warm), 0.0);  // and the product is the same
}

// ---- the GEMM trace (GemmTrace, tensor/kernels.h; the benchmarks' GEMM floor) ----

TEST(GemmTrace, RecordsEachProductAsHandedToBlas) {
  const Tensor x = randn({2, 3, 4, 5}), w = randn({6, 5}), a = randn({3, 4, 5}), b = randn({3, 5, 2});
  std::vector<kernels::GemmCall> calls;
  {
    const kernels::GemmTrace trace;
    (void)matmul(x, transpose(w, 0, 1));  // (..., 5) @ (5, 6): the batch folds into 24 rows; w read transposed
    (void)matmul(a, b);                   // three independent (4, 5) @ (5, 2) products
    (void)matmul(transpose(b, 1, 2), transpose(a, 1, 2));  // both read transposed: (2, 5) @ (5, 4), three times
    calls = trace.calls();
  }
  ASSERT_EQ(calls.size(), 3u);
  const auto expect = [](const kernels::GemmCall& c, bool ta, bool tb, int64_t m, int64_t n, int64_t k,
                         int64_t count) {
    EXPECT_EQ(c.trans_a, ta);
    EXPECT_EQ(c.trans_b, tb);
    EXPECT_EQ(c.m, m);
    EXPECT_EQ(c.n, n);
    EXPECT_EQ(c.k, k);
    EXPECT_EQ(c.count, count);
    EXPECT_FALSE(c.accumulate);
    EXPECT_EQ(c.dtype, DType::Float32);
  };
  expect(calls[0], false, true, 24, 6, 5, 1);
  expect(calls[1], false, false, 4, 2, 5, 3);
  expect(calls[2], true, true, 2, 4, 5, 3);
}

TEST(GemmTrace, RecordsNothingOutsideATraceAndOneTraceAtATime) {
  const Tensor a = randn({4, 4});
  (void)matmul(a, a);  // before any trace
  const kernels::GemmTrace trace;
  EXPECT_TRUE(trace.calls().empty());
  (void)matmul(a, matmul(a, a));
  EXPECT_EQ(trace.calls().size(), 2u);
  expect_error_with([] { const kernels::GemmTrace second; }, {"GemmTrace", "one at a time"});
}
