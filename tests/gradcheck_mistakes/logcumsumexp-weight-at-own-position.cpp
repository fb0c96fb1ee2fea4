// Mistake: log-cumsum-exp along the last dim of x (2, 5), y_j = log sum_{k <= j} exp(x_k): the backward uses the weight at the input's own position for every later output, dx_i = exp(x_i - y_i) sum_{j >= i} g_j, instead of each output's own normaliser, dx_i = sum_{j >= i} g_j exp(x_i - y_j) (only the last position, i = 4, is right)
// Origin: written without sight of the checker (issue 27's fourth set; held out, judged once on gradcheck as it was then)
#include "case.h"
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>
namespace {
using namespace ropegrad;
struct LogCumSumExp : Function<LogCumSumExp> {
  static constexpr const char* name = "logcumsumexp_last";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t rows = x.size(0), n = x.size(1);
    const std::vector<double> xv = x.to_vector<double>();
    std::vector<double> yv(xv.size());
    for (int64_t r = 0; r < rows; ++r) {
      double acc = xv[r * n];
      yv[r * n] = acc;
      for (int64_t j = 1; j < n; ++j) {
        const double xj = xv[r * n + j];
        const double m = std::max(acc, xj);
        acc = m + std::log(std::exp(acc - m) + std::exp(xj - m));
        yv[r * n + j] = acc;
      }
    }
    const Tensor y = tensor(yv, {rows, n}, DType::Float64);
    ctx.save_for_backward({x, y});
    return y;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const auto saved = ctx.saved_tensors();
    const Tensor x = saved[0], y = saved[1];
    const int64_t rows = x.size(0), n = x.size(1);
    const std::vector<double> xv = x.to_vector<double>();
    const std::vector<double> yv = y.to_vector<double>();
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(xv.size(), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      double suffix = 0.0;
      for (int64_t i = n - 1; i >= 0; --i) {
        suffix += gv[r * n + i];
        dx[r * n + i] = std::exp(xv[r * n + i] - yv[r * n + i]) * suffix;
      }
    }
    return {tensor(dx, {rows, n}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(413);
  Tensor x = randn({2, 5}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"logcumsumexp-weight-at-own-position",
          "log-cumsum-exp along the last dim of x (2, 5), y_j = log sum_{k <= j} exp(x_k): the backward uses the weight at the input's own position for every later output, dx_i = exp(x_i - y_i) sum_{j >= i} g_j, instead of each output's own normaliser, dx_i = sum_{j >= i} g_j exp(x_i - y_j) (only the last position, i = 4, is right)",
          inputs,
          [](const std::vector<Tensor>& in) { return LogCumSumExp::apply(in[0]); },
          std::vector<std::string>{"the diagonal right, the coupling wrong"}};
}
const mistakes::Register reg(make);
}  // namespace
