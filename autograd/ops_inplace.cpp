// In-place ops, for optimizers and initialisation. They write into x's
// memory and bump its version counter, so a backward that saved x notices.
// On a tensor that requires grad they are refused while grad mode is on:
// optimizers run them inside a NoGradGuard, as torch.optim does.
#include "autograd/ops.h"
#include "tensor/elementwise.h"

namespace ropegrad {

namespace {

void check_inplace(const Tensor& x, const char* op) {
  RG_CHECK(!(grad_enabled() && x.requires_grad()), op,
           "in-place operation on a tensor of shape {} that requires grad while grad mode is on; "
           "run it inside a NoGradGuard (as optimizers do) or use the out-of-place op",
           shape_str(x.shape()));
}

void check_broadcasts_to(const Tensor& operand, const Tensor& x, const char* op) {
  RG_CHECK(broadcast_shapes(x.shape(), operand.shape(), op) == x.shape(), op,
           "operand of shape {} does not broadcast to the destination's shape {}",
           shape_str(operand.shape()), shape_str(x.shape()));
}

// An in-place result must fit the destination's dtype (torch: "result type
// Float can't be cast to the desired output type Long").
void check_castable(const Tensor& x, DType operand, const char* op) {
  // Within a category (float64 into float32) the cast is allowed, as in torch.
  const auto category = [](DType d) { return d == DType::Bool ? 0 : (d == DType::Int64 ? 1 : 2); };
  RG_CHECK(category(promote_types(x.dtype(), operand)) <= category(x.dtype()), op,
           "result type {} can't be cast to the destination's dtype {}", dtype_name(promote_types(x.dtype(), operand)),
           dtype_name(x.dtype()));
}
void check_castable(const Tensor& x, Scalar s, const char* op) {
  check_castable(x, s.integral ? DType::Int64 : kDefaultFloat, op);
}

// x = f(x, inputs...) in one pass, inputs cast to x's dtype and broadcast to x.
// Scalars are cast to x's element type first (as torch does), so a float32
// update is float32 arithmetic, not a round trip through double.
template <typename F, typename... Inputs>
Tensor& update(Tensor& x, const char* op, F f, const Inputs&... inputs) {
  check_inplace(x, op);
  (check_broadcasts_to(inputs, x, op), ...);
  (check_castable(x, inputs.dtype(), op), ...);
  dispatch_numeric(x.dtype(), op, [&](auto tag) {
    using T = decltype(tag);
    kernels::map_into<T, T, decltype(sizeof(inputs), T{})...>(
        x, [&](T v, auto... rest) { return static_cast<T>(f(v, rest...)); },
        {x, kernels::to(inputs, x.dtype())...});
  });
  x.bump_version();
  return x;
}

}  // namespace

Tensor& add_(Tensor& x, const Tensor& other, Scalar alpha) {
  const double a = alpha.value;
  if (a == 1) return update(x, "add_", [](auto v, auto o) { return v + o; }, other);
  return update(x, "add_", [a](auto v, auto o) { return v + static_cast<decltype(v)>(a) * o; }, other);
}
Tensor& add_(Tensor& x, Scalar other) {
  check_castable(x, other, "add_");
  const double o = other.value;
  return update(x, "add_", [o](auto v) { return v + static_cast<decltype(v)>(o); });
}
Tensor& sub_(Tensor& x, const Tensor& other) {
  return update(x, "sub_", [](auto v, auto o) { return v - o; }, other);
}
Tensor& mul_(Tensor& x, const Tensor& other) {
  return update(x, "mul_", [](auto v, auto o) { return v * o; }, other);
}
Tensor& mul_(Tensor& x, Scalar other) {
  check_castable(x, other, "mul_");
  const double o = other.value;
  return update(x, "mul_", [o](auto v) { return v * static_cast<decltype(v)>(o); });
}
Tensor& div_(Tensor& x, const Tensor& other) {
  RG_CHECK(x.is_floating_point(), "div_", "true division needs a floating-point destination, got {}",
           dtype_name(x.dtype()));
  return update(x, "div_", [](auto v, auto o) { return v / o; }, other);
}
Tensor& div_(Tensor& x, Scalar other) {
  RG_CHECK(x.is_floating_point(), "div_", "true division needs a floating-point destination, got {}",
           dtype_name(x.dtype()));
  const double o = other.value;
  return update(x, "div_", [o](auto v) { return v / static_cast<decltype(v)>(o); });
}
Tensor& copy_(Tensor& x, const Tensor& src) {
  check_inplace(x, "copy_");
  kernels::copy_into(x, src);
  x.bump_version();
  return x;
}
Tensor& zero_(Tensor& x) {
  check_inplace(x, "zero_");
  return fill_(x, 0);
}
Tensor& fill_(Tensor& x, Scalar value) {
  check_inplace(x, "fill_");
  kernels::fill(x, value);
  x.bump_version();
  return x;
}
Tensor& clamp_(Tensor& x, std::optional<double> min, std::optional<double> max) {
  check_inplace(x, "clamp_");
  Tensor clamped = kernels::clamp(x, min, max);
  return copy_(x, clamped);
}
Tensor& addcmul_(Tensor& x, const Tensor& a, const Tensor& b, Scalar value) {
  check_castable(x, value, "addcmul_");
  const double s = value.value;
  return update(x, "addcmul_", [s](auto v, auto p, auto q) { return v + static_cast<decltype(v)>(s) * p * q; }, a, b);
}
Tensor& addcdiv_(Tensor& x, const Tensor& a, const Tensor& b, Scalar value) {
  check_castable(x, value, "addcdiv_");
  const double s = value.value;
  return update(x, "addcdiv_", [s](auto v, auto p, auto q) { return v + static_cast<decltype(v)>(s) * p / q; }, a, b);
}
Tensor& lerp_(Tensor& x, const Tensor& end, Scalar weight) {
  check_castable(x, weight, "lerp_");
  const double w = weight.value;
  return update(x, "lerp_", [w](auto v, auto e) { return v + static_cast<decltype(v)>(w) * (e - v); }, end);
}

}  // namespace ropegrad
