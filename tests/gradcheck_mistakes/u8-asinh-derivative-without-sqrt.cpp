// Mistake: asinh y = log(x + sqrt(x^2 + 1)) elementwise on x (2, 3): the backward returns atan's derivative, dx = g / (1 + x^2), the square root of the denominator forgotten (correct: dx = g / sqrt(1 + x^2))
// Origin: written without sight of the checker (issue 27's eighth set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Asinh : Function<Asinh> {
  static constexpr const char* name = "asinh";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return log(x + sqrt(x * x + 1.0));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    return {g / (x * x + 1.0)};
  }
};
mistakes::Case make() {
  Generator gen(8101);
  Tensor x = randn({2, 3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u8-asinh-derivative-without-sqrt",
          "asinh y = log(x + sqrt(x^2 + 1)) elementwise on x (2, 3): the backward returns atan's derivative, dx = g / (1 + x^2), the square root of the denominator forgotten (correct: dx = g / sqrt(1 + x^2))",
          inputs, [](const std::vector<Tensor>& in) { return Asinh::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
