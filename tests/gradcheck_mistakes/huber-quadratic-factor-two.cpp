// Mistake: Huber loss (delta 1) of r = p - t, elementwise: in the quadratic region |r| <= 1 the backward uses 2 r (the derivative of r^2: the 1/2 of 0.5 r^2 forgotten) instead of r; the linear region's sign(r) and dt = -dp are right
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Huber : Function<Huber> {
  static constexpr const char* name = "huber";
  static Tensor forward(FunctionCtx& ctx, const Tensor& p, const Tensor& t) {
    ctx.save_for_backward({p, t});
    const Tensor r = p - t;
    const Tensor ar = abs(r);
    return where(le(ar, 1.0), 0.5 * r * r, ar - 0.5);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor r = saved[0] - saved[1];
    const Tensor ar = abs(r);
    const Tensor dr = where(le(ar, 1.0), 2.0 * r, r / ar);
    const Tensor dp = g * dr;
    return {dp, neg(dp)};
  }
};
mistakes::Case make() {
  // r = p - t is at least 0.2 away from the kinks at +-1, in both regions.
  Tensor p = tensor(std::vector<double>{0.3, -1.7, 2.4, 0.05, -0.6, 1.1, -2.2, 0.9, 0.4, -0.35, 3.1, -0.8},
                    {3, 4}, DType::Float64);
  Tensor t = tensor(std::vector<double>{-0.2, 0.4, 0.1, 0.6, -1.3, -0.9, -0.5, 0.15, 1.9, 0.25, 0.7, -0.1},
                    {3, 4}, DType::Float64);
  p.requires_grad_();
  t.requires_grad_();
  std::vector<Tensor> inputs{p, t};
  return {"huber-quadratic-factor-two",
          "Huber loss (delta 1) of r = p - t, elementwise: in the quadratic region |r| <= 1 the backward uses 2 r (the derivative of r^2: the 1/2 of 0.5 r^2 forgotten) instead of r; the linear region's sign(r) and dt = -dp are right",
          inputs,
          [](const std::vector<Tensor>& in) { return Huber::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
