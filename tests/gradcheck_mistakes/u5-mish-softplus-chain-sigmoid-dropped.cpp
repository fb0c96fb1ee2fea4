// Mistake: Mish y = x tanh(softplus(x)) elementwise on x (2, 4): the product rule's second term stops at tanh's derivative and drops the inner derivative of softplus, sigmoid(x): dx = g (t + x (1 - t^2)) with t = tanh(softplus(x)), instead of dx = g (t + x (1 - t^2) sigmoid(x))
// Origin: written without sight of the checker (issue 27's fifth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Mish : Function<Mish> {
  static constexpr const char* name = "mish";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return x * tanh(softplus(x));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    Tensor t = tanh(softplus(x));
    return {g * (t + x * (1.0 - t * t))};
  }
};
mistakes::Case make() {
  Generator gen(5106);
  Tensor x = randn({2, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u5-mish-softplus-chain-sigmoid-dropped", "Mish y = x tanh(softplus(x)) elementwise on x (2, 4): the product rule's second term stops at tanh's derivative and drops the inner derivative of softplus, sigmoid(x): dx = g (t + x (1 - t^2)) with t = tanh(softplus(x)), instead of dx = g (t + x (1 - t^2) sigmoid(x))", inputs,
          [](const std::vector<Tensor>& in) { return Mish::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
