// The SwiGLU gate silu(a) * b, fused, with its backward (chapter 8; exercise ex08-swiglu).
// Declared in nn/functional.h.
#include "nn/functional.h"

#include <cmath>

#include "nn/forms.h"
#include "tensor/elementwise.h"
#include "tensor/exercise.h"

namespace ropegrad::nn {

// ---- SwiGLU gate ----------------------------------------------------------------------------------
//
// out = a s b with s = sigmoid(a); fusing the SiLU and the product saves a
// (B, T, d_ff) tensor in the forward and two passes in the backward.

Tensor silu_mul(const Tensor& a, const Tensor& b) {
  RG_CHECK(a.dtype() == b.dtype() && a.is_floating_point(), "silu_mul", "operands must share a float dtype, got {} and {}",
           dtype_name(a.dtype()), dtype_name(b.dtype()));
  broadcast_shapes(a.shape(), b.shape(), "silu_mul");  // an error naming the op, before any work
  return silu_mul_fused(a, b);
}

// The gate and its backward, on operands silu_mul has checked.
Tensor plain::silu_mul_fused(const Tensor& a, const Tensor& b) {
  // BEGIN EXERCISE ex08-swiglu
  const auto sigmoid = [](auto x) { return 1 / (1 + std::exp(-x)); };
  Tensor out = kernels::map_float(a, b, [sigmoid](auto x, auto y) { return x * sigmoid(x) * y; });
  if (needs_grad({&a, &b})) {
    attach_node(out, "silu_mul", {a, b},
                [sa = SavedTensor(a, "silu_mul"), sb = SavedTensor(b, "silu_mul"), shape_a = a.shape(),
                 shape_b = b.shape(), sigmoid](const Tensor& g, const NeedsGrad& needs) -> Grads {
                  const Tensor av = sa.unpack(), bv = sb.unpack();
                  Grads grads(2);
                  if (needs[0]) {  // d/da = b s (1 + a (1 - s)): SiLU's derivative times b
                    grads[0] = kernels::sum_to(kernels::map_float(g, av, bv, [sigmoid](auto gg, auto x, auto y) {
                                                 const auto s = sigmoid(x);
                                                 return gg * y * s * (1 + x * (1 - s));
                                               }),
                                               shape_a);
                  }
                  if (needs[1]) {  // d/db = a s
                    grads[1] = kernels::sum_to(
                        kernels::map_float(g, av, [sigmoid](auto gg, auto x) { return gg * x * sigmoid(x); }), shape_b);
                  }
                  return grads;
                });
  }
  return out;
  // END EXERCISE ex08-swiglu
}

}  // namespace ropegrad::nn
