// Mistake: lower-triangular mixing y = tril(W) x with W (3, 3) and x (3, 4): the weight's gradient is the plain matmul rule dW = g x^T without the mask, so the entries above the diagonal, which the output does not depend on, get a gradient (correct: dW = tril(g x^T)); dx = tril(W)^T g is right
// Origin: written without sight of the checker (issue 27's fifth set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct TrilMatmul : Function<TrilMatmul> {
  static constexpr const char* name = "tril_matmul";
  static Tensor forward(FunctionCtx& ctx, const Tensor& w, const Tensor& x) {
    Tensor wl = tril(w);
    ctx.save_for_backward({wl, x});
    return matmul(wl, x);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const std::vector<Tensor> saved = ctx.saved_tensors();
    const Tensor& wl = saved[0];
    const Tensor& x = saved[1];
    Tensor dw = matmul(g, transpose(x, 0, 1));
    Tensor dx = matmul(transpose(wl, 0, 1), g);
    return {dw, dx};
  }
};
mistakes::Case make() {
  Generator gen(5117);
  Tensor w = randn({3, 3}, DType::Float64, &gen);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  w.requires_grad_();
  x.requires_grad_();
  std::vector<Tensor> inputs{w, x};
  return {"u5-tril-matmul-weight-grad-not-masked", "lower-triangular mixing y = tril(W) x with W (3, 3) and x (3, 4): the weight's gradient is the plain matmul rule dW = g x^T without the mask, so the entries above the diagonal, which the output does not depend on, get a gradient (correct: dW = tril(g x^T)); dx = tril(W)^T g is right", inputs,
          [](const std::vector<Tensor>& in) { return TrilMatmul::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
