// Mistake: a linear layer with a low-rank adapter, y = x W + s x A B with s = alpha / r = 1 / 2, x (2, 4), W (4, 3), A (4, 2), B (2, 3): the gradient for A forgets the adapter's scale, dA = x^T G B^T, where dA = s x^T G B^T belongs (twice the truth); dx = G W^T + s G B^T A^T, dW = x^T G and dB = s (x A)^T G are right
// Origin: written without sight of the checker (issue 27's eighth set; the half worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
constexpr double kS = 0.5;
struct LoraLinear : Function<LoraLinear> {
  static constexpr const char* name = "lora_linear";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& w, const Tensor& a,
                        const Tensor& b) {
    ctx.save_for_backward({x, w, a, b});
    return matmul(x, w) + matmul(matmul(x, a), b) * kS;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const Tensor &x = s[0], &w = s[1], &a = s[2], &b = s[3];
    const Tensor xt = transpose(x, 0, 1);
    Tensor dx = matmul(g, transpose(w, 0, 1)) + matmul(matmul(g, transpose(b, 0, 1)), transpose(a, 0, 1)) * kS;
    Tensor dw = matmul(xt, g);
    Tensor da = matmul(matmul(xt, g), transpose(b, 0, 1));
    Tensor db = matmul(transpose(matmul(x, a), 0, 1), g) * kS;
    return {dx, dw, da, db};
  }
};
mistakes::Case make() {
  Generator gen(8107);
  Tensor x = randn({2, 4}, DType::Float64, &gen);
  Tensor w = randn({4, 3}, DType::Float64, &gen);
  Tensor a = randn({4, 2}, DType::Float64, &gen);
  Tensor b = randn({2, 3}, DType::Float64, &gen);
  x.requires_grad_();
  w.requires_grad_();
  a.requires_grad_();
  b.requires_grad_();
  std::vector<Tensor> inputs{x, w, a, b};
  return {"u8-lora-down-proj-grad-scale-dropped",
          "a linear layer with a low-rank adapter, y = x W + s x A B with s = alpha / r = 1 / 2, x (2, 4), W (4, 3), A (4, 2), B (2, 3): the gradient for A forgets the adapter's scale, dA = x^T G B^T, where dA = s x^T G B^T belongs (twice the truth); dx = G W^T + s G B^T A^T, dW = x^T G and dB = s (x A)^T G are right",
          inputs, [](const std::vector<Tensor>& in) { return LoraLinear::apply(in[0], in[1], in[2], in[3]); }};
}
const mistakes::Register reg(make);
}  // namespace
