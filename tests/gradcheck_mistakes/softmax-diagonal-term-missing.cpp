// Mistake: softmax's backward sums the coupling over i != j but keeps y_j g_j for the diagonal, forgetting its -y_j^2 g_j: dx_j = y_j g_j - y_j sum_{i != j} g_i y_i (correct: y_j g_j - y_j sum_i g_i y_i); the coupling is right, the diagonal wrong
#include "case.h"
namespace {
using namespace ropegrad;
struct SoftmaxDiagonalTerm : Function<SoftmaxDiagonalTerm> {
  static constexpr const char* name = "softmax_diagonal_term";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = softmax(x, -1);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor y = ctx.saved_tensors()[0];
    const Tensor others = sum(g * y, {-1}, true) - g * y;  // sum over i != j of g_i y_i
    return {y * g - y * others};
  }
};
mistakes::Case make() {
  Generator gen(204);
  Tensor x = randn({2, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return SoftmaxDiagonalTerm::apply(in[0]); };
  return {"softmax-diagonal-term-missing",
          "softmax's backward sums the coupling over i != j but keeps y_j g_j for the diagonal, forgetting its -y_j^2 g_j: dx_j = y_j g_j - y_j sum_{i != j} g_i y_i (correct: y_j g_j - y_j sum_i g_i y_i); the coupling is right, the diagonal wrong",
          inputs,
          f,
          std::vector<std::string>{"the coupling right, the diagonal wrong"}};
}
const mistakes::Register reg(make);
}  // namespace
