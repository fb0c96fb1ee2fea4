// The SwiGLU gate silu(a) * b, fused, with its backward (chapter 8; exercise ex08-swiglu).
// Declared in nn/functional.h.
#include "nn/functional.h"

#include <algorithm>
#include <utility>

#include "tensor/elementwise.h"
#include "tensor/exercise.h"
#include "tensor/fast_math.h"
#include "tensor/parallel.h"
#include "tensor/simd.h"

namespace ropegrad::nn {

using kernels::map_into;

// ---- SwiGLU gate ----------------------------------------------------------------------------------
//
// out = a s b with s = sigmoid(a); fusing the SiLU and the product saves a
// (B, T, d_ff) tensor in the forward and two passes in the backward.

namespace {
template <typename T>
[[gnu::always_inline]] inline T sigmoid_fast(T x) {
  return T(1) / (T(1) + fast_exp(-x));
}

// Both gradients of silu_mul in one pass, for the case a training step has:
// g, a and b of one shape and one float dtype, both gradients wanted. It
// computes exactly what the two maps of the simple backward below compute,
// element by element with the same expressions,
//   da = g b s (1 + a (1 - s)),   db = g a s,   s = sigmoid_fast(a),
// but reads g, a, b once and evaluates the sigmoid once instead of twice (the
// callgrind profile of a Base step in docs/appendix-c-performance.md: the two
// maps were the largest non-GEMM cost). tests/test_swiglu.cpp checks that
// the results equal the simple form's bit for bit. Float32 only, the dtype a
// model trains in: float64 (gradchecks, the course's checks) keeps the simple
// form, so the checks exercise exactly the maps a learner writes.
template <typename T>
std::pair<Tensor, Tensor> silu_mul_grads_one_pass_typed(const Tensor& g_in, const Tensor& a_in, const Tensor& b_in) {
  const Tensor g = kernels::contiguous(g_in), a = kernels::contiguous(a_in), b = kernels::contiguous(b_in);
  Tensor da = Tensor::empty(a.shape(), a.dtype()), db = Tensor::empty(a.shape(), a.dtype());
  const T* gp = g.data_ptr<T>();
  const T* ap = a.data_ptr<T>();
  const T* bp = b.data_ptr<T>();
  T* dap = da.data_ptr<T>();
  T* dbp = db.data_ptr<T>();
  const int64_t n = a.numel();
  const auto body = [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) {
      const T gg = gp[i], x = ap[i], y = bp[i];
      const T s = sigmoid_fast(x);
      dap[i] = gg * y * s * (1 + x * (1 - s));
      dbp[i] = gg * x * s;
    }
  };
  // Compiled for AVX2 too (tensor/simd.h: the same bits either way); a
  // small n runs inline in parallel_for.
  parallel_for(0, n, kernels::kParallelGrain,
               [&](int64_t lo, int64_t hi) { simd::run_best([&] { body(lo, hi); }); });
  return {da, db};
}
}  // namespace

bool silu_mul_backward_is_one_pass(const Tensor& g, const Tensor& a, const Tensor& b) {
  return !reference_forms_only() && a.shape() == b.shape() && g.shape() == a.shape() && a.dtype() == DType::Float32 &&
         b.dtype() == DType::Float32 && g.dtype() == DType::Float32;
}

std::pair<Tensor, Tensor> silu_mul_grads_one_pass(const Tensor& g, const Tensor& a, const Tensor& b) {
  RG_CHECK(silu_mul_backward_is_one_pass(g, a, b), "silu_mul backward",
           "the one-pass form needs float32 operands of one shape, got {}, {}, {}", shape_str(g.shape()),
           shape_str(a.shape()), shape_str(b.shape()));
  return silu_mul_grads_one_pass_typed<float>(g, a, b);
}

Tensor silu_mul(const Tensor& a, const Tensor& b) {
  RG_CHECK(a.dtype() == b.dtype() && a.is_floating_point(), "silu_mul", "operands must share a float dtype, got {} and {}",
           dtype_name(a.dtype()), dtype_name(b.dtype()));
  broadcast_shapes(a.shape(), b.shape(), "silu_mul");  // an error naming the op, before any work
  // BEGIN EXERCISE ex08-swiglu
  Tensor out = kernels::map_float(a, b, [](auto x, auto y) { return x * sigmoid_fast(x) * y; });
  if (needs_grad({&a, &b})) {
    attach_node(out, "silu_mul", {a, b},
                [sa = SavedTensor(a, "silu_mul"), sb = SavedTensor(b, "silu_mul"), shape_a = a.shape(),
                 shape_b = b.shape()](const Tensor& g, const NeedsGrad& needs) -> Grads {
                  const Tensor av = sa.unpack(), bv = sb.unpack();
                  Grads grads(2);
                  if (needs[0] && needs[1] && silu_mul_backward_is_one_pass(g, av, bv)) {
                    // Performance: both maps below in one pass (silu_mul_grads_one_pass, same values).
                    std::tie(grads[0], grads[1]) = silu_mul_grads_one_pass(g, av, bv);
                    return grads;
                  }
                  if (needs[0]) {
                    grads[0] = kernels::sum_to(kernels::map_float(g, av, bv, [](auto gg, auto x, auto y) {
                                                 const auto s = sigmoid_fast(x);
                                                 return gg * y * s * (1 + x * (1 - s));
                                               }),
                                               shape_a);
                  }
                  if (needs[1]) {
                    grads[1] = kernels::sum_to(
                        kernels::map_float(g, av, [](auto gg, auto x) { return gg * x * sigmoid_fast(x); }), shape_b);
                  }
                  return grads;
                });
  }
  return out;
  // END EXERCISE ex08-swiglu
}

}  // namespace ropegrad::nn
