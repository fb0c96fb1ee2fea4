// Mistake: the 3-norm of each row, y_i = (sum_j |x_ij|^3)^(1/3) with x (3, 4): the backward divides by the norm once, dx = g_i x |x| / y_i, where the chain rule through the power 1/3 gives y_i^(1 - 3) = 1 / y_i^2 (correct: dx = g_i x |x| / y_i^2)
// Origin: written without sight of the checker (issue 27's eighth set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct RowNorm3 : Function<RowNorm3> {
  static constexpr const char* name = "row_norm3";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor y = pow(sum(pow(abs(x), 3.0), {1}), 1.0 / 3.0);
    ctx.save_for_backward({x, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const Tensor x = s[0];
    const Tensor y = unsqueeze(s[1], 1);
    return {unsqueeze(g, 1) * x * abs(x) / y};
  }
};
mistakes::Case make() {
  Generator gen(8102);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u8-pnorm3-divides-by-norm-not-squared",
          "the 3-norm of each row, y_i = (sum_j |x_ij|^3)^(1/3) with x (3, 4): the backward divides by the norm once, dx = g_i x |x| / y_i, where the chain rule through the power 1/3 gives y_i^(1 - 3) = 1 / y_i^2 (correct: dx = g_i x |x| / y_i^2)",
          inputs, [](const std::vector<Tensor>& in) { return RowNorm3::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
