// Mistake: softmax's backward derived in two parts, the diagonal y_j (1 - y_j) g_j right and the coupling with the wrong sign: dx_j = y_j (1 - y_j) g_j + y_j sum_{i != j} g_i y_i (correct: - y_j sum_{i != j} g_i y_i)
#include "case.h"
namespace {
using namespace ropegrad;
struct SoftmaxCouplingSign : Function<SoftmaxCouplingSign> {
  static constexpr const char* name = "softmax_coupling_sign";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = softmax(x, -1);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor y = ctx.saved_tensors()[0];
    const Tensor others = sum(g * y, {-1}, true) - g * y;  // sum over i != j of g_i y_i
    return {y * (1.0 - y) * g + y * others};
  }
};
mistakes::Case make() {
  Generator gen(203);
  Tensor x = randn({2, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return SoftmaxCouplingSign::apply(in[0]); };
  return {"softmax-coupling-sign",
          "softmax's backward derived in two parts, the diagonal y_j (1 - y_j) g_j right and the coupling with the wrong sign: dx_j = y_j (1 - y_j) g_j + y_j sum_{i != j} g_i y_i (correct: - y_j sum_{i != j} g_i y_i)",
          inputs,
          f,
          std::vector<std::string>{"the diagonal right, the coupling wrong"}};
}
const mistakes::Register reg(make);
}  // namespace
