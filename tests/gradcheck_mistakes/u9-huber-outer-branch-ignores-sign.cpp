// Mistake: Elementwise Huber function with delta = 1 on x of shape [3, 4]: y = 0.5 * x^2 where |x| <= 1 and |x| - 0.5 elsewhere. The backward gets the inner branch right (g * x) but gives the outer branch slope +1 everywhere, forgetting that |x| has slope -1 for x < -1, so entries below -1 get +g instead of -g. The correct rule is dx = g * x where |x| <= 1 and g * sign(x) elsewhere.
// Origin: written without sight of the checker (issue 27's ninth set; the half worked from)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct Huber : Function<Huber> {
  static constexpr const char* name = "huber_elementwise";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    Tensor inner = le(abs(x), 1.0);
    return where(inner, 0.5 * x * x, abs(x) - 0.5);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    Tensor inner = le(abs(x), 1.0);
    return {g * where(inner, x, ones_like(x))};
  }
};
mistakes::Case make() {
  Generator gen(9113);
  Tensor x = randn({3, 4}, DType::Float64, &gen) * 2.0 - 0.5;
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u9-huber-outer-branch-ignores-sign", "Elementwise Huber function with delta = 1 on x of shape [3, 4]: y = 0.5 * x^2 where |x| <= 1 and |x| - 0.5 elsewhere. The backward gets the inner branch right (g * x) but gives the outer branch slope +1 everywhere, forgetting that |x| has slope -1 for x < -1, so entries below -1 get +g instead of -g. The correct rule is dx = g * x where |x| <= 1 and g * sign(x) elsewhere.", inputs, [](const std::vector<Tensor>& in) { return Huber::apply(in[0]); },
          std::vector<std::string>{"only some entries wrong", "wrong only where input 0 is below a value between", "the sign flipped"}};
}
const mistakes::Register reg(make);
}  // namespace
