// Mistake: layer norm's backward forgets that the mean depends on x: dx = rstd * (g - xhat * mean(g * xhat)) without the - mean(g) term (correct: rstd * (g - mean(g) - xhat * mean(g * xhat)) per row)
#include "case.h"
#include <any>
#include <cmath>
#include <limits>
namespace {
using namespace ropegrad;
struct LayerNormNoAffine : Function<LayerNormNoAffine> {
  static constexpr const char* name = "layer_norm_plain";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    Tensor mu = mean(x, {-1}, true);
    Tensor xc = x - mu;
    Tensor var = mean(xc * xc, {-1}, true);
    Tensor rstd = rsqrt(var + 1e-5);
    Tensor xhat = xc * rstd;
    ctx.save_for_backward({xhat, rstd});
    return xhat;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor xhat = saved[0], rstd = saved[1];
    return {rstd * (g - xhat * mean(g * xhat, {-1}, true))};
  }
};
mistakes::Case make() {
  Generator gen(103);
  Tensor x = randn({3, 6}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"layernorm-missing-mean-term",
          "layer norm's backward forgets that the mean depends on x: dx = rstd * (g - xhat * mean(g * xhat)) without the - mean(g) term (correct: rstd * (g - mean(g) - xhat * mean(g * xhat)) per row)",
          inputs,
          [](const std::vector<Tensor>& in) { return LayerNormNoAffine::apply(in[0]); },
          std::vector<std::string>{"off by an added term", "per row"}};
}
const mistakes::Register reg(make);
}  // namespace
