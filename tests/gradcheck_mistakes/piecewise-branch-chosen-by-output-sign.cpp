// Mistake: piecewise y = x^2 for x > 0 and sin(x) otherwise, x (2, 4): the backward picks the branch by the output's sign, y > 0, instead of the input's, x > 0, so the negative entries with sin(x) > 0 (those near x = -3.8, -3.4, -4.3, in (-2 pi, -pi)) get the square's 2 g x instead of g cos(x); elsewhere the two tests agree and the gradient is right
// Origin: written without sight of the checker (issue 27's fourth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Piecewise : Function<Piecewise> {
  static constexpr const char* name = "square_or_sin";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const Tensor y = where(gt(x, 0.0), x * x, sin(x));
    ctx.save_for_backward({x, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], y = saved[1];
    const Tensor dx = where(gt(y, 0.0), g * 2.0 * x, g * cos(x));
    return {dx};
  }
};
mistakes::Case make() {
  Generator gen(420);
  Tensor x = tensor(std::vector<double>{-3.8, 1.3, -0.7, 0.5, -3.4, -1.9, 2.1, -4.3}, {2, 4},
                    DType::Float64) +
             randn({2, 4}, DType::Float64, &gen) * 0.01;
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"piecewise-branch-chosen-by-output-sign",
          "piecewise y = x^2 for x > 0 and sin(x) otherwise, x (2, 4): the backward picks the branch by the output's sign, y > 0, instead of the input's, x > 0, so the negative entries with sin(x) > 0 (those near x = -3.8, -3.4, -4.3, in (-2 pi, -pi)) get the square's 2 g x instead of g cos(x); elsewhere the two tests agree and the gradient is right",
          inputs,
          [](const std::vector<Tensor>& in) { return Piecewise::apply(in[0]); },
          std::vector<std::string>{"only some entries wrong", "wrong only where input 0 is below a value between"}};
}
const mistakes::Register reg(make);
}  // namespace
