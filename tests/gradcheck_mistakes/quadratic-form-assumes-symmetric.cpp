// Mistake: quadratic form per row q_i = x_i^T A x_i with X (3, 4) and a non-symmetric A (4, 4): the backward for x uses 2 g_i A x_i, the formula for a symmetric A, instead of g_i (A + A^T) x_i (in rows: dX = 2 g[:, None] * X A^T instead of g[:, None] * X (A + A^T)); dA = sum_i g_i x_i x_i^T = X^T (g[:, None] * X) is right
// Origin: written without sight of the checker (issue 27's third set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct QuadForm : Function<QuadForm> {
  static constexpr const char* name = "quad_form";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& a) {
    ctx.save_for_backward({x, a});
    return sum(matmul(x, a) * x, {1});
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], a = saved[1];
    const Tensor gc = unsqueeze(g, 1);  // (3, 1)
    const Tensor dx = 2.0 * gc * matmul(x, transpose(a, 0, 1));
    const Tensor da = matmul(transpose(x, 0, 1), gc * x);
    return {dx, da};
  }
};
mistakes::Case make() {
  Generator gen(308);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  Tensor a = randn({4, 4}, DType::Float64, &gen);
  x.requires_grad_();
  a.requires_grad_();
  std::vector<Tensor> inputs{x, a};
  return {"quadratic-form-assumes-symmetric",
          "quadratic form per row q_i = x_i^T A x_i with X (3, 4) and a non-symmetric A (4, 4): the backward for x uses 2 g_i A x_i, the formula for a symmetric A, instead of g_i (A + A^T) x_i (in rows: dX = 2 g[:, None] * X A^T instead of g[:, None] * X (A + A^T)); dA = sum_i g_i x_i x_i^T = X^T (g[:, None] * X) is right",
          inputs,
          [](const std::vector<Tensor>& in) { return QuadForm::apply(in[0], in[1]); },
          std::vector<std::string>{},
          std::vector<std::string>{"observed: input 0's gradient is wrong at 12 of its 36 entries", "input 1's is right"}};
}
const mistakes::Register reg(make);
}  // namespace
