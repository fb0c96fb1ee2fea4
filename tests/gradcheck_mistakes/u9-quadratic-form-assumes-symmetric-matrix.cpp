// Mistake: Batched quadratic form y_b = x_b^T M x_b for rows x_b of X of shape [3, 4] and a general (non-symmetric) matrix M of shape [4, 4], output shape [3], computed as sum((X @ M) * X, dim 1). The gradient of M (X^T diag(g) X) is right, but the gradient of X uses the textbook formula 2 M x that only holds for symmetric M: it returns 2 * g[:, None] * (X @ M), i.e. 2 M^T x per row. The correct rule is dX = g[:, None] * (X @ M + X @ M^T), i.e. (M + M^T) x per row.
// Origin: written without sight of the checker (issue 27's ninth set; the held-out half: judged once)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct QuadForm : Function<QuadForm> {
  static constexpr const char* name = "quad_form";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& m) {
    ctx.save_for_backward({x, m});
    return sum(matmul(x, m) * x, {1});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0], m = ctx.saved_tensors()[1];
    Tensor gc = unsqueeze(g, 1);  // [B, 1]
    Tensor dx = 2.0 * gc * matmul(x, m);
    Tensor dm = matmul(transpose(x * gc, 0, 1), x);
    return {dx, dm};
  }
};
mistakes::Case make() {
  Generator gen(9105);
  Tensor x = randn({3, 4}, DType::Float64, &gen), m = randn({4, 4}, DType::Float64, &gen);
  x.requires_grad_();
  m.requires_grad_();
  std::vector<Tensor> inputs{x, m};
  return {"u9-quadratic-form-assumes-symmetric-matrix", "Batched quadratic form y_b = x_b^T M x_b for rows x_b of X of shape [3, 4] and a general (non-symmetric) matrix M of shape [4, 4], output shape [3], computed as sum((X @ M) * X, dim 1). The gradient of M (X^T diag(g) X) is right, but the gradient of X uses the textbook formula 2 M x that only holds for symmetric M: it returns 2 * g[:, None] * (X @ M), i.e. 2 M^T x per row. The correct rule is dX = g[:, None] * (X @ M + X @ M^T), i.e. (M + M^T) x per row.", inputs, [](const std::vector<Tensor>& in) { return QuadForm::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
