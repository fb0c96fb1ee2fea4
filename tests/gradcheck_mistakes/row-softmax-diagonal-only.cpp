// Mistake: softmax's backward keeps only the diagonal of the Jacobian: it returns g * y * (1 - y) and drops the coupling term (correct: y * (g - sum(g * y)) per row)
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct RowSoftmax : Function<RowSoftmax> {
  static constexpr const char* name = "row_softmax";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = softmax(x, -1);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor y = ctx.saved_tensors()[0];
    // dy_j/dx_j = y_j (1 - y_j)
    return {g * y * (1.0 - y)};
  }
};
mistakes::Case make() {
  Generator gen(101);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"row-softmax-diagonal-only",
          "softmax's backward keeps only the diagonal of the Jacobian: it returns g * y * (1 - y) and drops the coupling term (correct: y * (g - sum(g * y)) per row)",
          inputs,
          [](const std::vector<Tensor>& in) { return RowSoftmax::apply(in[0]); },
          std::vector<std::string>{"a coupling term missing", "only the diagonal", "which is right"}};
}
const mistakes::Register reg(make);
}  // namespace
