// Mistake: softmax's backward keeps only the diagonal of its Jacobian, dx = g * y * (1 - y), and drops the coupling -y_i y_j between the entries of a row (correct: dx = y * (g - sum(g * y)))
#include "case.h"
namespace {
using namespace ropegrad;
struct SoftmaxDiagonal : Function<SoftmaxDiagonal> {
  static constexpr const char* name = "softmax_diagonal";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = softmax(x, -1);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor y = ctx.saved_tensors()[0];
    return {g * y * (1.0 - y)};
  }
};
mistakes::Case make() {
  Generator gen(201);
  Tensor x = randn({2, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return SoftmaxDiagonal::apply(in[0]); };
  return {"softmax-diagonal-only",
          "softmax's backward keeps only the diagonal of its Jacobian, dx = g * y * (1 - y), and drops the coupling -y_i y_j between the entries of a row (correct: dx = y * (g - sum(g * y)))",
          inputs,
          f,
          std::vector<std::string>{"a coupling term missing", "the diagonal", "every input of its row"}};
}
const mistakes::Register reg(make);
}  // namespace
