// Mistake: SELU y = s x for x > 0 and s a (exp(x) - 1) otherwise, s = 1.0507, a = 1.6733, on x (2, 4): the backward returns g on the positive branch, forgetting that SELU scales it by s too (correct: dx = s g for x > 0); the negative branch dx = g s a exp(x) is right
// Origin: written without sight of the checker (issue 27's eighth set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
constexpr double kScale = 1.0507009873554805;
constexpr double kAlpha = 1.6732632423543772;
struct Selu : Function<Selu> {
  static constexpr const char* name = "selu";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return where(gt(x, 0.0), x * kScale, (exp(x) - 1.0) * (kScale * kAlpha));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    return {where(gt(x, 0.0), g, g * exp(x) * (kScale * kAlpha))};
  }
};
mistakes::Case make() {
  Tensor x = tensor({0.9, -1.3, 0.4, -0.25, 1.6, -0.7, -2.1, 0.55}, {2, 4}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u8-selu-positive-branch-scale-dropped",
          "SELU y = s x for x > 0 and s a (exp(x) - 1) otherwise, s = 1.0507, a = 1.6733, on x (2, 4): the backward returns g on the positive branch, forgetting that SELU scales it by s too (correct: dx = s g for x > 0); the negative branch dx = g s a exp(x) is right",
          inputs, [](const std::vector<Tensor>& in) { return Selu::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
