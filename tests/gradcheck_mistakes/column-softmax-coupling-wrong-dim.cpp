// Mistake: softmax over dim 0 (each column of x (3, 4) normalised): the backward's coupling sum runs over dim 1, the rows' entries, dx = y * (g - sum(g * y, dim 1, keepdim)), instead of over the dim the softmax normalised, dx = y * (g - sum(g * y, dim 0, keepdim))
// Origin: written without sight of the checker (issue 27's third set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct ColSoftmax : Function<ColSoftmax> {
  static constexpr const char* name = "col_softmax";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const Tensor y = softmax(x, 0);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor y = ctx.saved_tensors()[0];
    return {y * (g - sum(g * y, {1}, true))};
  }
};
mistakes::Case make() {
  Generator gen(317);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"column-softmax-coupling-wrong-dim",
          "softmax over dim 0 (each column of x (3, 4) normalised): the backward's coupling sum runs over dim 1, the rows' entries, dx = y * (g - sum(g * y, dim 1, keepdim)), instead of over the dim the softmax normalised, dx = y * (g - sum(g * y, dim 0, keepdim))",
          inputs,
          [](const std::vector<Tensor>& in) { return ColSoftmax::apply(in[0]); },
          std::vector<std::string>{"the coupling in the wrong place", "every input of its row along dim 0"}};
}
const mistakes::Register reg(make);
}  // namespace
