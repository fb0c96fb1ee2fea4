// Mistake: Row softmax y = softmax(x, dim 1) on x of shape [3, 5]. The backward treats softmax as if it were elementwise and returns g * y, dropping the coupling term between entries of a row that comes from the shared normaliser. The correct rule is dx = y * (g - sum_j(g_j * y_j)), the row sum taken over dim 1 with keepdim.
// Origin: written without sight of the checker (issue 27's ninth set; the half worked from)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct RowSoftmax : Function<RowSoftmax> {
  static constexpr const char* name = "row_softmax";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = softmax(x, 1);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor y = ctx.saved_tensors()[0];
    return {g * y};
  }
};
mistakes::Case make() {
  Generator gen(9102);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u9-softmax-backward-missing-coupling-term", "Row softmax y = softmax(x, dim 1) on x of shape [3, 5]. The backward treats softmax as if it were elementwise and returns g * y, dropping the coupling term between entries of a row that comes from the shared normaliser. The correct rule is dx = y * (g - sum_j(g_j * y_j)), the row sum taken over dim 1 with keepdim.", inputs, [](const std::vector<Tensor>& in) { return RowSoftmax::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
