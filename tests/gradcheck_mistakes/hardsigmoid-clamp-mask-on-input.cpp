// Mistake: hard sigmoid y = clamp(x / 6 + 1/2, 0, 1) on x (2, 4): the backward tests the clamp's bounds on the input x instead of on the clamped value u = x / 6 + 1/2, dx = g / 6 where 0 <= x <= 1 and 0 elsewhere (correct: g / 6 where 0 <= u <= 1, i.e. -3 <= x <= 3, and 0 outside); here the entries near x = -2.3, -0.6, 1.7, 2.6 wrongly get 0
// Origin: written without sight of the checker (issue 27's fourth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct HardSigmoid : Function<HardSigmoid> {
  static constexpr const char* name = "hard_sigmoid";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    return clamp(x / 6.0 + 0.5, 0.0, 1.0);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const Tensor inside = logical_and(ge(x, 0.0), le(x, 1.0));
    const Tensor dx = where(inside, g / 6.0, zeros_like(g));
    return {dx};
  }
};
mistakes::Case make() {
  Generator gen(403);
  Tensor x = tensor(std::vector<double>{-4.1, -2.3, -0.6, 0.4, 0.8, 1.7, 2.6, 3.5}, {2, 4},
                    DType::Float64) +
             randn({2, 4}, DType::Float64, &gen) * 0.01;
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"hardsigmoid-clamp-mask-on-input",
          "hard sigmoid y = clamp(x / 6 + 1/2, 0, 1) on x (2, 4): the backward tests the clamp's bounds on the input x instead of on the clamped value u = x / 6 + 1/2, dx = g / 6 where 0 <= x <= 1 and 0 elsewhere (correct: g / 6 where 0 <= u <= 1, i.e. -3 <= x <= 3, and 0 outside); here the entries near x = -2.3, -0.6, 1.7, 2.6 wrongly get 0",
          inputs,
          [](const std::vector<Tensor>& in) { return HardSigmoid::apply(in[0]); },
          std::vector<std::string>{"the elementwise derivative is wrong", "the 4 wrong entries are each 0 x the numerical one"}};
}
const mistakes::Register reg(make);
}  // namespace
