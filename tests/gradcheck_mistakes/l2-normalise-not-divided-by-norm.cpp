// Mistake: y = x / ||x|| per row: the backward projects g, g - y (g . y), but forgets to divide by the row's norm ||x||; since ||y|| = 1, that rule is exactly the right derivative taken at x = y, the output (a scale-invariant function: the existing test at the output's values fits before any factor)
#include "case.h"
namespace {
using namespace ropegrad;
struct L2Normalise : Function<L2Normalise> {
  static constexpr const char* name = "l2_normalise";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = x / sqrt(sum(x * x, {-1}, true));
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor y = ctx.saved_tensors()[0];
    return {g - y * sum(g * y, {-1}, true)};
  }
};
mistakes::Case make() {
  Generator gen(211);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return L2Normalise::apply(in[0]); };
  return {"l2-normalise-not-divided-by-norm",
          "y = x / ||x|| per row: the backward projects g, g - y (g . y), but forgets to divide by the row's norm ||x||; since ||y|| = 1, that rule is exactly the right derivative taken at x = y, the output (a scale-invariant function: the existing test at the output's values fits before any factor)",
          inputs,
          f,
          std::vector<std::string>{"the derivative taken at the output where it needs the input"}};
}
const mistakes::Register reg(make);
}  // namespace
