// Mistake: ELU with alpha = 1 on x of shape [4, 3]: y = x for x > 0 and alpha * (exp(x) - 1) for x <= 0. The backward is right for x > 0 (g) but for the negative branch it evaluates the derivative alpha * exp(.) at the saved output y instead of at the input x, returning g * alpha * exp(y). The correct rule is dx = g where x > 0 and g * alpha * exp(x) (equivalently g * (y + alpha)) where x <= 0.
// Origin: written without sight of the checker (issue 27's ninth set; the half worked from)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct Elu : Function<Elu> {
  static constexpr const char* name = "elu_custom";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const double alpha = 1.0;
    Tensor y = where(gt(x, 0.0), x, alpha * (exp(x) - 1.0));
    ctx.save_for_backward({x, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const double alpha = 1.0;
    const Tensor x = ctx.saved_tensors()[0], y = ctx.saved_tensors()[1];
    return {g * where(gt(x, 0.0), ones_like(x), alpha * exp(y))};
  }
};
mistakes::Case make() {
  Generator gen(9114);
  Tensor x = randn({4, 3}, DType::Float64, &gen) * 1.5;
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u9-elu-derivative-evaluated-at-output", "ELU with alpha = 1 on x of shape [4, 3]: y = x for x > 0 and alpha * (exp(x) - 1) for x <= 0. The backward is right for x > 0 (g) but for the negative branch it evaluates the derivative alpha * exp(.) at the saved output y instead of at the input x, returning g * alpha * exp(y). The correct rule is dx = g where x > 0 and g * alpha * exp(x) (equivalently g * (y + alpha)) where x <= 0.", inputs, [](const std::vector<Tensor>& in) { return Elu::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
