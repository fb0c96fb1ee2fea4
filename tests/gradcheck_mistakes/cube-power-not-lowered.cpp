// Mistake: x^3's backward applies the power rule without lowering the power, 3 x^3 instead of 3 x^2: one factor of x too many
#include "case.h"
namespace {
using namespace ropegrad;
struct Cube : Function<Cube> {
  static constexpr const char* name = "cube";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return x * x * x;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    return {g * 3.0 * x * x * x};
  }
};
mistakes::Case make() {
  Generator gen(210);
  Tensor x = randn({2, 3}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return Cube::apply(in[0]); };
  return {"cube-power-not-lowered",
          "x^3's backward applies the power rule without lowering the power, 3 x^3 instead of 3 x^2: one factor of x too many",
          inputs,
          f,
          std::vector<std::string>{"the elementwise derivative is wrong",
                                   "the analytical derivative is 3 x output[i] at every element, the numerical one "
                                   "3 x input0[i]^2"}};
}
const mistakes::Register reg(make);
}  // namespace
