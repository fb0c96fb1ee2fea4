// Mistake: ELU with alpha = 1.5, y = x for x > 0 and 1.5 (exp(x) - 1) otherwise, x (2, 3): the backward writes the negative branch's derivative from the saved output as g y, forgetting the + alpha of alpha exp(x) = y + alpha (correct: dx = g (y + 1.5) for x <= 0, g for x > 0); the positive entries are right
// Origin: written without sight of the checker (issue 27's fourth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Elu : Function<Elu> {
  static constexpr const char* name = "elu_1_5";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const Tensor y = where(gt(x, 0.0), x, (exp(x) - 1.0) * 1.5);
    ctx.save_for_backward({x, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], y = saved[1];
    const Tensor dx = where(gt(x, 0.0), g, g * y);
    return {dx};
  }
};
mistakes::Case make() {
  Generator gen(402);
  Tensor x = tensor(std::vector<double>{-1.3, 0.7, -0.4, 1.1, -2.2, 0.35}, {2, 3}, DType::Float64) +
             randn({2, 3}, DType::Float64, &gen) * 0.02;
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"elu-negative-branch-alpha-dropped",
          "ELU with alpha = 1.5, y = x for x > 0 and 1.5 (exp(x) - 1) otherwise, x (2, 3): the backward writes the negative branch's derivative from the saved output as g y, forgetting the + alpha of alpha exp(x) = y + alpha (correct: dx = g (y + 1.5) for x <= 0, g for x > 0); the positive entries are right",
          inputs,
          [](const std::vector<Tensor>& in) { return Elu::apply(in[0]); },
          std::vector<std::string>{"only some entries wrong", "wrong only where input 0 is negative"}};
}
const mistakes::Register reg(make);
}  // namespace
