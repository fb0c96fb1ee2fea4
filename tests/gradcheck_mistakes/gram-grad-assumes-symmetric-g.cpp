// Mistake: Gram matrix Y = A A^T with A (3, 4): the backward assumes the incoming gradient is symmetric because Y is, and returns dA = 2 G A instead of dA = (G + G^T) A (G need not be symmetric: a one-hot G is not)
// Origin: written without sight of the checker (issue 27's fourth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct Gram : Function<Gram> {
  static constexpr const char* name = "gram";
  static Tensor forward(FunctionCtx& ctx, const Tensor& a) {
    ctx.save_for_backward({a});
    return matmul(a, transpose(a, 0, 1));
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor a = ctx.saved_tensors()[0];
    const Tensor da = matmul(g, a) * 2.0;
    return {da};
  }
};
mistakes::Case make() {
  Generator gen(409);
  Tensor a = randn({3, 4}, DType::Float64, &gen);
  a.requires_grad_();
  std::vector<Tensor> inputs{a};
  return {"gram-grad-assumes-symmetric-g",
          "Gram matrix Y = A A^T with A (3, 4): the backward assumes the incoming gradient is symmetric because Y is, and returns dA = 2 G A instead of dA = (G + G^T) A (G need not be symmetric: a one-hot G is not)",
          inputs,
          [](const std::vector<Tensor>& in) { return Gram::apply(in[0]); },
          std::vector<std::string>{},
          std::vector<std::string>{"observed: input 0's gradient is wrong at 48 of its 108 entries"}};
}
const mistakes::Register reg(make);
}  // namespace
