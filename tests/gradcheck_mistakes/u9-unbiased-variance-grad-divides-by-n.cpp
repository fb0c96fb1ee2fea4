// Mistake: Unbiased (Bessel-corrected) variance of each row over dim 1, v = sum((x - mean)^2) / (n - 1), on x of shape [3, 5] (n = 5), output shape [3]. The forward divides by n - 1, but the backward copies the population-variance formula and returns dx = g * 2 * (x - mean) / n. The correct rule is dx = g[:, None] * 2 * (x - mean) / (n - 1).
// Origin: written without sight of the checker (issue 27's ninth set; the half worked from)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct VarUnbiased : Function<VarUnbiased> {
  static constexpr const char* name = "var_unbiased";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const double n = static_cast<double>(x.size(1));
    Tensor d = x - mean(x, {1}, true);
    ctx.save_for_backward({d});
    return sum(d * d, {1}) / (n - 1.0);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor d = ctx.saved_tensors()[0];
    const double n = static_cast<double>(d.size(1));
    return {unsqueeze(g, 1) * d * (2.0 / n)};
  }
};
mistakes::Case make() {
  Generator gen(9117);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u9-unbiased-variance-grad-divides-by-n", "Unbiased (Bessel-corrected) variance of each row over dim 1, v = sum((x - mean)^2) / (n - 1), on x of shape [3, 5] (n = 5), output shape [3]. The forward divides by n - 1, but the backward copies the population-variance formula and returns dx = g * 2 * (x - mean) / n. The correct rule is dx = g[:, None] * 2 * (x - mean) / (n - 1).", inputs, [](const std::vector<Tensor>& in) { return VarUnbiased::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
