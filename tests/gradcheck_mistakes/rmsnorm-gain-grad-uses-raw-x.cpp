// Mistake: RMSNorm with gain, y = x * r * w, r = 1 / sqrt(mean(x^2) + 1e-6) per row, x (3, 4), w (4): the gain gradient uses the raw input, dw = sum over rows of g * x, where the normalised input belongs, dw = sum over rows of g * x * r; dx = r * (g w - x r^2 mean(g w x)) is right
// Origin: written without sight of the checker (issue 27's third set; worked from)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct RmsNormGain : Function<RmsNormGain> {
  static constexpr const char* name = "rms_norm_gain";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x, const Tensor& w) {
    ctx.save_for_backward({x, w});
    const Tensor r = rsqrt(mean(x * x, {1}, true) + 1e-6);
    return x * r * w;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], w = saved[1];
    const Tensor r = rsqrt(mean(x * x, {1}, true) + 1e-6);  // (3, 1)
    const Tensor gw = g * w;
    const Tensor dx = r * (gw - x * r * r * mean(gw * x, {1}, true));
    const Tensor dw = sum(g * x, {0});
    return {dx, dw};
  }
};
mistakes::Case make() {
  Generator gen(310);
  Tensor x = randn({3, 4}, DType::Float64, &gen);
  Tensor w = randn({4}, DType::Float64, &gen);
  x.requires_grad_();
  w.requires_grad_();
  std::vector<Tensor> inputs{x, w};
  return {"rmsnorm-gain-grad-uses-raw-x",
          "RMSNorm with gain, y = x * r * w, r = 1 / sqrt(mean(x^2) + 1e-6) per row, x (3, 4), w (4): the gain gradient uses the raw input, dw = sum over rows of g * x, where the normalised input belongs, dw = sum over rows of g * x * r; dx = r * (g w - x r^2 mean(g w x)) is right",
          inputs,
          [](const std::vector<Tensor>& in) { return RmsNormGain::apply(in[0], in[1]); },
          std::vector<std::string>{"off by a varying factor", "c is the rms (root of the mean of the squares) of input0 over each group"}};
}
const mistakes::Register reg(make);
}  // namespace
