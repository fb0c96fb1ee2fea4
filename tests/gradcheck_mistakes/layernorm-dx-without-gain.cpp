// Mistake: layer norm with a gain, y = gamma * xhat, xhat = (x - mean) / sqrt(var + eps) per row: the backward for x uses the incoming gradient g where it needs g * gamma, dx = rstd (g - mean(g) - xhat mean(g xhat)) instead of the same formula with g gamma in place of g; dgamma = sum over rows of g xhat is right
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct LayerNormGain : Function<LayerNormGain> {
  static constexpr const char* name = "layer_norm_gain";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& gamma) {
    const Tensor d = x - mean(x, {-1}, true);
    const Tensor rstd = rsqrt(mean(d * d, {-1}, true) + 1e-5);
    const Tensor xhat = d * rstd;
    ctx.save_for_backward({xhat, rstd, gamma});
    return xhat * gamma;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor xhat = saved[0], rstd = saved[1];
    const Tensor dxhat = g;
    const Tensor dx = rstd * (dxhat - mean(dxhat, {-1}, true) - xhat * mean(dxhat * xhat, {-1}, true));
    const Tensor dgamma = sum(g * xhat, {0});
    return {dx, dgamma};
  }
};
mistakes::Case make() {
  Generator gen(4242);
  Tensor x = randn({3, 5}, DType::Float64, &gen);
  Tensor gamma = tensor(std::vector<double>{1.4, -0.6, 0.8, 2.1, 0.3}, {5}, DType::Float64);
  x.requires_grad_();
  gamma.requires_grad_();
  std::vector<Tensor> inputs{x, gamma};
  return {"layernorm-dx-without-gain",
          "layer norm with a gain, y = gamma * xhat, xhat = (x - mean) / sqrt(var + eps) per row: the backward for x uses the incoming gradient g where it needs g * gamma, dx = rstd (g - mean(g) - xhat mean(g xhat)) instead of the same formula with g gamma in place of g; dgamma = sum over rows of g xhat is right",
          inputs,
          [](const std::vector<Tensor>& in) { return LayerNormGain::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
