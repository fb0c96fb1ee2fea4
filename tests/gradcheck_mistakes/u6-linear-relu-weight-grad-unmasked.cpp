// Mistake: a fused linear + ReLU, y = relu(x W) with x (3, 4) and W (4, 2): the backward applies the ReLU mask m = [x W > 0] to the input's gradient only, and the weight's gradient uses the unmasked g, dW = x^T g, instead of dW = x^T (g * m); dx = (g * m) W^T is right (here the pre-activations (1, 0) and (2, 1) are negative)
// Origin: written without sight of the checker (issue 27's sixth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct LinearRelu : Function<LinearRelu> {
  static constexpr const char* name = "linear_relu";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& w) {
    Tensor pre = matmul(x, w);
    ctx.save_for_backward({x, w, pre});
    return relu(pre);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const Tensor &x = s[0], &w = s[1], &pre = s[2];
    Tensor gm = where(gt(pre, 0.0), g, zeros_like(g));
    Tensor dx = matmul(gm, transpose(w, 0, 1));
    Tensor dw = matmul(transpose(x, 0, 1), g);  // the mask is missing: x^T (g * m) belongs
    return {dx, dw};
  }
};
mistakes::Case make() {
  const std::vector<double> xs{0.5, 1.2, -0.3, 0.8, -0.6, 0.4, 1.1, -0.2, 0.9, -1.0, 0.3, 0.7};
  const std::vector<double> ws{0.7, -0.5, 0.2, 0.9, -0.4, 0.6, 0.5, -0.3};
  Tensor x = tensor(xs, {3, 4}, DType::Float64);
  Tensor w = tensor(ws, {4, 2}, DType::Float64);
  x.requires_grad_();
  w.requires_grad_();
  std::vector<Tensor> inputs{x, w};
  return {"u6-linear-relu-weight-grad-unmasked",
          "Mistake: a fused linear + ReLU, y = relu(x W) with x (3, 4) and W (4, 2): the backward applies the ReLU "
          "mask m = [x W > 0] to the input's gradient only, and the weight's gradient uses the unmasked g, dW = x^T g, "
          "instead of dW = x^T (g * m); dx = (g * m) W^T is right (here the pre-activations (1, 0) and (2, 1) are "
          "negative)",
          inputs, [](const std::vector<Tensor>& in) { return LinearRelu::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
