// Mistake: zeroing the padding of sequences of lengths 4, 2, 3 (a mask fixed inside the function, not one of its inputs): the backward passes g through everywhere, also to the padded positions, which the output does not depend on (there the gradient must be 0)
#include "case.h"
namespace {
using namespace ropegrad;
struct ZeroPadding : Function<ZeroPadding> {
  static constexpr const char* name = "zero_padding";
  static Tensor forward(FunctionCtx&, const Tensor& x) {
    const Tensor padding = tensor(std::vector<double>{0, 0, 0, 0, 0, 0, 1, 1, 0, 0, 0, 1}, Shape{3, 4}, DType::Bool);
    return masked_fill(x, padding, 0.0);
  }
  static Grads backward(FunctionCtx&, const Tensor& g) { return {g}; }
};
mistakes::Case make() {
  Generator gen(303);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return ZeroPadding::apply(in[0]); };
  return {"padding-mask-gradient-reaches-padding",
          "zeroing the padding of sequences of lengths 4, 2, 3 (a mask fixed inside the function, not one of its inputs): the backward passes g through everywhere, also to the padded positions, which the output does not depend on (there the gradient must be 0)",
          inputs,
          f,
          std::vector<std::string>{"only some entries wrong", "no output depends on", "input0[1, 2], input0[1, 3], input0[2, 3]", "does not depend on the input"}};
}
const mistakes::Register reg(make);
}  // namespace
