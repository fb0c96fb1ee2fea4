// Mistake: SiLU y = x * sigmoid(x): the backward differentiates only the first factor, dx = g * s, and drops the term from the sigmoid's own dependence on x, g * x * s * (1 - s) (correct: dx = g * (s + x * s * (1 - s)), s = sigmoid(x))
// Origin: written without sight of the checker (issue 27's third set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct SiluCustom : Function<SiluCustom> {
  static constexpr const char* name = "silu_custom";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return x * sigmoid(x);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const Tensor s = sigmoid(x);
    return {g * s};
  }
};
mistakes::Case make() {
  Generator gen(301);
  Tensor x = randn({2, 3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"silu-missing-product-term",
          "SiLU y = x * sigmoid(x): the backward differentiates only the first factor, dx = g * s, and drops the term from the sigmoid's own dependence on x, g * x * s * (1 - s) (correct: dx = g * (s + x * s * (1 - s)), s = sigmoid(x))",
          inputs,
          [](const std::vector<Tensor>& in) { return SiluCustom::apply(in[0]); },
          std::vector<std::string>{"the elementwise derivative is wrong", "the analytical derivative is output[i] / input0[i] at every element"}};
}
const mistakes::Register reg(make);
}  // namespace
