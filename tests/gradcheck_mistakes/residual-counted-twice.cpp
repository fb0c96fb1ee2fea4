// Mistake: y = x + tanh(x): the backward adds the residual's identity gradient g twice, g + g + g (1 - tanh(x)^2)
#include "case.h"
namespace {
using namespace ropegrad;
struct Residual : Function<Residual> {
  static constexpr const char* name = "residual_tanh";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor t = tanh(x);
    ctx.save_for_backward({t});
    return x + t;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor t = ctx.saved_tensors()[0];
    return {g + g + g * (1.0 - t * t)};
  }
};
mistakes::Case make() {
  Generator gen(212);
  Tensor x = randn({2, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return Residual::apply(in[0]); };
  return {"residual-counted-twice",
          "y = x + tanh(x): the backward adds the residual's identity gradient g twice, g + g + g (1 - tanh(x)^2)",
          inputs,
          f,
          std::vector<std::string>{"off by an added term", "the diagonal", "c = 1", "residual"}};
}
const mistakes::Register reg(make);
}  // namespace
