// Mistake: elementwise maximum(a, b) with b (4,) broadcast over the rows of a (3, 4): the backward sends g to the smaller operand (a gets g where a < b, b where b < a: the comparison inverted) instead of the larger one; b's share is summed over the rows as it should be
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Maximum : Function<Maximum> {
  static constexpr const char* name = "maximum_bcast";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a, const Tensor& b) {
    ctx.save_for_backward({a, b});
    return maximum(a, b);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor a = saved[0], b = saved[1];
    const Tensor zero = zeros_like(g);
    const Tensor da = where(lt(a, b), g, zero);
    const Tensor db = sum_to(where(gt(a, b), g, zero), b.shape());
    return {da, db};
  }
};
mistakes::Case make() {
  // No ties: every a differs from its b by at least 0.1.
  Tensor a = tensor(std::vector<double>{0.9, -1.1, 0.3, 1.7, -0.4, 0.6, -0.2, 0.1, 1.25, -1.6, 0.75, -0.5}, {3, 4},
                    DType::Float64);
  Tensor b = tensor(std::vector<double>{0.2, -0.5, 0.45, -0.3}, {4}, DType::Float64);
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{a, b};
  return {"maximum-grad-to-smaller",
          "elementwise maximum(a, b) with b (4,) broadcast over the rows of a (3, 4): the backward sends g to the smaller operand (a gets g where a < b, b where b < a: the comparison inverted) instead of the larger one; b's share is summed over the rows as it should be",
          inputs,
          [](const std::vector<Tensor>& in) { return Maximum::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
