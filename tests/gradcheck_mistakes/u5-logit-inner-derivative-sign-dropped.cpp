// Mistake: logit y = log(x / (1 - x)) = log(x) - log(1 - x) elementwise on x (2, 3) in (0.2, 0.8): the backward differentiates log(1 - x) as 1 / (1 - x), forgetting the inner derivative -1, so dx = g (1 / x - 1 / (1 - x)) instead of dx = g (1 / x + 1 / (1 - x)) = g / (x (1 - x))
// Origin: written without sight of the checker (issue 27's fifth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Logit : Function<Logit> {
  static constexpr const char* name = "logit";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return log(x) - log(1.0 - x);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    return {g * (1.0 / x - 1.0 / (1.0 - x))};
  }
};
mistakes::Case make() {
  Generator gen(5116);
  Tensor x = rand({2, 3}, DType::Float64, &gen) * 0.6 + 0.2;
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u5-logit-inner-derivative-sign-dropped", "logit y = log(x / (1 - x)) = log(x) - log(1 - x) elementwise on x (2, 3) in (0.2, 0.8): the backward differentiates log(1 - x) as 1 / (1 - x), forgetting the inner derivative -1, so dx = g (1 / x - 1 / (1 - x)) instead of dx = g (1 / x + 1 / (1 - x)) = g / (x (1 - x))", inputs,
          [](const std::vector<Tensor>& in) { return Logit::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
