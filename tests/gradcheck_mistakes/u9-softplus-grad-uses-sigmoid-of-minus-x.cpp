// Mistake: Softplus y = log(1 + exp(x)) elementwise on x of shape [3, 4]. The backward returns g * sigmoid(-x), mixing up the derivative of softplus(x) with that of softplus(-x) (a sign slip inside the sigmoid), so gradients are sigmoid(-x) = 1 - sigmoid(x) instead of sigmoid(x). The correct rule is dx = g * sigmoid(x) = g * exp(x) / (1 + exp(x)).
// Origin: written without sight of the checker (issue 27's ninth set; the held-out half: judged once)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct Softplus : Function<Softplus> {
  static constexpr const char* name = "softplus_custom";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return log(exp(x) + 1.0);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    return {g * sigmoid(-x)};
  }
};
mistakes::Case make() {
  Generator gen(9101);
  Tensor x = randn({3, 4}, DType::Float64, &gen) * 2.0;
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u9-softplus-grad-uses-sigmoid-of-minus-x", "Softplus y = log(1 + exp(x)) elementwise on x of shape [3, 4]. The backward returns g * sigmoid(-x), mixing up the derivative of softplus(x) with that of softplus(-x) (a sign slip inside the sigmoid), so gradients are sigmoid(-x) = 1 - sigmoid(x) instead of sigmoid(x). The correct rule is dx = g * sigmoid(x) = g * exp(x) / (1 + exp(x)).", inputs, [](const std::vector<Tensor>& in) { return Softplus::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
