// The SwiGLU gate silu(a) * b, fused, with its backward (chapter 8; exercise ex08-swiglu).
// Declared in nn/functional.h.
#include "nn/functional.h"

#include "tensor/elementwise.h"
#include "tensor/exercise.h"
#include "tensor/fast_math.h"

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
}  // namespace

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
