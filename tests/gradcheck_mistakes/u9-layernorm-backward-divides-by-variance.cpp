// Mistake: Layer normalisation without affine parameters over the last dim of x of shape [4, 6]: xhat = (x - mean) / sqrt(var + 1e-5) with the biased variance. The backward has the right bracket g - mean(g) - xhat * mean(g * xhat) (row means over dim 1) but divides it by (var + eps) instead of by sqrt(var + eps), i.e. by the variance rather than the standard deviation. The correct rule is dx = (g - mean(g) - xhat * mean(g * xhat)) / sqrt(var + eps).
// Origin: written without sight of the checker (issue 27's ninth set; the half worked from)
#include "case.h"
#include <algorithm>
#include <any>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct LayerNormNoAffine : Function<LayerNormNoAffine> {
  static constexpr const char* name = "layernorm_noaffine";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const double eps = 1e-5;
    Tensor m = mean(x, {1}, true);
    Tensor var = mean((x - m) * (x - m), {1}, true);
    Tensor xhat = (x - m) / sqrt(var + eps);
    ctx.save_for_backward({xhat, var});
    return xhat;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const double eps = 1e-5;
    const Tensor xhat = ctx.saved_tensors()[0], var = ctx.saved_tensors()[1];
    Tensor inner = g - mean(g, {1}, true) - xhat * mean(g * xhat, {1}, true);
    return {inner / (var + eps)};
  }
};
mistakes::Case make() {
  Generator gen(9103);
  Tensor x = randn({4, 6}, DType::Float64, &gen) * 3.0 + 1.0;
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u9-layernorm-backward-divides-by-variance", "Layer normalisation without affine parameters over the last dim of x of shape [4, 6]: xhat = (x - mean) / sqrt(var + 1e-5) with the biased variance. The backward has the right bracket g - mean(g) - xhat * mean(g * xhat) (row means over dim 1) but divides it by (var + eps) instead of by sqrt(var + eps), i.e. by the variance rather than the standard deviation. The correct rule is dx = (g - mean(g) - xhat * mean(g * xhat)) / sqrt(var + eps).", inputs, [](const std::vector<Tensor>& in) { return LayerNormNoAffine::apply(in[0]); },
          std::vector<std::string>{"off by a varying factor", "c is 1 / the standard deviation"}};
}
const mistakes::Register reg(make);
}  // namespace
