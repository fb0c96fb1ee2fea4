// Mistake: masked_fill(x, mask, 0): the backward passes g through everywhere, also where the mask is true and the output does not depend on x (there the gradient must be 0)
#include "case.h"
namespace {
using namespace ropegrad;
struct MaskedZero : Function<MaskedZero> {
  static constexpr const char* name = "masked_zero";
  static Tensor forward(FunctionCtx&, const Tensor& x, const Tensor& mask) { return masked_fill(x, mask, 0.0); }
  static Grads backward(FunctionCtx&, const Tensor& g) { return {g, Tensor()}; }
};
mistakes::Case make() {
  Tensor x = tensor(std::vector<double>{0.3, -1.1, 0.8, -0.4, 1.6, -0.9, 0.2, 1.2}, Shape{2, 4}, DType::Float64);
  Tensor mask = tensor(std::vector<double>{1, 0, 0, 1, 0, 1, 1, 0}, Shape{2, 4}, DType::Bool);
  x.requires_grad_();
  std::vector<Tensor> inputs{x, mask};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return MaskedZero::apply(in[0], in[1]); };
  return {"masked-fill-gradient-ignores-mask",
          "masked_fill(x, mask, 0): the backward passes g through everywhere, also where the mask is true and the output does not depend on x (there the gradient must be 0)",
          inputs,
          f,
          std::vector<std::string>{"only some entries wrong", "where input 1", "is true"}};
}
const mistakes::Register reg(make);
}  // namespace
