// Mistake: sqrt's backward adds an eps the forward does not have, g / (2 sqrt(x + 1e-12)): at the exact zero x[1, 0] it returns a finite 5e5 where sqrt has no derivative (the difference quotient reads sqrt of a negative number: nan)
#include "case.h"
namespace {
using namespace ropegrad;
struct SqrtEps : Function<SqrtEps> {
  static constexpr const char* name = "sqrt_eps";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return sqrt(x);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    return {g * 0.5 * rsqrt(ctx.saved_tensors()[0] + 1e-12)};
  }
};
mistakes::Case make() {
  Tensor x = tensor(std::vector<double>{0.5, 1.2, 0.8, 0.0, 0.7, 1.5}, Shape{2, 3}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return SqrtEps::apply(in[0]); };
  return {"sqrt-backward-eps-at-zero",
          "sqrt's backward adds an eps the forward does not have, g / (2 sqrt(x + 1e-12)): at the exact zero x[1, 0] it returns a finite 5e5 where sqrt has no derivative (the difference quotient reads sqrt of a negative number: nan)",
          inputs,
          f,
          std::vector<std::string>{"a non-finite entry", "the numerical Jacobian is nan", "input0[1, 0] = 0"}};
}
const mistakes::Register reg(make);
}  // namespace
