// The SwiGLU gate with a vectorisable sigmoid and a one-pass backward (nn/fast/swiglu_gate_fast.h).
#include "nn/fast/swiglu_gate_fast.h"

#include "autograd/ops.h"
#include "tensor/elementwise.h"
#include "tensor/fast_math.h"
#include "tensor/parallel.h"
#include "tensor/simd.h"

namespace ropegrad::nn::fast {

namespace {
template <typename T>
[[gnu::always_inline]] inline T sigmoid_fast(T x) {
  return T(1) / (T(1) + fast_exp(-x));
}

// Both gradients in one pass: the same expressions, element by element, as
// the two maps in silu_mul's backward below, but g, a, b read once and the
// sigmoid evaluated once instead of twice (the two maps were the largest
// non-GEMM cost of a Base step in the profile of appendix C).
template <typename T>
std::pair<Tensor, Tensor> grads_one_pass(const Tensor& g_in, const Tensor& a_in, const Tensor& b_in) {
  const Tensor g = kernels::contiguous(g_in), a = kernels::contiguous(a_in), b = kernels::contiguous(b_in);
  Tensor da = Tensor::empty(a.shape(), a.dtype()), db = Tensor::empty(a.shape(), a.dtype());
  const T* gp = g.data_ptr<T>();
  const T* ap = a.data_ptr<T>();
  const T* bp = b.data_ptr<T>();
  T* dap = da.data_ptr<T>();
  T* dbp = db.data_ptr<T>();
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
  parallel_for(0, a.numel(), kernels::kParallelGrain,
               [&](int64_t lo, int64_t hi) { simd::run_best([&] { body(lo, hi); }); });
  return {da, db};
}
}  // namespace

bool silu_mul_backward_is_one_pass(const Tensor& g, const Tensor& a, const Tensor& b) {
  return a.shape() == b.shape() && g.shape() == a.shape() && a.dtype() == DType::Float32 &&
         b.dtype() == DType::Float32 && g.dtype() == DType::Float32;
}

std::pair<Tensor, Tensor> silu_mul_grads_one_pass(const Tensor& g, const Tensor& a, const Tensor& b) {
  RG_CHECK(silu_mul_backward_is_one_pass(g, a, b), "silu_mul backward",
           "the one-pass form needs float32 operands of one shape, got {}, {}, {}", shape_str(g.shape()),
           shape_str(a.shape()), shape_str(b.shape()));
  return grads_one_pass<float>(g, a, b);
}

Tensor silu_mul(const Tensor& a, const Tensor& b) {
  Tensor out = kernels::map_float(a, b, [](auto x, auto y) { return x * sigmoid_fast(x) * y; });
  if (needs_grad({&a, &b})) {
    attach_node(out, "silu_mul", {a, b},
                [sa = SavedTensor(a, "silu_mul"), sb = SavedTensor(b, "silu_mul"), shape_a = a.shape(),
                 shape_b = b.shape()](const Tensor& g, const NeedsGrad& needs) -> Grads {
                  const Tensor av = sa.unpack(), bv = sb.unpack();
                  Grads grads(2);
                  if (needs[0] && needs[1] && silu_mul_backward_is_one_pass(g, av, bv)) {
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
}

}  // namespace ropegrad::nn::fast
