// Mistake: average pooling along the last dim with kernel 3 and stride 1, x (2, 6) -> y (2, 4), y[r, i] = (x[r, i] + x[r, i + 1] + x[r, i + 2]) / 3: the backward's loop over the window offsets stops one short (k < 2), so each window spreads g[r, i] / 3 to x[r, i] and x[r, i + 1] only and never to its last element x[r, i + 2] (correct: dx[r, i + k] += g[r, i] / 3 for k = 0, 1, 2)
// Origin: written without sight of the checker (issue 27's third set; worked from)
#include "case.h"
#include <cstdint>
#include <vector>
namespace {
using namespace ropegrad;
constexpr int64_t kKernel = 3;
struct AvgPool3 : Function<AvgPool3> {
  static constexpr const char* name = "avg_pool3";
  static Tensor forward(FunctionCtx& ctx, const Tensor& x) {
    ctx.save_for_backward({x});
    const int64_t out = x.size(1) - kKernel + 1;
    return (narrow(x, 1, 0, out) + narrow(x, 1, 1, out) + narrow(x, 1, 2, out)) / 3.0;
  }
  static Grads backward(FunctionCtx& ctx, const Tensor& g) {
    const Tensor x = ctx.saved_tensors()[0];
    const int64_t rows = x.size(0);
    const int64_t n = x.size(1);
    const int64_t out = n - kKernel + 1;
    const std::vector<double> gv = g.to_vector<double>();
    std::vector<double> dx(static_cast<size_t>(rows * n), 0.0);
    for (int64_t r = 0; r < rows; ++r) {
      for (int64_t i = 0; i < out; ++i) {
        for (int64_t k = 0; k < kKernel - 1; ++k) {
          dx[r * n + i + k] += gv[r * out + i] / static_cast<double>(kKernel);
        }
      }
    }
    return {tensor(dx, {rows, n}, DType::Float64)};
  }
};
mistakes::Case make() {
  Generator gen(304);
  Tensor x = randn({2, 6}, DType::Float64, &gen);
  x.requires_grad_();
  std::vector<Tensor> inputs{x};
  return {"avgpool-window-last-offset-skipped",
          "average pooling along the last dim with kernel 3 and stride 1, x (2, 6) -> y (2, 4), y[r, i] = (x[r, i] + x[r, i + 1] + x[r, i + 2]) / 3: the backward's loop over the window offsets stops one short (k < 2), so each window spreads g[r, i] / 3 to x[r, i] and x[r, i + 1] only and never to its last element x[r, i + 2] (correct: dx[r, i + k] += g[r, i] / 3 for k = 0, 1, 2)",
          inputs,
          [](const std::vector<Tensor>& in) { return AvgPool3::apply(in[0]); },
          std::vector<std::string>{"entries missing", "(d output[0, 0] / d input0[0, 2], d output[0, 1] / d input0[0, 3]", "0.3333 at each"}};
}
const mistakes::Register reg(make);
}  // namespace
