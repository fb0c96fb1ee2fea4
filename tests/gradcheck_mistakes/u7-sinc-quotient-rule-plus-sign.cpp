// Mistake: sinc-like y = sin(x) / x elementwise on x (2, 3) away from 0: the backward's quotient rule adds its second term, dx = g (cos(x) / x + sin(x) / x^2), where it must subtract it, dx = g (cos(x) / x - sin(x) / x^2)
// Origin: written without sight of the checker (issue 27's seventh set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct SinOverX : Function<SinOverX> {
  static constexpr const char* name = "sin_over_x";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return sin(x) / x;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    // quotient rule (u / v)' = u' / v - u v' / v^2, written with a plus
    Tensor dx = g * (cos(x) / x + sin(x) / (x * x));
    return {dx};
  }
};
mistakes::Case make() {
  Tensor x = tensor(std::vector<double>{0.7, -1.3, 2.1, -0.4, 1.6, -2.5}, {2, 3}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u7-sinc-quotient-rule-plus-sign",
          "sinc-like y = sin(x) / x elementwise on x (2, 3) away from 0: the backward's quotient rule adds its second term, dx = g (cos(x) / x + sin(x) / x^2), where it must subtract it, dx = g (cos(x) / x - sin(x) / x^2)",
          inputs, [](const std::vector<Tensor>& in) { return SinOverX::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
