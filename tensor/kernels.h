// Raw tensor operations: they compute, they never record an autograd graph.
//
// Users call the differentiable versions in autograd/ops.h; those call these
// kernels for the forward and, in their backward rules, for the gradients.
// Every kernel validates its inputs and throws ropegrad::Error on bad input.
#pragma once

#include <optional>
#include <utility>
#include <vector>

#include "tensor/tensor.h"

namespace ropegrad::kernels {

// ---- views (no copy) ----------------------------------------------------------
Tensor as_strided(const Tensor& t, Shape shape, Shape strides, int64_t offset);
// Same data, new shape; one dim may be -1. Fails when the strides cannot express it.
Tensor view(const Tensor& t, Shape shape);
// view() when possible, otherwise a contiguous copy.
Tensor reshape(const Tensor& t, Shape shape);
Tensor permute(const Tensor& t, const std::vector<int64_t>& dims);
Tensor transpose(const Tensor& t, int64_t dim0, int64_t dim1);
Tensor narrow(const Tensor& t, int64_t dim, int64_t start, int64_t length);
// Python-style slice t[..., start:end:step, ...] along one dim (negative bounds wrap).
Tensor slice(const Tensor& t, int64_t dim, int64_t start, int64_t end, int64_t step = 1);
Tensor select(const Tensor& t, int64_t dim, int64_t index);
Tensor expand(const Tensor& t, const Shape& shape);  // -1 keeps a size
Tensor squeeze(const Tensor& t);                     // every size-1 dim
Tensor squeeze(const Tensor& t, int64_t dim);
Tensor unsqueeze(const Tensor& t, int64_t dim);
Tensor flatten(const Tensor& t, int64_t start_dim = 0, int64_t end_dim = -1);
// Shape that `shape` (with at most one -1) takes for `numel` elements.
Shape infer_shape(Shape shape, int64_t numel, std::string_view op);

// ---- copies and casts -----------------------------------------------------------
Tensor contiguous(const Tensor& t);  // returns t itself when already contiguous
Tensor clone(const Tensor& t);       // always a fresh contiguous copy
Tensor to(const Tensor& t, DType dtype);  // t itself when the dtype already matches
// dst[...] = src broadcast to dst's shape, cast to dst's dtype.
void copy_into(const Tensor& dst, const Tensor& src);
void fill(const Tensor& dst, Scalar value);

// ---- elementwise -------------------------------------------------------------
enum class Unary { Neg, Exp, Log, Sqrt, Rsqrt, Abs, Sin, Cos, Tanh, Sigmoid, Relu, Silu, Softplus, Sign, LogicalNot };
enum class Binary { Add, Sub, Mul, Div, Pow, Maximum, Minimum, Eq, Ne, Lt, Le, Gt, Ge, LogicalAnd, LogicalOr };
const char* unary_name(Unary op);
const char* binary_name(Binary op);

Tensor unary(Unary op, const Tensor& a);
Tensor binary(Binary op, const Tensor& a, const Tensor& b);
Tensor binary(Binary op, const Tensor& a, Scalar b);
Tensor binary(Binary op, Scalar a, const Tensor& b);
// The dtype PyTorch gives `a op b` (comparisons aside: those give bool).
DType result_type(const Tensor& a, const Tensor& b);
DType result_type(const Tensor& a, Scalar b);
DType binary_result_dtype(Binary op, DType promoted);

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b);
Tensor clamp(const Tensor& t, std::optional<double> min, std::optional<double> max);
Tensor tril(const Tensor& t, int64_t diagonal = 0);
Tensor triu(const Tensor& t, int64_t diagonal = 0);

// In place: dst = dst op src (src broadcast to dst). Bumps dst's version.
void binary_(Binary op, const Tensor& dst, const Tensor& src);
void binary_(Binary op, const Tensor& dst, Scalar src);

// ---- reductions ------------------------------------------------------------------
enum class Reduce { Sum, Max, Min };
// Over `dims` (empty = all dims). Sum of bool/int64 gives int64.
Tensor reduce(Reduce op, const Tensor& t, const std::vector<int64_t>& dims, bool keepdim);
// Sums a broadcast gradient back to `shape` (the inverse of broadcasting).
Tensor sum_to(const Tensor& t, const Shape& shape);
// Values and int64 indices of the max (or min) along one dim.
// `op` names the caller in errors (default "max" / "min").
std::pair<Tensor, Tensor> max_along(const Tensor& t, int64_t dim, bool keepdim, bool is_max,
                                    const char* op = nullptr);
Tensor softmax(const Tensor& t, int64_t dim);
Tensor log_softmax(const Tensor& t, int64_t dim);
// grad_in = y * (g - sum(g * y)) along dim, for y = softmax(x).
Tensor softmax_backward(const Tensor& y, const Tensor& grad, int64_t dim);
// grad_in = g - exp(y) * sum(g) along dim, for y = log_softmax(x).
Tensor log_softmax_backward(const Tensor& y, const Tensor& grad, int64_t dim);
// Normalised dims: sorted, unique, in [0, ndim); empty input means all dims.
std::vector<int64_t> reduction_dims(const std::vector<int64_t>& dims, int64_t ndim,
                                    std::string_view op);
// The shape a reduction keeps (reduced dims set to 1) or drops.
Shape reduced_shape(const Shape& shape, const std::vector<int64_t>& dims, bool keepdim);

// ---- indexing -----------------------------------------------------------------------
// out = t.index_select(dim, index) with a 1-D int64 index; bounds are checked.
Tensor index_select(const Tensor& t, int64_t dim, const Tensor& index);
// A zero tensor of `shape` with src's slices added at `index` along dim
// (the backward of index_select; repeated ids accumulate).
Tensor index_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src);
// torch.gather: out[i][j][k] = t[i][index[i][j][k]][k] for dim = 1.
Tensor gather(const Tensor& t, int64_t dim, const Tensor& index);
// Zero tensor of `shape` with src scattered-added at index along dim.
Tensor scatter_add(const Shape& shape, int64_t dim, const Tensor& index, const Tensor& src);
Tensor cat(const std::vector<Tensor>& tensors, int64_t dim);

// ---- matmul ----------------------------------------------------------------------------
// torch.matmul semantics through cblas_sgemm / cblas_dgemm.
Tensor matmul(const Tensor& a, const Tensor& b);

// ropegrad splits GEMMs over its own thread pool (tensor/parallel.h), so each
// BLAS call runs on one thread. This sets OpenBLAS to one thread and stops
// its idle worker threads, if that has not been done (or was undone, as the
// benchmarks' raw sgemm reference does); cheap otherwise. Call it on the
// calling thread before a parallel region whose parts call BLAS: matmul and
// the tiled attention kernels do.
void use_single_threaded_blas();

// ---- GEMM trace: the products a program asked BLAS for --------------------
// One BLAS product: op(A) (m, k) times op(B) (k, n), `count` times (the
// batches of a batched matmul), written over C (beta = 0) or added to it
// (`accumulate`, beta = 1: the tiled attention kernels' running sums).
struct GemmCall {
  bool trans_a = false, trans_b = false;
  int64_t m = 0, n = 0, k = 0, count = 1;
  bool accumulate = false;
  DType dtype = DType::Float32;
};

// While a GemmTrace is alive, matmul and the tiled attention kernels record
// every product they hand to BLAS, from any thread, in the order they start.
// The benchmarks replay the list on raw BLAS to measure what a training step's
// products alone cost (bench/models_bench.cpp, gemm-floor). One trace at a
// time; recording costs one atomic load per product when none is alive.
class GemmTrace {
 public:
  GemmTrace();
  ~GemmTrace();
  GemmTrace(const GemmTrace&) = delete;
  GemmTrace& operator=(const GemmTrace&) = delete;
  std::vector<GemmCall> calls() const;
};
void record_gemm(const GemmCall& call);

}  // namespace ropegrad::kernels
