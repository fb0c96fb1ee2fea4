// Mistake: layer norm without affine and with eps = 0.1, y = (x - mean) / sqrt(var + 0.1) per row of x (3, 4): the backward recomputes the statistics from the saved x and leaves eps out, r = 1 / sqrt(var), xhat = (x - mean) r, dx = r (g - mean(g) - xhat mean(g xhat)), the rule of the eps-free layer norm, instead of the same formula with r = 1 / sqrt(var + 0.1) and xhat = y, the ones the forward used
// Origin: written without sight of the checker (issue 27's seventh set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
constexpr double kEps = 0.1;
struct LayerNormEps : Function<LayerNormEps> {
  static constexpr const char* name = "layer_norm_eps";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    Tensor xc = x - mean(x, {1}, true);
    Tensor var = mean(xc * xc, {1}, true);
    return xc * rsqrt(var + kEps);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    Tensor xc = x - mean(x, {1}, true);
    Tensor var = mean(xc * xc, {1}, true);
    Tensor r = rsqrt(var);  // eps forgotten here
    Tensor xhat = xc * r;
    Tensor dx = r * (g - mean(g, {1}, true) - xhat * mean(g * xhat, {1}, true));
    return {dx};
  }
};
mistakes::Case make() {
  Generator gen(7052);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u7-layernorm-backward-rstd-without-eps",
          "layer norm without affine and with eps = 0.1, y = (x - mean) / sqrt(var + 0.1) per row of x (3, 4): the backward recomputes the statistics from the saved x and leaves eps out, r = 1 / sqrt(var), xhat = (x - mean) r, dx = r (g - mean(g) - xhat mean(g xhat)), the rule of the eps-free layer norm, instead of the same formula with r = 1 / sqrt(var + 0.1) and xhat = y, the ones the forward used",
          inputs, [](const std::vector<Tensor>& in) { return LayerNormEps::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
