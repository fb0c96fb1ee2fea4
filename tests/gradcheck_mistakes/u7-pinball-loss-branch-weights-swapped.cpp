// Mistake: quantile (pinball) loss with tau = 0.3, r = t - p, L = tau r for r >= 0 and (tau - 1) r for r < 0, elementwise on predictions p (2, 4) with fixed targets t (not checked): the backward gives each branch the other's weight, dp = -(1 - tau) g = -0.7 g where p under-predicts (r > 0) and tau g = 0.3 g where it over-predicts (r < 0), instead of dp = -tau g = -0.3 g for r > 0 and (1 - tau) g = 0.7 g for r < 0
// Origin: written without sight of the checker (issue 27's seventh set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
constexpr double kTau = 0.3;
const std::vector<double> kTarget{1.1, -0.6, -0.5, 1.2, 0.4, 0.2, -1.5, 0.9};
struct Pinball : Function<Pinball> {
  static constexpr const char* name = "pinball_loss";
  static Tensor forward(FunctionCtx& ctx, const Tensor& p) {
    ctx.save_for_backward({p});
    std::vector<double> pv = p.to_vector<double>();
    std::vector<double> lv(pv.size());
    for (size_t i = 0; i < pv.size(); ++i) {
      const double r = kTarget[i] - pv[i];
      lv[i] = r >= 0 ? kTau * r : (kTau - 1.0) * r;
    }
    return tensor(lv, p.shape(), DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor p = ctx.saved_tensors()[0];
    std::vector<double> pv = p.to_vector<double>();
    std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dp(pv.size());
    for (size_t i = 0; i < pv.size(); ++i) {
      const double r = kTarget[i] - pv[i];
      dp[i] = r >= 0 ? -(1.0 - kTau) * gv[i] : kTau * gv[i];
    }
    return {tensor(dp, p.shape(), DType::Float64)};
  }
};
mistakes::Case make() {
  Tensor p = tensor(std::vector<double>{0.5, -1.2, 0.3, 1.8, -0.4, 0.9, -0.7, 0.1}, {2, 4}, DType::Float64);
  p.requires_grad_();
  std::vector<Tensor> inputs{p};
  return {"u7-pinball-loss-branch-weights-swapped",
          "quantile (pinball) loss with tau = 0.3, r = t - p, L = tau r for r >= 0 and (tau - 1) r for r < 0, elementwise on predictions p (2, 4) with fixed targets t (not checked): the backward gives each branch the other's weight, dp = -(1 - tau) g = -0.7 g where p under-predicts (r > 0) and tau g = 0.3 g where it over-predicts (r < 0), instead of dp = -tau g = -0.3 g for r > 0 and (1 - tau) g = 0.7 g for r < 0",
          inputs, [](const std::vector<Tensor>& in) { return Pinball::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
