// Mistake: Mean squared error loss L = mean((p - t)^2) over all 12 elements, with both the prediction p and the target t of shape [3, 4] requiring gradients. The gradient of p, 2 * (p - t) / 12 * g, is right, but the learner returns the very same tensor for t, forgetting that t enters with a minus sign. The correct rule is dp = 2 * (p - t) / N * g and dt = -2 * (p - t) / N * g with N = 12.
// Origin: written without sight of the checker (issue 27's ninth set; the held-out half: judged once)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct MseLoss : Function<MseLoss> {
  static constexpr const char* name = "mse_loss_custom";
  static Tensor forward(FunctionCtx& ctx, const Tensor& p, const Tensor& t) {
    ctx.save_for_backward({p, t});
    Tensor d = p - t;
    return mean(d * d);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor p = ctx.saved_tensors()[0], t = ctx.saved_tensors()[1];
    const double n = static_cast<double>(p.numel());
    Tensor dp = g * (p - t) * (2.0 / n);
    return {dp, dp};
  }
};
mistakes::Case make() {
  Generator gen(9110);
  Tensor p = randn({3, 4}, DType::Float64, &gen), t = randn({3, 4}, DType::Float64, &gen);
  p.requires_grad_();
  t.requires_grad_();
  std::vector<Tensor> inputs{p, t};
  return {"u9-mse-target-grad-missing-minus", "Mean squared error loss L = mean((p - t)^2) over all 12 elements, with both the prediction p and the target t of shape [3, 4] requiring gradients. The gradient of p, 2 * (p - t) / 12 * g, is right, but the learner returns the very same tensor for t, forgetting that t enters with a minus sign. The correct rule is dp = 2 * (p - t) / N * g and dt = -2 * (p - t) / N * g with N = 12.", inputs, [](const std::vector<Tensor>& in) { return MseLoss::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
