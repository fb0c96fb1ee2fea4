// Mistake: a two-input, two-output sinusoidal embedding, out (3, 2) = [sin(w t), cos(w t)] per entry of t (3) with one learned frequency w (1) = 1.3: the frequency's gradient copies t's line and takes the inner derivative of w t as w, dw = sum_i w (g[i, 0] cos(w t_i) - g[i, 1] sin(w t_i)), where d(w t)/dw = t_i belongs, dw = sum_i t_i (g[i, 0] cos(w t_i) - g[i, 1] sin(w t_i)); dt = w (g[:, 0] cos(w t) - g[:, 1] sin(w t)) is right
// Origin: written without sight of the checker (issue 27's eighth set; the held-out half: judged once)
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct SinCosEmbed : Function<SinCosEmbed> {
  static constexpr const char* name = "sincos_embed";
  static Tensor forward(FunctionCtx& ctx, const Tensor& t, const Tensor& w) {
    ctx.save_for_backward({t, w});
    Tensor u = t * w;
    return stack({sin(u), cos(u)}, 1);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto s = ctx.saved_tensors();
    const Tensor &t = s[0], &w = s[1];
    Tensor u = t * w;
    Tensor inner = select(g, 1, 0) * cos(u) - select(g, 1, 1) * sin(u);  // d out / d u, per entry
    Tensor dt = inner * w;
    Tensor dw = sum_to(inner * w, w.shape());
    return {dt, dw};
  }
};
mistakes::Case make() {
  Generator gen(8118);
  Tensor t = randn({3}, DType::Float64, &gen);
  Tensor w = tensor({1.3}, {1}, DType::Float64);
  t.requires_grad_();
  w.requires_grad_();
  std::vector<Tensor> inputs{t, w};
  return {"u8-sincos-embedding-freq-grad-inner-factor-w",
          "a two-input, two-output sinusoidal embedding, out (3, 2) = [sin(w t), cos(w t)] per entry of t (3) with one learned frequency w (1) = 1.3: the frequency's gradient copies t's line and takes the inner derivative of w t as w, dw = sum_i w (g[i, 0] cos(w t_i) - g[i, 1] sin(w t_i)), where d(w t)/dw = t_i belongs, dw = sum_i t_i (g[i, 0] cos(w t_i) - g[i, 1] sin(w t_i)); dt = w (g[:, 0] cos(w t) - g[:, 1] sin(w t)) is right",
          inputs, [](const std::vector<Tensor>& in) { return SinCosEmbed::apply(in[0], in[1]); }};
}
const mistakes::Register reg(make);
}  // namespace
