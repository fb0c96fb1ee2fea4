// Mistake: soft thresholding (shrinkage) y = sign(x) max(|x| - 0.5, 0) elementwise on x (2, 4): the backward keeps the forward's sign in the derivative, dx = g sign(x) where |x| > 0.5, instead of dx = g where |x| > 0.5 (0 inside the dead zone); the positive entries are right, the negative active ones (x = -1.7, -0.8, -1.1) get -g
// Origin: written without sight of the checker (issue 27's seventh set; the half worked from)
#include "case.h"
#include <algorithm>
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
constexpr double kLambda = 0.5;
struct SoftThreshold : Function<SoftThreshold> {
  static constexpr const char* name = "soft_threshold";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    std::vector<double> xv = x.to_vector<double>();
    std::vector<double> yv(xv.size());
    for (size_t i = 0; i < xv.size(); ++i) {
      const double s = xv[i] > 0 ? 1.0 : (xv[i] < 0 ? -1.0 : 0.0);
      yv[i] = s * std::max(std::abs(xv[i]) - kLambda, 0.0);
    }
    return tensor(yv, x.shape(), DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    std::vector<double> xv = x.to_vector<double>();
    std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(xv.size(), 0.0);
    for (size_t i = 0; i < xv.size(); ++i) {
      const double s = xv[i] > 0 ? 1.0 : (xv[i] < 0 ? -1.0 : 0.0);
      if (std::abs(xv[i]) > kLambda) dx[i] = gv[i] * s;
    }
    return {tensor(dx, x.shape(), DType::Float64)};
  }
};
mistakes::Case make() {
  Tensor x = tensor(std::vector<double>{1.3, -0.2, -1.7, 0.9, 0.3, -0.8, 2.1, -1.1}, {2, 4}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u7-soft-threshold-grad-times-sign",
          "soft thresholding (shrinkage) y = sign(x) max(|x| - 0.5, 0) elementwise on x (2, 4): the backward keeps the forward's sign in the derivative, dx = g sign(x) where |x| > 0.5, instead of dx = g where |x| > 0.5 (0 inside the dead zone); the positive entries are right, the negative active ones (x = -1.7, -0.8, -1.1) get -g",
          inputs, [](const std::vector<Tensor>& in) { return SoftThreshold::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
