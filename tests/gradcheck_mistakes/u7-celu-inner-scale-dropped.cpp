// Mistake: CELU with alpha = 2, y = x for x > 0 and 2 (exp(x / 2) - 1) otherwise, x (2, 4): on the negative branch the backward forgets the chain rule's 1 / alpha of the inner x / 2, dx = g 2 exp(x / 2), instead of dx = g exp(x / 2) (twice the truth there); the positive entries (dx = g) are right
// Origin: written without sight of the checker (issue 27's seventh set; the held-out half: judged once)
#include "case.h"
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
constexpr double kAlpha = 2.0;
struct Celu : Function<Celu> {
  static constexpr const char* name = "celu";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    std::vector<double> xv = x.to_vector<double>();
    std::vector<double> yv(xv.size());
    for (size_t i = 0; i < xv.size(); ++i)
      yv[i] = xv[i] > 0 ? xv[i] : kAlpha * (std::exp(xv[i] / kAlpha) - 1.0);
    return tensor(yv, x.shape(), DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    std::vector<double> xv = x.to_vector<double>();
    std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(xv.size());
    for (size_t i = 0; i < xv.size(); ++i)
      dx[i] = xv[i] > 0 ? gv[i] : gv[i] * kAlpha * std::exp(xv[i] / kAlpha);
    return {tensor(dx, x.shape(), DType::Float64)};
  }
};
mistakes::Case make() {
  Tensor x = tensor(std::vector<double>{-1.4, 0.8, -0.3, 1.9, -2.2, 0.5, -0.9, 1.2}, {2, 4}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u7-celu-inner-scale-dropped",
          "CELU with alpha = 2, y = x for x > 0 and 2 (exp(x / 2) - 1) otherwise, x (2, 4): on the negative branch the backward forgets the chain rule's 1 / alpha of the inner x / 2, dx = g 2 exp(x / 2), instead of dx = g exp(x / 2) (twice the truth there); the positive entries (dx = g) are right",
          inputs, [](const std::vector<Tensor>& in) { return Celu::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
