// Mistake: softmax's backward weights the coupling sum by y^2 instead of y: dx = y * (g - sum(g * y * y)) where y * (g - sum(g * y)) belongs; every entry of a row is off by y_j y_i (1 - y_i): each g_i is weighted by y_i times its right weight y_i
#include "case.h"
namespace {
using namespace ropegrad;
struct SoftmaxWeights : Function<SoftmaxWeights> {
  static constexpr const char* name = "softmax_weights";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = softmax(x, -1);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor y = ctx.saved_tensors()[0];
    return {y * (g - sum(g * y * y, {-1}, true))};
  }
};
mistakes::Case make() {
  Generator gen(217);
  Tensor x = randn({2, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return SoftmaxWeights::apply(in[0]); };
  return {"softmax-coupling-weights-squared",
          "softmax's backward weights the coupling sum by y^2 instead of y: dx = y * (g - sum(g * y * y)) where y * (g - sum(g * y)) belongs; every entry of a row is off by y_j y_i (1 - y_i): each g_i is weighted by y_i times its right weight y_i",
          inputs,
          f,
          std::vector<std::string>{"the coupling term scaled", "one c per output element", "c = output[i0, i1]"}};
}
const mistakes::Register reg(make);
}  // namespace
