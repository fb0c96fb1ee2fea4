// Mistake: y = x * exp(-x) elementwise: the product rule's second term loses the inner derivative -1 of exp(-x), dx = g * (exp(-x) + x exp(-x)) = g (1 + x) exp(-x), instead of g * (exp(-x) - x exp(-x)) = g (1 - x) exp(-x); the first term is right
// Origin: written without sight of the checker (issue 27's third set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct XExpNegX : Function<XExpNegX> {
  static constexpr const char* name = "x_exp_neg_x";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return x * exp(-x);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const Tensor e = exp(-x);
    return {g * (e + x * e)};
  }
};
mistakes::Case make() {
  Generator gen(315);
  Tensor x = randn({3, 2}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"x-exp-neg-x-inner-sign-dropped",
          "y = x * exp(-x) elementwise: the product rule's second term loses the inner derivative -1 of exp(-x), dx = g * (exp(-x) + x exp(-x)) = g (1 + x) exp(-x), instead of g * (exp(-x) - x exp(-x)) = g (1 - x) exp(-x); the first term is right",
          inputs,
          [](const std::vector<Tensor>& in) { return XExpNegX::apply(in[0]); },
          std::vector<std::string>{"off by an added term", "2 x output[i0, i1]"}};
}
const mistakes::Register reg(make);
}  // namespace
