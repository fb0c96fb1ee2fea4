// Mistake: y = softmax(beta * x) per row, with a per-row inverse temperature beta (shape [3, 1], not learned): the backward is softmax's, y * (g - sum(g * y)), without the chain rule's factor beta, so row i's gradient is 1/beta_i of the truth
#include "case.h"
namespace {
using namespace ropegrad;
struct ScaledSoftmax : Function<ScaledSoftmax> {
  static constexpr const char* name = "scaled_softmax";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& beta) {
    Tensor y = softmax(x * beta, -1);
    ctx.save_for_backward({y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor y = ctx.saved_tensors()[0];
    return {y * (g - sum(g * y, {-1}, true)), Tensor()};
  }
};
mistakes::Case make() {
  Generator gen(219);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  Tensor beta = tensor(std::vector<double>{0.5, 2.0, 1.25}, Shape{3, 1}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x, beta};
  GradcheckFn f = [](const std::vector<Tensor>& in) { return ScaledSoftmax::apply(in[0], in[1]); };
  return {"scaled-softmax-forgets-temperature",
          "y = softmax(beta * x) per row, with a per-row inverse temperature beta (shape [3, 1], not learned): the backward is softmax's, y * (g - sum(g * y)), without the chain rule's factor beta, so row i's gradient is 1/beta_i of the truth",
          inputs,
          f,
          std::vector<std::string>{"off by a varying factor", "/ input1[", "leaves out"}};
}
const mistakes::Register reg(make);
}  // namespace
