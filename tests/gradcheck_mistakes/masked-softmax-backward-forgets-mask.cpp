// Mistake: masked_fill(x, mask, -inf) then softmax: the backward recomputes the softmax from the saved x without re-applying the mask, p = softmax(x), and returns p * (g - sum(g * p)) instead of using the masked softmax's output
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct MaskedSoftmax : Function<MaskedSoftmax> {
  static constexpr const char* name = "masked_softmax";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& mask) {
    ctx.save_for_backward({x});
    return softmax(masked_fill(x, mask, -std::numeric_limits<double>::infinity()), -1);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const Tensor p = softmax(x, -1);
    return {p * (g - sum(g * p, {-1}, true)), Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(115);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"masked-softmax-backward-forgets-mask",
          "masked_fill(x, mask, -inf) then softmax: the backward recomputes the softmax from the saved x without re-applying the mask, p = softmax(x), and returns p * (g - sum(g * p)) instead of using the masked softmax's output",
          inputs,
          [](const std::vector<Tensor>& in) { return MaskedSoftmax::apply(in[0], tensor_bool({false, true, false, false, true,
                                                   false, false, false, true, false,
                                                   true, false, false, false, false},
                                                  {3, 5})); },
          std::vector<std::string>{},
          std::vector<std::string>{"observed: ", "all 41 nonzero ones of the numerical Jacobian", "no output depends on (input0[0, 1], input0[0, 4], input0[1, 3], input0[2, 0])"}};
}
const mistakes::Register reg(make);
}  // namespace
