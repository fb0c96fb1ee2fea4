// Elementwise ops: forward with a kernel, backward rule right below it.
//
// Broadcasting: an input of shape (3,) added to one of shape (4, 3) was
// used 4 times, so its gradient is the sum of the 4 rows: every binary
// rule ends with sum_to(grad, input_shape).
#include <cmath>

#include "autograd/ops.h"
#include "tensor/elementwise.h"
#include "tensor/exercise.h"
#include "tensor/fast_math.h"

namespace ropegrad {

using kernels::Binary;
using kernels::map_float;
using kernels::Unary;

namespace {

// A saved value, cast to the dtype of the incoming gradient (inputs of mixed
// dtypes meet gradients of the promoted dtype).
Tensor like(const SavedTensor& saved, const Tensor& grad) {
  return kernels::to(saved.unpack(), grad.dtype());
}

SavedTensor save_if(bool needed, const Tensor& t, const char* op) {
  return needed ? SavedTensor(t, op) : SavedTensor();
}

}  // namespace

// ---- add / sub: d(a+b) = da + db -------------------------------------------------------

Tensor add(const Tensor& a, const Tensor& b) {
  Tensor out = kernels::binary(Binary::Add, a, b);
  if (needs_grad({&a, &b})) {
    attach_node(out, "add", {a, b},
                [sa = a.shape(), sb = b.shape()](const Tensor& g, const NeedsGrad& needs) -> Grads {
                  return {needs[0] ? kernels::sum_to(g, sa) : Tensor(), needs[1] ? kernels::sum_to(g, sb) : Tensor()};
                });
  }
  return out;
}

Tensor sub(const Tensor& a, const Tensor& b) {
  Tensor out = kernels::binary(Binary::Sub, a, b);
  if (needs_grad({&a, &b})) {
    attach_node(out, "sub", {a, b},
                [sa = a.shape(), sb = b.shape()](const Tensor& g, const NeedsGrad& needs) -> Grads {
                  return {needs[0] ? kernels::sum_to(g, sa) : Tensor(),
                          needs[1] ? kernels::sum_to(kernels::unary(Unary::Neg, g), sb) : Tensor()};
                });
  }
  return out;
}

// ---- mul: d(a*b) = b da + a db -----------------------------------------------------------

Tensor mul(const Tensor& a, const Tensor& b) {
  Tensor out = kernels::binary(Binary::Mul, a, b);
  if (needs_grad({&a, &b})) {
    // Each input's gradient needs the *other* input: save only what is used.
    attach_node(out, "mul", {a, b},
                [sa = save_if(b.requires_grad(), a, "mul"), sb = save_if(a.requires_grad(), b, "mul"),
                 shape_a = a.shape(), shape_b = b.shape()](const Tensor& g, const NeedsGrad& needs) {
                  Grads grads(2);
                  // BEGIN EXERCISE ex02-mul-div
                  const auto times = [](auto x, auto y) { return x * y; };
                  if (needs[0]) grads[0] = kernels::sum_to(map_float(g, like(sb, g), times), shape_a);
                  if (needs[1]) grads[1] = kernels::sum_to(map_float(g, like(sa, g), times), shape_b);
                  // END EXERCISE ex02-mul-div
                  return grads;
                });
  }
  return out;
}

// ---- div: d(a/b) = da / b - a db / b^2 ----------------------------------------------------

Tensor div(const Tensor& a, const Tensor& b) {
  Tensor out = kernels::binary(Binary::Div, a, b);
  if (needs_grad({&a, &b})) {
    attach_node(out, "div", {a, b},
                [sa = save_if(b.requires_grad(), a, "div"), sb = SavedTensor(b, "div"),
                 shape_a = a.shape(), shape_b = b.shape()](const Tensor& g, const NeedsGrad& needs) {
                  Grads grads(2);
                  // BEGIN EXERCISE ex02-mul-div
                  const Tensor bv = like(sb, g);
                  if (needs[0]) grads[0] = kernels::sum_to(map_float(g, bv, [](auto x, auto y) { return x / y; }), shape_a);
                  if (needs[1]) {
                    grads[1] = kernels::sum_to(map_float(g, like(sa, g), bv,
                                                [](auto gg, auto x, auto y) { return -gg * x / (y * y); }),
                                      shape_b);
                  }
                  // END EXERCISE ex02-mul-div
                  return grads;
                });
  }
  return out;
}

// ---- with a scalar operand ------------------------------------------------------------------

Tensor add(const Tensor& a, Scalar b) {
  Tensor out = kernels::binary(Binary::Add, a, b);
  if (needs_grad({&a})) {
    attach_node(out, "add", {a}, [](const Tensor& g, const NeedsGrad&) -> Grads { return {g}; });
  }
  return out;
}

Tensor sub(const Tensor& a, Scalar b) {
  Scalar negated = b;
  negated.value = -b.value;
  return add(a, negated);
}

Tensor mul(const Tensor& a, Scalar b) {
  Tensor out = kernels::binary(Binary::Mul, a, b);
  if (needs_grad({&a})) {
    attach_node(out, "mul", {a}, [s = b.value](const Tensor& g, const NeedsGrad&) -> Grads {
      return {map_float(g, [s](auto x) { return x * s; })};
    });
  }
  return out;
}

Tensor div(const Tensor& a, Scalar b) {
  Tensor out = kernels::binary(Binary::Div, a, b);
  if (needs_grad({&a})) {
    attach_node(out, "div", {a}, [s = b.value](const Tensor& g, const NeedsGrad&) -> Grads {
      return {map_float(g, [s](auto x) { return x / s; })};
    });
  }
  return out;
}

Tensor rsub(const Tensor& b, Scalar a) {
  Tensor out = kernels::binary(Binary::Sub, a, b);
  if (needs_grad({&b})) {
    attach_node(out, "rsub", {b}, [](const Tensor& g, const NeedsGrad&) -> Grads {
      return {kernels::unary(Unary::Neg, g)};
    });
  }
  return out;
}

// d(s/b) = -s/b^2 db = -(out/b) db
Tensor rdiv(const Tensor& b, Scalar a) {
  Tensor out = kernels::binary(Binary::Div, a, b);
  if (needs_grad({&b})) {
    attach_node(out, "rdiv", {b},
                [sb = SavedTensor(b, "rdiv"), so = SavedTensor(out, "rdiv")](const Tensor& g, const NeedsGrad&) -> Grads {
                  return {map_float(g, so.unpack(), like(sb, g),
                                    [](auto gg, auto o, auto y) { return -gg * o / y; })};
                });
  }
  return out;
}

Tensor neg(const Tensor& x) {
  Tensor out = kernels::unary(Unary::Neg, x);
  if (needs_grad({&x})) {
    attach_node(out, "neg", {x}, [](const Tensor& g, const NeedsGrad&) -> Grads {
      return {kernels::unary(Unary::Neg, g)};
    });
  }
  return out;
}

// ---- pow ------------------------------------------------------------------------------------

// d(x^p) = p x^(p-1) dx
Tensor pow(const Tensor& x, Scalar exponent) {
  Tensor out = kernels::binary(Binary::Pow, x, exponent);
  if (needs_grad({&x})) {
    attach_node(out, "pow", {x}, [sx = SavedTensor(x, "pow"), p = exponent.value](const Tensor& g, const NeedsGrad&) -> Grads {
      // BEGIN EXERCISE ex02-pow
      if (p == 0) return {zeros_like(g)};
      return {map_float(g, like(sx, g), [p](auto gg, auto xv) {
        using T = decltype(xv);
        return gg * static_cast<T>(p) * std::pow(xv, static_cast<T>(p - 1));
      })};
      // END EXERCISE ex02-pow
    });
  }
  return out;
}

// d(x^y) = y x^(y-1) dx + x^y log(x) dy   (the dy term is 0 where x = 0 and y >= 0, as torch)
Tensor pow(const Tensor& x, const Tensor& exponent) {
  Tensor out = kernels::binary(Binary::Pow, x, exponent);
  if (needs_grad({&x, &exponent})) {
    attach_node(out, "pow", {x, exponent},
                [sx = SavedTensor(x, "pow"), sy = SavedTensor(exponent, "pow"), so = SavedTensor(out, "pow"),
                 shape_x = x.shape(), shape_y = exponent.shape()](const Tensor& g, const NeedsGrad& needs) -> Grads {
                  Grads grads(2);
                  // BEGIN EXERCISE ex02-pow
                  const Tensor xv = like(sx, g), yv = like(sy, g);
                  if (needs[0]) {
                    grads[0] = kernels::sum_to(map_float(g, xv, yv, [](auto gg, auto a, auto b) {
                                        return b == 0 ? decltype(a)(0) : gg * b * std::pow(a, b - 1);
                                      }),
                                      shape_x);
                  }
                  if (needs[1]) {
                    const Tensor gx_out = map_float(g, so.unpack(), [](auto gg, auto o) { return gg * o; });
                    grads[1] = kernels::sum_to(map_float(gx_out, xv, yv, [](auto go, auto a, auto b) {
                                        return (a == 0 && b >= 0) ? decltype(a)(0) : go * std::log(a);
                                      }),
                                      shape_y);
                  }
                  // END EXERCISE ex02-pow
                  return grads;
                });
  }
  return out;
}

// ---- unary math: each rule in terms of the saved input x or output y ------------------------

namespace {

// Records a unary op whose derivative is a function of (x, y): grad_in = g * dydx(x, y).
template <typename Deriv>
Tensor unary_op(Unary op, const Tensor& x, bool uses_x, bool uses_y, Deriv dydx) {
  Tensor out = kernels::unary(op, x);
  if (needs_grad({&x})) {
    const char* name = kernels::unary_name(op);
    attach_node(out, name, {x},
                [sx = save_if(uses_x, x, name), sy = save_if(uses_y, out, name), dydx](
                    const Tensor& g, const NeedsGrad&) -> Grads {
                  const Tensor xv = sx.defined() ? like(sx, g) : g;
                  const Tensor yv = sy.defined() ? sy.unpack() : g;
                  return {map_float(g, xv, yv, [dydx](auto gg, auto xx, auto yy) { return gg * dydx(xx, yy); })};
                });
  }
  return out;
}

template <typename T>
T sigmoid_value(T x) {
  return T(1) / (T(1) + fast_exp(-x));  // branch-free: vectorises
}

}  // namespace

// d exp(x) = exp(x) = y: save the output, not the input.
Tensor exp(const Tensor& x) {
  Tensor out = kernels::unary(Unary::Exp, x);
  if (needs_grad({&x})) {
    // BEGIN EXERCISE ex02-exp-log-tanh
    attach_node(out, "exp", {x}, [sy = SavedTensor(out, "exp")](const Tensor& g, const NeedsGrad&) -> Grads {
      return {map_float(g, sy.unpack(), [](auto gg, auto y) { return gg * y; })};
    });
    // END EXERCISE ex02-exp-log-tanh
  }
  return out;
}
// d log(x) = 1/x
Tensor log(const Tensor& x) {
  Tensor out = kernels::unary(Unary::Log, x);
  if (needs_grad({&x})) {
    // BEGIN EXERCISE ex02-exp-log-tanh
    attach_node(out, "log", {x}, [sx = SavedTensor(x, "log")](const Tensor& g, const NeedsGrad&) -> Grads {
      return {map_float(g, like(sx, g), [](auto gg, auto xx) { return gg / xx; })};
    });
    // END EXERCISE ex02-exp-log-tanh
  }
  return out;
}
// d sqrt(x) = 1 / (2 sqrt(x)) = 0.5 / y
Tensor sqrt(const Tensor& x) {
  return unary_op(Unary::Sqrt, x, false, true, [](auto, auto y) { return decltype(y)(0.5) / y; });
}
// d x^(-1/2) = -1/2 x^(-3/2) = -0.5 y^3
Tensor rsqrt(const Tensor& x) {
  return unary_op(Unary::Rsqrt, x, false, true, [](auto, auto y) { return decltype(y)(-0.5) * y * y * y; });
}
// d |x| = sign(x)  (0 at x = 0, as torch)
Tensor abs(const Tensor& x) {
  return unary_op(Unary::Abs, x, true, false,
                  [](auto xx, auto) { return static_cast<decltype(xx)>((0 < xx) - (xx < 0)); });
}
Tensor sin(const Tensor& x) {
  return unary_op(Unary::Sin, x, true, false, [](auto xx, auto) { return std::cos(xx); });
}
Tensor cos(const Tensor& x) {
  return unary_op(Unary::Cos, x, true, false, [](auto xx, auto) { return -std::sin(xx); });
}
// d tanh(x) = 1 - y^2, from the saved output y
Tensor tanh(const Tensor& x) {
  Tensor out = kernels::unary(Unary::Tanh, x);
  if (needs_grad({&x})) {
    // BEGIN EXERCISE ex02-exp-log-tanh
    attach_node(out, "tanh", {x}, [sy = SavedTensor(out, "tanh")](const Tensor& g, const NeedsGrad&) -> Grads {
      return {map_float(g, sy.unpack(), [](auto gg, auto y) { return gg * (1 - y * y); })};
    });
    // END EXERCISE ex02-exp-log-tanh
  }
  return out;
}
// d sigmoid(x) = y (1 - y)
Tensor sigmoid(const Tensor& x) {
  return unary_op(Unary::Sigmoid, x, false, true, [](auto, auto y) { return y * (1 - y); });
}
// d relu(x) = 1 where x > 0 (0 at the kink, as torch)
Tensor relu(const Tensor& x) {
  return unary_op(Unary::Relu, x, false, true,
                  [](auto, auto y) { return y > 0 ? decltype(y)(1) : decltype(y)(0); });
}
// silu(x) = x s(x);  d silu = s (1 + x (1 - s))
Tensor silu(const Tensor& x) {
  return unary_op(Unary::Silu, x, true, false, [](auto xx, auto) {
    const auto s = sigmoid_value(xx);
    return s * (1 + xx * (1 - s));
  });
}
// d log(1 + e^x) = sigmoid(x)  (1 above the threshold 20, where softplus is x)
Tensor softplus(const Tensor& x) {
  return unary_op(Unary::Softplus, x, true, false, [](auto xx, auto) {
    return xx > 20 ? decltype(xx)(1) : sigmoid_value(xx);
  });
}

// d clamp(x) = 1 where min <= x <= max
Tensor clamp(const Tensor& x, std::optional<double> min, std::optional<double> max) {
  Tensor out = kernels::clamp(x, min, max);
  if (needs_grad({&x})) {
    const double lo = min.value_or(-INFINITY), hi = max.value_or(INFINITY);
    attach_node(out, "clamp", {x}, [sx = SavedTensor(x, "clamp"), lo, hi](const Tensor& g, const NeedsGrad&) -> Grads {
      return {map_float(g, like(sx, g), [lo, hi](auto gg, auto xx) {
        return (xx >= lo && xx <= hi) ? gg : decltype(gg)(0);
      })};
    });
  }
  return out;
}

// ---- maximum / minimum: the larger input gets the gradient; ties split it ---------------------

namespace {
Tensor extremum(const Tensor& a, const Tensor& b, bool is_max) {
  const char* name = is_max ? "maximum" : "minimum";
  Tensor out = kernels::binary(is_max ? Binary::Maximum : Binary::Minimum, a, b);
  if (needs_grad({&a, &b})) {
    attach_node(out, name, {a, b},
                [sa = SavedTensor(a, name), sb = SavedTensor(b, name), shape_a = a.shape(),
                 shape_b = b.shape(), is_max](const Tensor& g, const NeedsGrad& needs) -> Grads {
                  const Tensor av = like(sa, g), bv = like(sb, g);
                  // share(x, y): 1 if x wins, 1/2 on a tie, 0 if it loses.
                  const auto share_of = [is_max](auto gg, auto x, auto y) {
                    using T = decltype(gg);
                    if (x == y) return gg * T(0.5);
                    return ((x > y) == is_max) ? gg : T(0);
                  };
                  Grads grads(2);
                  if (needs[0]) grads[0] = kernels::sum_to(map_float(g, av, bv, share_of), shape_a);
                  if (needs[1]) grads[1] = kernels::sum_to(map_float(g, bv, av, share_of), shape_b);
                  return grads;
                });
  }
  return out;
}
}  // namespace

Tensor maximum(const Tensor& a, const Tensor& b) { return extremum(a, b, true); }
Tensor minimum(const Tensor& a, const Tensor& b) { return extremum(a, b, false); }

// ---- where / masked_fill: the gradient follows the branch that was taken ----------------------

Tensor where(const Tensor& condition, const Tensor& a, const Tensor& b) {
  Tensor out = kernels::where(condition, a, b);
  if (needs_grad({&a, &b})) {
    attach_node(out, "where", {a, b},
                [sc = SavedTensor(condition, "where"), shape_a = a.shape(), shape_b = b.shape()](
                    const Tensor& g, const NeedsGrad& needs) -> Grads {
                  const Tensor c = sc.unpack();
                  const Tensor zero = zeros({}, g.dtype());
                  Grads grads(2);
                  if (needs[0]) grads[0] = kernels::sum_to(kernels::where(c, g, zero), shape_a);
                  if (needs[1]) grads[1] = kernels::sum_to(kernels::where(c, zero, g), shape_b);
                  return grads;
                });
  }
  return out;
}

Tensor masked_fill(const Tensor& x, const Tensor& mask, Scalar value) {
  RG_CHECK(mask.dtype() == DType::Bool, "masked_fill", "mask must be bool, got {}",
           dtype_name(mask.dtype()));
  RG_CHECK(broadcast_shapes(x.shape(), mask.shape(), "masked_fill") == x.shape(), "masked_fill",
           "mask of shape {} does not broadcast to the tensor's shape {}", shape_str(mask.shape()),
           shape_str(x.shape()));
  return where(mask, scalar_tensor(value, x.dtype()), x);
}

Tensor tril(const Tensor& x, int64_t diagonal) {
  Tensor out = kernels::tril(x, diagonal);
  if (needs_grad({&x})) {
    attach_node(out, "tril", {x}, [diagonal](const Tensor& g, const NeedsGrad&) -> Grads {
      return {kernels::tril(g, diagonal)};
    });
  }
  return out;
}

Tensor triu(const Tensor& x, int64_t diagonal) {
  Tensor out = kernels::triu(x, diagonal);
  if (needs_grad({&x})) {
    attach_node(out, "triu", {x}, [diagonal](const Tensor& g, const NeedsGrad&) -> Grads {
      return {kernels::triu(g, diagonal)};
    });
  }
  return out;
}

// ---- comparisons and logic: not differentiable ------------------------------------------------

Tensor eq(const Tensor& a, const Tensor& b) { return kernels::binary(Binary::Eq, a, b); }
Tensor ne(const Tensor& a, const Tensor& b) { return kernels::binary(Binary::Ne, a, b); }
Tensor lt(const Tensor& a, const Tensor& b) { return kernels::binary(Binary::Lt, a, b); }
Tensor le(const Tensor& a, const Tensor& b) { return kernels::binary(Binary::Le, a, b); }
Tensor gt(const Tensor& a, const Tensor& b) { return kernels::binary(Binary::Gt, a, b); }
Tensor ge(const Tensor& a, const Tensor& b) { return kernels::binary(Binary::Ge, a, b); }
Tensor eq(const Tensor& a, Scalar b) { return kernels::binary(Binary::Eq, a, b); }
Tensor ne(const Tensor& a, Scalar b) { return kernels::binary(Binary::Ne, a, b); }
Tensor lt(const Tensor& a, Scalar b) { return kernels::binary(Binary::Lt, a, b); }
Tensor le(const Tensor& a, Scalar b) { return kernels::binary(Binary::Le, a, b); }
Tensor gt(const Tensor& a, Scalar b) { return kernels::binary(Binary::Gt, a, b); }
Tensor ge(const Tensor& a, Scalar b) { return kernels::binary(Binary::Ge, a, b); }
Tensor logical_not(const Tensor& x) { return kernels::unary(Unary::LogicalNot, x); }
Tensor logical_and(const Tensor& a, const Tensor& b) { return kernels::binary(Binary::LogicalAnd, a, b); }
Tensor logical_or(const Tensor& a, const Tensor& b) { return kernels::binary(Binary::LogicalOr, a, b); }

// ---- operators ------------------------------------------------------------------------------

Tensor operator+(const Tensor& a, const Tensor& b) { return add(a, b); }
Tensor operator-(const Tensor& a, const Tensor& b) { return sub(a, b); }
Tensor operator*(const Tensor& a, const Tensor& b) { return mul(a, b); }
Tensor operator/(const Tensor& a, const Tensor& b) { return div(a, b); }
Tensor operator+(const Tensor& a, Scalar b) { return add(a, b); }
Tensor operator-(const Tensor& a, Scalar b) { return sub(a, b); }
Tensor operator*(const Tensor& a, Scalar b) { return mul(a, b); }
Tensor operator/(const Tensor& a, Scalar b) { return div(a, b); }
Tensor operator+(Scalar a, const Tensor& b) { return add(b, a); }
Tensor operator-(Scalar a, const Tensor& b) { return rsub(b, a); }
Tensor operator*(Scalar a, const Tensor& b) { return mul(b, a); }
Tensor operator/(Scalar a, const Tensor& b) { return rdiv(b, a); }
Tensor operator-(const Tensor& x) { return neg(x); }

}  // namespace ropegrad
