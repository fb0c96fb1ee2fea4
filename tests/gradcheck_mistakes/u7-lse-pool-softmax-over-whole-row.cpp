// Mistake: log-sum-exp pooling along the last dim with kernel 2 and stride 2, x (2, 6) -> y (2, 3), y[r, i] = log(exp(x[r, 2i]) + exp(x[r, 2i + 1])): the backward weights each window's g by a softmax over the whole row, dx[r, j] = g[r, j / 2] exp(x[r, j] - logsumexp(x[r, :])), instead of by the softmax inside its own window, dx[r, j] = g[r, j / 2] exp(x[r, j] - y[r, j / 2]) (integer division)
// Origin: written without sight of the checker (issue 27's seventh set; the held-out half: judged once)
#include "case.h"
#include <cmath>
#include <vector>
namespace {
using namespace ropegrad;
struct LsePool : Function<LsePool> {
  static constexpr const char* name = "lse_pool";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    const int64_t rows = x.size(0), n = x.size(1), m = n / 2;
    std::vector<double> xv = x.to_vector<double>();
    std::vector<double> yv(rows * m);
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < m; ++i)
        yv[r * m + i] = std::log(std::exp(xv[r * n + 2 * i]) + std::exp(xv[r * n + 2 * i + 1]));
    ctx.save_for_backward({x});
    return tensor(yv, {rows, m}, DType::Float64);
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const int64_t rows = x.size(0), n = x.size(1), m = n / 2;
    std::vector<double> xv = x.to_vector<double>();
    std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(xv.size());
    for (int64_t r = 0; r < rows; ++r) {
      double total = 0.0;
      for (int64_t j = 0; j < n; ++j) total += std::exp(xv[r * n + j]);
      const double lse = std::log(total);
      for (int64_t j = 0; j < n; ++j) dx[r * n + j] = gv[r * m + j / 2] * std::exp(xv[r * n + j] - lse);
    }
    return {tensor(dx, x.shape(), DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(7163);
  Tensor x = randn({2, 6}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"u7-lse-pool-softmax-over-whole-row",
          "log-sum-exp pooling along the last dim with kernel 2 and stride 2, x (2, 6) -> y (2, 3), y[r, i] = log(exp(x[r, 2i]) + exp(x[r, 2i + 1])): the backward weights each window's g by a softmax over the whole row, dx[r, j] = g[r, j / 2] exp(x[r, j] - logsumexp(x[r, :])), instead of by the softmax inside its own window, dx[r, j] = g[r, j / 2] exp(x[r, j] - y[r, j / 2]) (integer division)",
          inputs, [](const std::vector<Tensor>& in) { return LsePool::apply(in[0]); }};
}
const mistakes::Register reg(make);
}  // namespace
