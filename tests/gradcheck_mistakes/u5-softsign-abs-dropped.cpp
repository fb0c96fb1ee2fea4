// Mistake: softsign y = x / (1 + |x|) elementwise on x (2, 3): the backward writes the derivative as 1 / (1 + x)^2, the quotient rule done as if |x| were x, dx = g / (1 + x)^2, right for the positive entries but wrong for the negative ones (correct: dx = g / (1 + |x|)^2 everywhere)
// Origin: written without sight of the checker (issue 27's fifth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Softsign : Function<Softsign> {
  static constexpr const char* name = "softsign";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return x / (abs(x) + 1.0);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    Tensor d = x + 1.0;
    return {g / (d * d)};
  }
};
mistakes::Case make() {
  Generator gen(5105);
  Tensor x = tensor({-2.5, 0.6, -0.4, 1.8, -1.7, 0.3}, {2, 3}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u5-softsign-abs-dropped", "softsign y = x / (1 + |x|) elementwise on x (2, 3): the backward writes the derivative as 1 / (1 + x)^2, the quotient rule done as if |x| were x, dx = g / (1 + x)^2, right for the positive entries but wrong for the negative ones (correct: dx = g / (1 + |x|)^2 everywhere)", inputs,
          [](const std::vector<Tensor>& in) { return Softsign::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
