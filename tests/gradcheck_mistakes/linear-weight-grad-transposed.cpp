// Mistake: linear layer y = x W^T + b with x (2, 3), a square W (3, 3) and b (3): the weight gradient is written dW = x^T g, the transpose of the right dW = g^T x (the square W hides the shape error); dx = g W and db = sum over rows of g are right
// Origin: written without sight of the checker (issue 27's third set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct LinearCustom : Function<LinearCustom> {
  static constexpr const char* name = "linear_custom";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& w, const Tensor& b) {
    ctx.save_for_backward({x, w});
    return matmul(x, transpose(w, 0, 1)) + b;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], w = saved[1];
    const Tensor dx = matmul(g, w);
    const Tensor dw = matmul(transpose(x, 0, 1), g);
    const Tensor db = sum(g, {0});
    return {dx, dw, db};
  }
};
mistakes::Case make() {
  Generator gen(307);
  Tensor x = randn({2, 3}, DType::Float64, &gen);
  Tensor w = randn({3, 3}, DType::Float64, &gen);
  Tensor b = randn({3}, DType::Float64, &gen);
  x.requires_grad_();
  w.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{x, w, b};
  return {"linear-weight-grad-transposed",
          "linear layer y = x W^T + b with x (2, 3), a square W (3, 3) and b (3): the weight gradient is written dW = x^T g, the transpose of the right dW = g^T x (the square W hides the shape error); dx = g W and db = sum over rows of g are right",
          inputs,
          [](const std::vector<Tensor>& in) { return LinearCustom::apply(in[0], in[1], in[2]); },
          std::vector<std::string>{"a transposed gradient"}};
}
const mistakes::Register reg(make);
}  // namespace
