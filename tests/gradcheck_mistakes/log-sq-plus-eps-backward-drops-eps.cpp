// Mistake: y = log(x^2 + 0.5) elementwise on x (2, 3): the backward drops the 0.5 the forward adds for stability, dx = g 2 x / x^2 = 2 g / x, instead of dx = 2 g x / (x^2 + 0.5)
// Origin: written without sight of the checker (issue 27's fourth set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct LogSqEps : Function<LogSqEps> {
  static constexpr const char* name = "log_sq_eps";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return log(x * x + 0.5);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const Tensor dx = g * 2.0 * x / (x * x);
    return {dx};
  }
};
mistakes::Case make() {
  Generator gen(404);
  Tensor x = tensor(std::vector<double>{0.6, -1.2, 0.9, -0.4, 1.5, -2.0}, {2, 3}, DType::Float64) +
             randn({2, 3}, DType::Float64, &gen) * 0.02;
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"log-sq-plus-eps-backward-drops-eps",
          "y = log(x^2 + 0.5) elementwise on x (2, 3): the backward drops the 0.5 the forward adds for stability, dx = g 2 x / x^2 = 2 g / x, instead of dx = 2 g x / (x^2 + 0.5)",
          inputs,
          [](const std::vector<Tensor>& in) { return LogSqEps::apply(in[0]); },
          std::vector<std::string>{"the elementwise derivative is wrong", "the analytical derivative is 2 / input0[i] at every element"}};
}
const mistakes::Register reg(make);
}  // namespace
