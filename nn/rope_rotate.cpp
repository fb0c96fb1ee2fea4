// RoPE's rotation of pairs, real form, and the complex view of it (chapters 9 and 10;
// exercises ex09-rope and ex10-rope-complex).
// Declared in nn/functional.h.
#include "nn/functional.h"

#include "nn/forms.h"
#include "tensor/elementwise.h"
#include "tensor/exercise.h"

namespace ropegrad::nn {

using kernels::map_into;

// ---- RoPE rotation (chapter 9 derives it and its backward) ----------------------------------

namespace {
// (out_re, out_im) = (ar + i ai)(br + i sign bi), elementwise with
// broadcasting: the one kernel under both the RoPE rotation and complex_mul.
void complex_product_into(const Tensor& out_re, const Tensor& out_im, const Tensor& ar, const Tensor& ai,
                          const Tensor& br, const Tensor& bi, double sign, const char* op) {
  dispatch_floating(out_re.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    const T s = static_cast<T>(sign);
    // BEGIN EXERCISE ex09-rope
    map_into<T, T, T, T, T>(out_re, [s](T xr, T xi, T yr, T yi) { return xr * yr - xi * (s * yi); }, {ar, ai, br, bi});
    map_into<T, T, T, T, T>(out_im, [s](T xr, T xi, T yr, T yi) { return xr * (s * yi) + xi * yr; }, {ar, ai, br, bi});
    // END EXERCISE ex09-rope
  });
}

// The two halves of every pair, as strided views of the last dim.
std::pair<Tensor, Tensor> pair_views(const Tensor& t, RopePairing pairing) {
  const int64_t half = t.size(-1) / 2;
  if (pairing == RopePairing::HalfSplit) {
    return {kernels::narrow(t, -1, 0, half), kernels::narrow(t, -1, half, half)};
  }
  // BEGIN EXERCISE ex09-rope
  Shape pairs_shape = t.shape();
  pairs_shape.back() = half;
  pairs_shape.push_back(2);
  const Tensor pairs = kernels::view(t, pairs_shape);  // (..., dh/2, 2)
  return {kernels::select(pairs, -1, 0), kernels::select(pairs, -1, 1)};
  // END EXERCISE ex09-rope
}

}  // namespace

// out = rotate(x) by (cos, sin * sign): sign = -1 gives the inverse rotation.
// A rotation of the pair (a, b) is the complex product (a + i b)(cos + i sin).
Tensor plain::rotate(const Tensor& x, const Tensor& cos, const Tensor& sin, RopePairing pairing, double sign) {
  Tensor out = Tensor::empty(x.shape(), x.dtype());
  const auto [a, b] = pair_views(x, pairing);
  const auto [out_a, out_b] = pair_views(out, pairing);
  complex_product_into(out_a, out_b, a, b, cos, sin, sign, "rope");
  return out;
}

Tensor rope_rotate(const Tensor& x_in, const Tensor& cos, const Tensor& sin, RopePairing pairing) {
  RG_CHECK(x_in.dim() >= 2, "rope", "input must be (..., T, dh), got shape {}", shape_str(x_in.shape()));
  const int64_t dh = x_in.size(-1);
  RG_CHECK(dh % 2 == 0, "rope", "the head size must be even to form pairs, got {} (input shape {})", dh,
           shape_str(x_in.shape()));
  Shape half_shape = x_in.shape();
  half_shape.back() = dh / 2;
  RG_CHECK(cos.shape() == sin.shape(), "rope", "cos {} and sin {} tables differ in shape", shape_str(cos.shape()),
           shape_str(sin.shape()));
  RG_CHECK(broadcast_shapes(half_shape, cos.shape(), "rope") == half_shape, "rope",
           "cos/sin of shape {} do not broadcast to the pairs' shape {}", shape_str(cos.shape()), shape_str(half_shape));
  const Tensor x = kernels::contiguous(x_in);
  const Tensor c = kernels::to(cos, x.dtype()), s = kernels::to(sin, x.dtype());
  // BEGIN EXERCISE ex09-rope
  Tensor out = rotate(x, c, s, pairing, 1.0);
  if (needs_grad({&x_in})) {
    attach_node(out, "rope", {x_in},
                [sc = SavedTensor(c, "rope"), ss = SavedTensor(s, "rope"), pairing](const Tensor& g, const NeedsGrad&) -> Grads {
                  return {rotate(kernels::contiguous(g), sc.unpack(), ss.unpack(), pairing, -1.0)};
                });
  }
  return out;
  // END EXERCISE ex09-rope
}

// ---- complex -----------------------------------------------------------------------------------

Tensor view_as_complex(const Tensor& x) {
  RG_CHECK(x.dim() >= 1 && x.size(-1) % 2 == 0, "view_as_complex",
           "the last dim must have an even size to form (re, im) pairs, got shape {}", shape_str(x.shape()));
  // BEGIN EXERCISE ex10-rope-complex
  Shape shape = x.shape();
  shape.back() /= 2;
  shape.push_back(2);
  return view(x, shape);
  // END EXERCISE ex10-rope-complex
}

Tensor view_as_real(const Tensor& z) {
  RG_CHECK(z.dim() >= 1 && z.size(-1) == 2, "view_as_real", "expected a complex tensor (..., 2), got shape {}",
           shape_str(z.shape()));
  return flatten(z, -2, -1);
}

namespace {
// out = a * b (conj_b: a * conj(b)) over (..., 2) pairs, broadcasting.
Tensor complex_product(const Tensor& a, const Tensor& b, bool conj_b) {
  const Shape shape = broadcast_shapes(a.shape(), b.shape(), "complex_mul");
  Tensor out = Tensor::empty(shape, a.dtype());
  const Tensor are = kernels::select(a, -1, 0), aim = kernels::select(a, -1, 1);
  const Tensor bre = kernels::select(b, -1, 0), bim = kernels::select(b, -1, 1);
  const Tensor ore = kernels::select(out, -1, 0), oim = kernels::select(out, -1, 1);
  complex_product_into(ore, oim, are, aim, bre, bim, conj_b ? -1.0 : 1.0, "complex_mul");  // conj(b) = bre - i bim
  return out;
}
}  // namespace

Tensor complex_mul(const Tensor& a, const Tensor& b) {
  RG_CHECK(a.dim() >= 1 && a.size(-1) == 2 && b.dim() >= 1 && b.size(-1) == 2, "complex_mul",
           "operands must be complex (..., 2) pairs, got shapes {} and {}", shape_str(a.shape()), shape_str(b.shape()));
  RG_CHECK(a.dtype() == b.dtype(), "complex_mul", "dtypes differ: {} and {}", dtype_name(a.dtype()),
           dtype_name(b.dtype()));
  // BEGIN EXERCISE ex10-rope-complex
  Tensor out = complex_product(a, b, false);
  if (needs_grad({&a, &b})) {
    // d(ab) = b da + a db; for a real loss, grad_a = grad * conj(b), grad_b = grad * conj(a).
    attach_node(out, "complex_mul", {a, b},
                [sa = SavedTensor(a, "complex_mul"), sb = SavedTensor(b, "complex_mul"), shape_a = a.shape(),
                 shape_b = b.shape()](const Tensor& g, const NeedsGrad& needs) -> Grads {
                  Grads grads(2);
                  if (needs[0]) grads[0] = kernels::sum_to(complex_product(g, sb.unpack(), true), shape_a);
                  if (needs[1]) grads[1] = kernels::sum_to(complex_product(g, sa.unpack(), true), shape_b);
                  return grads;
                });
  }
  return out;
  // END EXERCISE ex10-rope-complex
}

}  // namespace ropegrad::nn
