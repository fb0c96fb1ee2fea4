// Mistake: a two-output function, Cartesian to polar coordinates per row, in (3, 2) = (x, y) -> out (3, 2) = (r, theta), r = sqrt(x^2 + y^2), theta = atan2(y, x): the angle's part of the backward puts the minus sign on the wrong partial, dtheta/dx = y / r^2 and dtheta/dy = -x / r^2, so dx = g_r x / r + g_theta y / r^2 and dy = g_r y / r - g_theta x / r^2 (correct: dx = g_r x / r - g_theta y / r^2, dy = g_r y / r + g_theta x / r^2); the radius's part is right
// Origin: written without sight of the checker (issue 27's fifth set; held out, judged once)
#include "case.h"
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct ToPolar : Function<ToPolar> {
  static constexpr const char* name = "to_polar";
  static Tensor forward(FunctionCtx& ctx, const Tensor& p) {
    const int64_t rows = p.size(0);
    const std::vector<double> pv = p.to_vector<double>();
    std::vector<double> out(pv.size());
    for (int64_t i = 0; i < rows; ++i) {
      const double x = pv[2 * i], y = pv[2 * i + 1];
      out[2 * i] = std::sqrt(x * x + y * y);
      out[2 * i + 1] = std::atan2(y, x);
    }
    ctx.save_for_backward({p});
    return tensor(out, {rows, 2}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor p = ctx.saved_tensors()[0];
    const int64_t rows = p.size(0);
    const std::vector<double> pv = p.to_vector<double>();
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dp(pv.size());
    for (int64_t i = 0; i < rows; ++i) {
      const double x = pv[2 * i], y = pv[2 * i + 1];
      const double r2 = x * x + y * y, r = std::sqrt(r2);
      const double gr = gv[2 * i], gt = gv[2 * i + 1];
      dp[2 * i] = gr * x / r + gt * y / r2;
      dp[2 * i + 1] = gr * y / r - gt * x / r2;
    }
    return {tensor(dp, {rows, 2}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(5110);
  Tensor p = tensor({1.2, 0.5,  -0.4, 1.1,  0.7, -1.3}, {3, 2}, DType::Float64);
  p.requires_grad_();
  std::vector<Tensor> inputs{p};
  return {"u5-polar-angle-grad-signs-swapped", "a two-output function, Cartesian to polar coordinates per row, in (3, 2) = (x, y) -> out (3, 2) = (r, theta), r = sqrt(x^2 + y^2), theta = atan2(y, x): the angle's part of the backward puts the minus sign on the wrong partial, dtheta/dx = y / r^2 and dtheta/dy = -x / r^2, so dx = g_r x / r + g_theta y / r^2 and dy = g_r y / r - g_theta x / r^2 (correct: dx = g_r x / r - g_theta y / r^2, dy = g_r y / r + g_theta x / r^2); the radius's part is right", inputs,
          [](const std::vector<Tensor>& in) { return ToPolar::apply(in[0]); },
          std::vector<std::string>{"only some entries wrong", "there each is -1 x the numerical one (the sign flipped)"}};
}
const mistakes::Register reg(make);
}  // namespace
