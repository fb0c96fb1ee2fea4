// Mistake: masked_fill(x, mask, 0): the backward keeps g where the mask is true and zeroes it where it is false, where(mask, g, 0), the reverse of where(mask, 0, g)
#include "case.h"
namespace {
using namespace ropegrad;
struct MaskedZeroInverted : Function<MaskedZeroInverted> {
  static constexpr const char* name = "masked_zero_inverted";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& mask) {
    ctx.save_for_backward({mask});
    return masked_fill(x, mask, 0.0);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    return {where(ctx.saved_tensors()[0], g, zeros_like(g)), Tensor()};
  }
};
mistakes::Case make() {
  Tensor x = tensor(std::vector<double>{0.3, -1.1, 0.8, -0.4, 1.6, -0.9, 0.2, 1.2}, Shape{2, 4}, DType::Float64);
  Tensor mask = tensor(std::vector<double>{1, 0, 0, 1, 0, 1, 1, 0}, Shape{2, 4}, DType::Bool);
  x.requires_grad_();
  std::vector<Tensor> inputs{x, mask};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return MaskedZeroInverted::apply(in[0], in[1]); };
  return {"masked-fill-gradient-mask-inverted",
          "masked_fill(x, mask, 0): the backward keeps g where the mask is true and zeroes it where it is false, where(mask, g, 0), the reverse of where(mask, 0, g)",
          inputs,
          f,
          std::vector<std::string>{"the nonzero entries inverted", "inverted"}};
}
const mistakes::Register reg(make);
}  // namespace
