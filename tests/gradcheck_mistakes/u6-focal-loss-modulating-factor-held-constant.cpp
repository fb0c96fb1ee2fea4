// Mistake: focal loss on the target class's probability, L = -(1 - p)^2 log p elementwise with p (2, 3) in (0.2, 0.8): the backward treats the modulating factor (1 - p)^2 as a constant and differentiates only the log, dp = -g (1 - p)^2 / p, missing the term from the factor's own dependence on p (correct: dp = g (2 (1 - p) log p - (1 - p)^2 / p))
// Origin: written without sight of the checker (issue 27's sixth set; held out, judged once)
#include "case.h"
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct FocalLoss : Function<FocalLoss> {
  static constexpr const char* name = "focal_loss";
  static Tensor forward(FunctionCtx& ctx, const Tensor& p) {
    ctx.save_for_backward({p});
    std::vector<double> v = p.to_vector<double>();
    for (double& e : v) e = -(1 - e) * (1 - e) * std::log(e);
    return tensor(v, p.shape(), DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor p = ctx.saved_tensors()[0];
    const std::vector<double> pv = p.to_vector<double>(), gv = g.to_vector<double>();
    std::vector<double> dp(pv.size());
    for (size_t i = 0; i < pv.size(); ++i) {
      const double q = 1 - pv[i];
      dp[i] = -gv[i] * q * q / pv[i];  // (1 - p)^2 held constant: + g 2 (1 - p) log p is missing
    }
    return {tensor(dp, p.shape(), DType::Float64)};
  }
};
mistakes::Case make() {
  const std::vector<double> ps{0.25, 0.62, 0.41, 0.77, 0.33, 0.55};
  Tensor p = tensor(ps, {2, 3}, DType::Float64);
  p.requires_grad_();
  std::vector<Tensor> inputs{p};
  return {"u6-focal-loss-modulating-factor-held-constant",
          "Mistake: focal loss on the target class's probability, L = -(1 - p)^2 log p elementwise with p (2, 3) in "
          "(0.2, 0.8): the backward treats the modulating factor (1 - p)^2 as a constant and differentiates only the "
          "log, dp = -g (1 - p)^2 / p, missing the term from the factor's own dependence on p (correct: dp = g (2 (1 - "
          "p) log p - (1 - p)^2 / p))",
          inputs, [](const std::vector<Tensor>& in) { return FocalLoss::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
