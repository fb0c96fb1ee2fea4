// Mistake: tanhshrink y = x - tanh(x) elementwise on x (2, 4): the backward saves the op's output y and writes the derivative 1 - (1 - tanh(x)^2) = tanh(x)^2 with it, dx = g y^2, where the square of tanh(x) belongs (correct: dx = g tanh(x)^2; y = x - tanh(x) is not tanh(x))
// Origin: written without sight of the checker (issue 27's seventh set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct TanhShrink : Function<TanhShrink> {
  static constexpr const char* name = "tanhshrink";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = x - tanh(x);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor y = ctx.saved_tensors()[0];
    // d/dx (x - tanh x) = 1 - (1 - t^2) = t^2, with the saved output in place of t
    Tensor dx = g * y * y;
    return {dx};
  }
};
mistakes::Case make() {
  Generator gen(7031);
  Tensor x = randn({2, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u7-tanhshrink-squares-saved-output",
          "tanhshrink y = x - tanh(x) elementwise on x (2, 4): the backward saves the op's output y and writes the derivative 1 - (1 - tanh(x)^2) = tanh(x)^2 with it, dx = g y^2, where the square of tanh(x) belongs (correct: dx = g tanh(x)^2; y = x - tanh(x) is not tanh(x))",
          inputs, [](const std::vector<Tensor>& in) { return TanhShrink::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
