// Mistake: cumulative product along the last dim, y_j = prod_{k<=j} x_k: the backward sums over the wrong side, dx_i = sum_{j<=i} g_j y_j / x_i, instead of over the outputs that x_i feeds, dx_i = sum_{j>=i} g_j y_j / x_i
#include "case.h"
#include <vector>
namespace {
using namespace ropegrad;
struct CumProd : Function<CumProd> {
  static constexpr const char* name = "cumprod";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x_in) {
    const Tensor x = contiguous(x_in);
    Tensor y = zeros(x.shape(), DType::Float64);
    const int64_t n = x.size(-1), rows = x.numel() / n;
    const double* xp = x.data_ptr<double>();
    double* yp = y.data_ptr<double>();
    for (int64_t r = 0; r < rows; ++r) {
      double acc = 1.0;
      for (int64_t j = 0; j < n; ++j) {
        acc *= xp[r * n + j];
        yp[r * n + j] = acc;
      }
    }
    ctx.save_for_backward({x, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& grad) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], y = saved[1];
    const Tensor g = contiguous(grad);
    Tensor dx = zeros(x.shape(), DType::Float64);
    const int64_t n = x.size(-1), rows = x.numel() / n;
    const double* xp = x.data_ptr<double>();
    const double* yp = y.data_ptr<double>();
    const double* gp = g.data_ptr<double>();
    double* dp = dx.data_ptr<double>();
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < n; ++i) {
        double s = 0;
        for (int64_t j = 0; j <= i; ++j) s += gp[r * n + j] * yp[r * n + j];
        dp[r * n + i] = s / xp[r * n + i];
      }
    }
    return {dx};
  }
};
mistakes::Case make() {
  // No zeros (the rule divides by x), mixed signs and sizes.
  Tensor x = tensor(std::vector<double>{1.3, -0.7, 0.9, 1.6, -1.2, 0.55, 2.0, -0.8}, {2, 4}, DType::Float64);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"cumprod-backward-wrong-direction",
          "cumulative product along the last dim, y_j = prod_{k<=j} x_k: the backward sums over the wrong side, dx_i = sum_{j<=i} g_j y_j / x_i, instead of over the outputs that x_i feeds, dx_i = sum_{j>=i} g_j y_j / x_i",
          inputs,
          [](const std::vector<Tensor>& in) { return CumProd::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
